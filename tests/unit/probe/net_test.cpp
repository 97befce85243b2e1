// Netdev collector: sys/class/net of the 2xH200 capture (virtio, ifb, lo) and of the procfs
// capture (a real directory with a dangling device link).
#include "probe/net.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include "support/fixtures.hpp"
#include "test_util.hpp"

using namespace fabscope;
using fabscope::testing::fixture;
using fabscope::testing::has_note_containing;
using fabscope::testing::TempDir;
using fabscope::testing::write_file;

namespace {
const Netdev& find(const std::vector<Netdev>& v, const std::string& name) {
  for (const auto& d : v)
    if (d.name == name) return d;
  throw std::runtime_error("no netdev " + name);
}
}  // namespace

TEST(CollectNetdevs, ReadsEveryInterfaceOfTheH200Node) {
  std::vector<std::string> notes;
  auto net = probe::collect_netdevs(core::Root(fixture("h200x2-node")), notes);
  ASSERT_EQ(net.size(), 4u);
  const auto& eth0 = find(net, "eth0");
  EXPECT_EQ(eth0.mtu, 1400);
  EXPECT_EQ(eth0.operstate, "up");
  EXPECT_EQ(eth0.type, 1);
  EXPECT_FALSE(eth0.is_virtual);
}

TEST(CollectNetdevs, VirtioNetdevMapsToItsPciFunction) {
  // eth0/device -> ../../../virtio2, below 0000:00:03.0.
  std::vector<std::string> notes;
  auto net = probe::collect_netdevs(core::Root(fixture("h200x2-node")), notes);
  EXPECT_EQ(find(net, "eth0").pci_address, "0000:00:03.0");
}

TEST(CollectNetdevs, InterfacesWithoutDeviceAreVirtual) {
  std::vector<std::string> notes;
  auto net = probe::collect_netdevs(core::Root(fixture("h200x2-node")), notes);
  EXPECT_TRUE(find(net, "lo").is_virtual);
  EXPECT_TRUE(find(net, "ifb0").is_virtual);
  EXPECT_EQ(find(net, "lo").pci_address, "");
  EXPECT_EQ(find(net, "lo").type, 772);
}

TEST(CollectNetdevs, UnknownSpeedIsNull) {
  // The virtio eth0 reports -1.
  std::vector<std::string> notes;
  auto net = probe::collect_netdevs(core::Root(fixture("h200x2-node")), notes);
  EXPECT_FALSE(find(net, "eth0").speed_mbps);
}

TEST(CollectNetdevs, UnsignedSpeedUnknownIsNull) {
  TempDir t;
  fabscope::testing::copy_tree(fixture("h200x2-node"), t.path());
  write_file(t.path(), "sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0/speed", "4294967295\n");
  std::vector<std::string> notes;
  auto net = probe::collect_netdevs(core::Root(t.path()), notes);
  EXPECT_FALSE(find(net, "eth0").speed_mbps);
}

TEST(CollectNetdevs, DanglingDeviceLinkStillNamesThePciFunction) {
  TempDir t;
  fabscope::testing::unpack_ttar(fixture("procfs-infiniband/sys-class-infiniband-and-net.ttar"), t.path());
  std::vector<std::string> notes;
  auto net = probe::collect_netdevs(core::Root(t.path()), notes);
  const auto& eth0 = find(net, "eth0");
  EXPECT_EQ(eth0.pci_address, "0000:00:1f.6");
  EXPECT_EQ(eth0.speed_mbps, 1000);
  EXPECT_EQ(eth0.address, "01:01:01:01:01:01");
}

TEST(CollectNetdevs, GarbageMtuIsUnknownWithNote) {
  TempDir t;
  fabscope::testing::copy_tree(fixture("h200x2-node"), t.path());
  write_file(t.path(), "sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0/mtu", "N/A\n");
  std::vector<std::string> notes;
  auto net = probe::collect_netdevs(core::Root(t.path()), notes);
  EXPECT_FALSE(find(net, "eth0").mtu);
  EXPECT_TRUE(has_note_containing(notes, "eth0/mtu"));
}

TEST(Ipv4WithPrefix, WritesAddressAndPrefixLength) {
  EXPECT_EQ(probe::ipv4_with_prefix(htonl(0x0a090001), htonl(0xffffff00)), "10.9.0.1/24");
  EXPECT_EQ(probe::ipv4_with_prefix(htonl(0x7f000001), htonl(0xff000000)), "127.0.0.1/8");
  EXPECT_EQ(probe::ipv4_with_prefix(htonl(0xc0a80101), htonl(0xffffffff)), "192.168.1.1/32");
}

TEST(Ipv4WithPrefix, NonContiguousMaskIsRejected) {
  EXPECT_EQ(probe::ipv4_with_prefix(htonl(0x0a000001), htonl(0xff00ff00)), "");
}

TEST(FillIpv4Live, LoopbackCarries127001) {
  std::vector<Netdev> net(1);
  net[0].name = "lo";
  probe::fill_ipv4_live(net);
  if (net[0].ipv4.empty()) GTEST_SKIP() << "this machine's lo has no IPv4 address";
  EXPECT_EQ(net[0].ipv4.front(), "127.0.0.1/8");
}

TEST(LinkRdmaPorts, NetdevListsThePortsItCarries) {
  std::vector<RdmaDevice> rdma(1);
  rdma[0].name = "mlx5_0";
  rdma[0].ports.resize(1);
  rdma[0].ports[0].port = 1;
  rdma[0].ports[0].netdev = "eth0";
  std::vector<Netdev> net(2);
  net[0].name = "eth0";
  net[1].name = "lo";
  probe::link_rdma_ports(rdma, net);
  EXPECT_EQ(net[0].rdma_ports, (std::vector<std::string>{"mlx5_0:1"}));
  EXPECT_TRUE(net[1].rdma_ports.empty());
}
