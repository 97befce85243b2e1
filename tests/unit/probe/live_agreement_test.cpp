// The probe on a captured tree agrees with the probe run live on the machine it came from:
// tests/fixtures/rxe-vm holds both the tree and probe-live.json (`fabscope probe --json` run in
// the VM at the same moment). Counters moved between the two reads and live-only sections (verbs,
// IPv4) exist on one side only, so the comparison covers the structural facts.
#include <gtest/gtest.h>

#include <fstream>

#include "core/json.hpp"
#include "probe/probe.hpp"
#include "probe/rdma.hpp"
#include "support/fixtures.hpp"

using namespace fabscope;
using fabscope::testing::fixture;

namespace {
struct Both {
  NodeInfo captured, live;
  Both() {
    captured = probe::collect(core::Root(fixture("rxe-vm")), probe::Options{false});
    std::ifstream in(fixture("rxe-vm") / "probe-live.json");
    live = json::parse(in).get<NodeInfo>();
  }
};
}  // namespace

TEST(LiveAgreement, SameRdmaPortsStatesRatesAndNetdevs) {
  Both b;
  ASSERT_EQ(b.captured.rdma_devices.size(), b.live.rdma_devices.size());
  for (std::size_t i = 0; i < b.live.rdma_devices.size(); ++i) {
    const auto& c = b.captured.rdma_devices[i];
    const auto& l = b.live.rdma_devices[i];
    EXPECT_EQ(c.name, l.name);
    ASSERT_EQ(c.ports.size(), l.ports.size());
    for (std::size_t p = 0; p < l.ports.size(); ++p) {
      EXPECT_EQ(c.ports[p].state, l.ports[p].state) << c.name;
      EXPECT_EQ(c.ports[p].phys_state, l.ports[p].phys_state) << c.name;
      EXPECT_EQ(c.ports[p].rate_gbps, l.ports[p].rate_gbps) << c.name;
      EXPECT_EQ(c.ports[p].netdev, l.ports[p].netdev) << c.name;
      EXPECT_EQ(c.ports[p].active_mtu, l.ports[p].active_mtu) << c.name;
    }
  }
}

TEST(LiveAgreement, SameGidTables) {
  Both b;
  for (std::size_t i = 0; i < b.live.rdma_devices.size(); ++i) {
    const auto& c = b.captured.rdma_devices[i].ports.at(0).gids;
    const auto& l = b.live.rdma_devices[i].ports.at(0).gids;
    ASSERT_EQ(c.size(), l.size());
    for (std::size_t g = 0; g < l.size(); ++g) {
      EXPECT_EQ(c[g].index, l[g].index);
      EXPECT_EQ(c[g].gid, l[g].gid);
      EXPECT_EQ(c[g].type, l[g].type);
      EXPECT_EQ(c[g].netdev, l[g].netdev);
    }
  }
}

TEST(LiveAgreement, SameNetdevsAndTheRdmaPortsTheyCarry) {
  Both b;
  ASSERT_EQ(b.captured.netdevs.size(), b.live.netdevs.size());
  for (std::size_t i = 0; i < b.live.netdevs.size(); ++i) {
    EXPECT_EQ(b.captured.netdevs[i].name, b.live.netdevs[i].name);
    EXPECT_EQ(b.captured.netdevs[i].mtu, b.live.netdevs[i].mtu);
    EXPECT_EQ(b.captured.netdevs[i].rdma_ports, b.live.netdevs[i].rdma_ports);
  }
}

TEST(LiveAgreement, SameModulesAndMemlock) {
  Both b;
  EXPECT_EQ(b.captured.kernel.modules, b.live.kernel.modules);
  EXPECT_EQ(b.captured.kernel.memlock_soft_bytes, b.live.kernel.memlock_soft_bytes);
}

TEST(VerbsActiveMtu, TakenFromTheLiveVerbsSection) {
  // The live probe's verbs section (libibverbs in the VM): active_mtu 4096 on both rxe ports.
  Both b;
  ASSERT_TRUE(b.live.verbs);
  auto devices = b.captured.rdma_devices;
  for (auto& d : devices) d.ports.at(0).active_mtu.reset();
  probe::apply_verbs_active_mtu(devices, *b.live.verbs);
  EXPECT_EQ(devices.at(0).ports.at(0).active_mtu, 4096);
  EXPECT_EQ(devices.at(1).ports.at(0).active_mtu, 4096);
}

TEST(VerbsActiveMtu, UnavailableVerbsChangesNothing) {
  Both b;
  auto devices = b.captured.rdma_devices;
  VerbsInfo none;
  probe::apply_verbs_active_mtu(devices, none);
  EXPECT_EQ(devices.at(0).ports.at(0).active_mtu, 4096);  // derived from veth0's MTU 9000
}

TEST(VerbsActiveMtu, InfinibandPortGetsItsMtuOnlyFromVerbs) {
  std::vector<RdmaDevice> devices(1);
  devices[0].name = "mlx5_0";
  devices[0].ports.resize(1);
  devices[0].ports[0].port = 1;
  devices[0].ports[0].link_layer = "InfiniBand";
  VerbsInfo v;
  v.available = true;
  v.devices.resize(1);
  v.devices[0].name = "mlx5_0";
  v.devices[0].ports.resize(1);
  v.devices[0].ports[0].port = 1;
  v.devices[0].ports[0].active_mtu = 4096;
  probe::apply_verbs_active_mtu(devices, v);
  EXPECT_EQ(devices[0].ports[0].active_mtu, 4096);
}
