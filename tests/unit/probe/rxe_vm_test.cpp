// The probe on a real Soft-RoCE capture (tests/fixtures/rxe-vm: rdma_rxe over a veth pair,
// Linux 6.1), beside what the live probe and libibverbs reported in the same VM at that moment.
#include <gtest/gtest.h>

#include <fstream>

#include "core/node_info.hpp"
#include "probe/probe.hpp"
#include "probe/rdma.hpp"
#include "support/fixtures.hpp"

using namespace fabscope;

namespace {

NodeInfo captured() {
  return probe::collect(core::Root(fabscope::testing::fixture("rxe-vm")), probe::Options{false});
}

NodeInfo live() {
  std::ifstream in(fabscope::testing::fixture("rxe-vm") / "probe-live.json");
  return json::parse(in).get<NodeInfo>();
}

const RdmaPort& port1(const NodeInfo& n, const std::string& dev) {
  const RdmaDevice* d = n.find_rdma(dev);
  if (!d || d->ports.empty()) throw std::runtime_error("no port 1 on " + dev);
  return d->ports.front();
}

}  // namespace

TEST(RxeVm, BothRxePortsAreActiveRoceOnTheirVeth) {
  NodeInfo n = captured();
  for (auto [dev, netdev] : {std::pair{"rxe0", "veth0"}, std::pair{"rxe1", "veth1"}}) {
    const RdmaPort& p = port1(n, dev);
    EXPECT_EQ(p.state, "ACTIVE") << dev;
    EXPECT_EQ(p.phys_state, "LinkUp") << dev;
    EXPECT_EQ(p.link_layer, "Ethernet") << dev;
    EXPECT_EQ(p.netdev, netdev) << dev;
  }
}

TEST(RxeVm, SoftwareDevicesHaveNoPciAddress) {
  NodeInfo n = captured();
  EXPECT_EQ(n.find_rdma("rxe0")->pci_address, "");
  const Netdev* veth = n.find_netdev("veth0");
  ASSERT_NE(veth, nullptr);
  EXPECT_TRUE(veth->is_virtual);
}

TEST(RxeVm, PreferredGidIsTheIpv4MappedRoceV2Entry) {
  NodeInfo n = captured();
  const RdmaPort& p = port1(n, "rxe0");
  auto idx = probe::preferred_roce_v2_gid(p);
  ASSERT_TRUE(idx);
  const GidEntry* g = nullptr;
  for (const auto& e : p.gids)
    if (e.index == *idx) g = &e;
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(g->ipv4_mapped);
  EXPECT_EQ(g->type, "RoCE v2");
}

TEST(RxeVm, TrafficLeftHwCountersNonZero) {
  NodeInfo n = captured();
  EXPECT_GT(port1(n, "rxe0").hw_counters.at("sent_pkts"), 0u);
  EXPECT_GT(port1(n, "rxe1").hw_counters.at("rcvd_pkts"), 0u);
}

TEST(RxeVm, CapturedSysfsAgreesWithTheLiveProbe) {
  NodeInfo cap = captured(), run = live();
  for (const char* dev : {"rxe0", "rxe1"}) {
    const RdmaPort& a = port1(cap, dev);
    const RdmaPort& b = port1(run, dev);
    EXPECT_EQ(a.state, b.state) << dev;
    EXPECT_EQ(a.active_mtu, b.active_mtu) << dev;
    EXPECT_EQ(a.rate_gbps, b.rate_gbps) << dev;
    ASSERT_EQ(a.gids.size(), b.gids.size()) << dev;
    for (std::size_t i = 0; i < a.gids.size(); ++i) EXPECT_EQ(a.gids[i].gid, b.gids[i].gid) << dev;
  }
}

TEST(RxeVm, LiveVerbsAgreeWithCapturedSysfs) {
  NodeInfo cap = captured(), run = live();
  ASSERT_TRUE(run.verbs && run.verbs->available);
  for (const char* dev : {"rxe0", "rxe1"}) {
    const VerbsDevice* v = run.verbs->find(dev);
    ASSERT_NE(v, nullptr) << dev;
    ASSERT_FALSE(v->ports.empty());
    const VerbsPort& vp = v->ports.front();
    const RdmaPort& sp = port1(cap, dev);
    EXPECT_EQ(vp.state, sp.state) << dev;
    EXPECT_EQ(vp.phys_state, sp.phys_state) << dev;
    EXPECT_EQ(vp.active_mtu, sp.active_mtu) << dev;
    EXPECT_EQ(vp.rate_gbps, sp.rate_gbps) << dev;
    EXPECT_EQ(v->node_guid, cap.find_rdma(dev)->node_guid) << dev;
    ASSERT_EQ(vp.gids.size(), sp.gids.size()) << dev;
    for (std::size_t i = 0; i < vp.gids.size(); ++i) {
      EXPECT_EQ(vp.gids[i].gid, sp.gids[i].gid) << dev;
      EXPECT_EQ(vp.gids[i].type, sp.gids[i].type) << dev;
      EXPECT_EQ(vp.gids[i].netdev, sp.gids[i].netdev) << dev;
    }
  }
}
