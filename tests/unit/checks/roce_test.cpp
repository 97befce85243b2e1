// roce.*: each test changes one value of a healthy RoCE node (node_builders.hpp).
#include <gtest/gtest.h>

#include "checks/families.hpp"
#include "node_builders.hpp"

using namespace fabscope;
using namespace fabscope::testing;

TEST(RoceCheck, HealthyNodeHasNoFindings) { EXPECT_TRUE(checks::check_roce(healthy_roce_node()).empty()); }

TEST(RoceCheck, InfiniBandPortsAreNotJudged) {
  NodeInfo n = healthy_ib_node();
  Netdev ipoib;  // IPoIB in datagram mode: MTU 2044 is normal there
  ipoib.name = "ib0";
  ipoib.mtu = 2044;
  n.netdevs.push_back(ipoib);
  port0(n, "mlx5_0").netdev = "ib0";
  EXPECT_TRUE(checks::check_roce(n).empty());
}

TEST(RoceCheck, PortWithOnlyRoceV1Gids_Warns) {
  NodeInfo n = healthy_roce_node();
  for (auto& g : port0(n, "mlx5_1").gids) g.type = "IB/RoCE v1";
  auto fs = checks::check_roce(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "roce.no_v2_gid");
  EXPECT_EQ(fs[0].subject, "mlx5_1:1");
  EXPECT_NE(fs[0].evidence.find("gid[3]=\"IB/RoCE v1\"(ipv4)"), std::string::npos) << fs[0].evidence;
}

TEST(RoceCheck, GidTableWithoutTypesIsNotJudged) {
  NodeInfo n = healthy_roce_node();
  for (auto& g : port0(n, "mlx5_1").gids) g.type = "";
  EXPECT_TRUE(checks::check_roce(n).empty());
  port0(n, "mlx5_1").gids.clear();
  EXPECT_TRUE(checks::check_roce(n).empty());
}

TEST(RoceCheck, NoIpv4MappedV2Gid_Warns) {
  NodeInfo n = healthy_roce_node();
  auto& gids = port0(n, "mlx5_0").gids;
  gids.resize(2);  // the netdev lost its IPv4 address: only link-local entries left
  auto fs = checks::check_roce(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "roce.no_ipv4_gid");
  EXPECT_NE(fs[0].remedy.find("ip addr add"), std::string::npos);
}

TEST(RoceCheck, Ipv4GidAtDifferentIndexes_Warns) {
  // An extra IPv6 address on eth3 shifts its IPv4 entries by two.
  NodeInfo n = healthy_roce_node();
  auto& gids = port0(n, "mlx5_1").gids;
  gids[2].index = 4;
  gids[3].index = 5;
  auto fs = checks::check_roce(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "roce.gid_index_mismatch");
  EXPECT_EQ(fs[0].subject, "node");
  EXPECT_EQ(fs[0].evidence, "ipv4 RoCE v2 gid index: mlx5_0:1=3 mlx5_1:1=5");
}

TEST(RoceCheck, NetdevMtu1500_IsLowAndNamesTheRoceMtuItAllows) {
  NodeInfo n = healthy_roce_node();
  netdev(n, "eth2").mtu = 1500;
  port0(n, "mlx5_0").active_mtu = 1024;  // what the kernel derives from 1500
  auto fs = checks::check_roce(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "roce.mtu_low");
  EXPECT_NE(fs[0].message.find("RoCE MTU of 1024"), std::string::npos) << fs[0].message;
  EXPECT_EQ(fs[0].evidence, "sys/class/net/eth2/mtu=1500 active_mtu=1024");
}

TEST(RoceCheck, NetdevMtu4096_IsStillLowBecauseOfHeaders) {
  // 4096 - 96 bytes of RoCE v2 headers leaves 4000: the port gets 2048.
  NodeInfo n = healthy_roce_node();
  netdev(n, "eth2").mtu = 4096;
  port0(n, "mlx5_0").active_mtu = 2048;
  auto fs = checks::check_roce(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "roce.mtu_low");
}

TEST(RoceCheck, NetdevMtu4200_IsEnough) {
  NodeInfo n = healthy_roce_node();
  netdev(n, "eth2").mtu = 4200;
  EXPECT_TRUE(checks::check_roce(n).empty());
}

TEST(RoceCheck, ActiveMtuCappedBelowWhatTheNetdevAllows_IsAMismatch) {
  NodeInfo n = healthy_roce_node();
  port0(n, "mlx5_0").active_mtu = 1024;  // as libibverbs reports it on a live node
  auto fs = checks::check_roce(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "roce.mtu_mismatch");
  EXPECT_EQ(fs[0].evidence, "active_mtu=1024 sys/class/net/eth2/mtu=9000");
}

TEST(RoceCheck, ActiveMtuLargerThanNetdevMtu_IsAMismatch) {
  NodeInfo n = healthy_roce_node();
  netdev(n, "eth2").mtu = 1500;  // active_mtu stays 4096
  auto fs = checks::check_roce(n);
  ASSERT_EQ(fs.size(), 2u);
  EXPECT_EQ(fs[0].id, "roce.mtu_low");
  EXPECT_EQ(fs[1].id, "roce.mtu_mismatch");
}

TEST(RoceCheck, UnknownNetdevMtuIsNotJudged) {
  NodeInfo n = healthy_roce_node();
  netdev(n, "eth2").mtu.reset();
  port0(n, "mlx5_0").active_mtu = 256;
  EXPECT_TRUE(checks::check_roce(n).empty());
}
