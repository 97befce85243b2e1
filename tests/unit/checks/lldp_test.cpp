// lldp.*: each test gives the healthy RoCE node (node_builders.hpp) one LLDP fact; one judges a
// real lldpcli capture (tests/fixtures/lldpcli/SOURCE).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "checks/checks.hpp"
#include "checks/families.hpp"
#include "node_builders.hpp"
#include "probe/lldp.hpp"
#include "support/fixtures.hpp"

using namespace fabscope;
using namespace fabscope::testing;

namespace {

LldpNeighbor switch_port(std::optional<int> mfs, const std::string& name = "leaf-a.pod1",
                         const std::string& port = "swp7") {
  LldpNeighbor n;
  n.protocol = "LLDP";
  n.chassis_name = name;
  n.chassis_id = "e6:f0:a1:88:78:d5";
  n.port_id = port;
  n.mfs_bytes = mfs;
  return n;
}

// The healthy RoCE node (eth2, eth3 at MTU 9000, RoCE active MTU 4096) with lldpd answering and
// eth3 cabled to a port that takes jumbo frames; eth2's neighbour is the test's.
NodeInfo roce_node_with(std::optional<LldpNeighbor> eth2) {
  NodeInfo n = healthy_roce_node();
  n.lldp.source = "lldpcli";
  netdev(n, "eth3").lldp_neighbors = {switch_port(9216, "leaf-b.pod1", "swp9")};
  if (eth2) netdev(n, "eth2").lldp_neighbors = {*eth2};
  return n;
}

std::vector<Finding> mfs_findings(const NodeInfo& n) {
  return with_id(checks::check_lldp(n), "lldp.mtu_above_switch_mfs");
}

}  // namespace

TEST(LldpMtu, JumboPortsAndAnAgreeingMtuGiveNothing) {
  EXPECT_TRUE(checks::check_lldp(roce_node_with(switch_port(9216))).empty());
  EXPECT_TRUE(checks::run(roce_node_with(switch_port(9216))).empty());
}

TEST(LldpMtu, SwitchPortTakingOnlyStandardFramesFailsRoce) {
  auto fs = mfs_findings(roce_node_with(switch_port(1518)));
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].severity, Severity::Fail);
  EXPECT_EQ(fs[0].subject, "eth2");
  EXPECT_EQ(fs[0].evidence,
            "netdev=eth2 mtu=9000 frame=9018 switch=leaf-a.pod1 port=swp7 mfs=1518 roce_active_mtu=4096");
  EXPECT_NE(fs[0].message.find("RoCE frames (path MTU 4096) are among them"), std::string::npos) << fs[0].message;
  EXPECT_NE(fs[0].remedy.find("ip link set eth2 mtu 1500"), std::string::npos) << fs[0].remedy;
}

TEST(LldpMtu, PortBelowTheMtuButAboveRoceFramesWarns) {
  // 9000 + 18 > 9000, while RoCE frames (4096 + 96 + 18) fit: only full-size IP packets are lost.
  auto fs = mfs_findings(roce_node_with(switch_port(9000)));
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].severity, Severity::Warn);
  EXPECT_NE(fs[0].message.find("full-size IP packets"), std::string::npos);
  EXPECT_NE(fs[0].remedy.find("mtu 8982"), std::string::npos) << fs[0].remedy;
}

TEST(LldpMtu, BoundaryIsMtuPlusHeaderAndFcs) {
  EXPECT_TRUE(mfs_findings(roce_node_with(switch_port(9018))).empty());
  EXPECT_EQ(mfs_findings(roce_node_with(switch_port(9017))).size(), 1u);
}

TEST(LldpMtu, PcpTrustAddsTheVlanTag) {
  NodeInfo n = roce_node_with(switch_port(9018));
  LosslessState l;
  l.netdev = "eth2";
  l.trust = "pcp";
  n.lossless = {l};
  auto fs = mfs_findings(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_NE(fs[0].evidence.find("frame=9022 (802.1Q tagged: trust pcp)"), std::string::npos) << fs[0].evidence;
  netdev(n, "eth2").lldp_neighbors = {switch_port(9022)};
  EXPECT_TRUE(mfs_findings(n).empty());
}

TEST(LldpMtu, RoceFrameBoundaryDecidesFailOrWarn) {
  // RoCE frames reach 4096 + 96 + 18 = 4210 bytes.
  EXPECT_EQ(mfs_findings(roce_node_with(switch_port(4210))).at(0).severity, Severity::Warn);
  EXPECT_EQ(mfs_findings(roce_node_with(switch_port(4209))).at(0).severity, Severity::Fail);
}

TEST(LldpMtu, NonRdmaNetdevWarns) {
  NodeInfo n = roce_node_with(std::nullopt);
  Netdev v;
  v.name = "veth0";
  v.mtu = 9000;
  v.lldp_neighbors = {switch_port(1518)};
  n.netdevs.push_back(v);
  auto fs = mfs_findings(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].severity, Severity::Warn);
  EXPECT_EQ(fs[0].evidence, "netdev=veth0 mtu=9000 frame=9018 switch=leaf-a.pod1 port=swp7 mfs=1518");
}

TEST(LldpMtu, NoFrameSizeAdvertisedOrNoMtuGivesNothing) {
  EXPECT_TRUE(mfs_findings(roce_node_with(switch_port(std::nullopt))).empty());
  EXPECT_TRUE(mfs_findings(roce_node_with(switch_port(0))).empty());
  NodeInfo n = roce_node_with(switch_port(1518));
  netdev(n, "eth2").mtu.reset();
  EXPECT_TRUE(mfs_findings(n).empty());
}

TEST(LldpMtu, UnnamedSwitchIsNamedByChassisId) {
  auto nb = switch_port(1518, "");
  auto fs = mfs_findings(roce_node_with(nb));
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_NE(fs[0].evidence.find("switch=e6:f0:a1:88:78:d5"), std::string::npos);
}

TEST(LldpMtu, RealCaptureFlagsTheStandardFramePortOnly) {
  std::ifstream in(fixture("lldpcli") / "lldpd-1.0.16-three-neighbors.json");
  std::stringstream ss;
  ss << in.rdbuf();
  NodeInfo n;
  for (const char* name : {"ens1f0", "ens1f1", "ens1f2"}) {
    Netdev d;
    d.name = name;
    d.mtu = std::string(name) == "ens1f2" ? 1500 : 9000;  // as captured
    n.netdevs.push_back(d);
  }
  std::vector<std::string> notes;
  probe::ToolResult r;
  r.status = probe::ToolResult::Status::Ran;
  r.exit_code = 0;
  r.out = ss.str();
  n.lldp = probe::apply_lldpcli_result(r, n.netdevs, notes);
  auto fs = mfs_findings(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].subject, "ens1f1");
  EXPECT_EQ(fs[0].evidence, "netdev=ens1f1 mtu=9000 frame=9018 switch=leaf-b.pod1 port=swp9 mfs=1518");
}

TEST(LldpNoNeighbor, RoceNetdevWithoutNeighbourWhileLldpdRunsIsInfo) {
  NodeInfo n = roce_node_with(std::nullopt);
  auto fs = with_id(checks::check_lldp(n), "lldp.no_neighbor");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].severity, Severity::Info);
  EXPECT_EQ(fs[0].subject, "eth2");
  EXPECT_EQ(fs[0].evidence, "netdev=eth2 rdma_ports=mlx5_0:1 operstate=up lldp_neighbors=0");
}

TEST(LldpNoNeighbor, UnknownLldpGivesNothing) {
  NodeInfo n = roce_node_with(std::nullopt);
  n.lldp.source = "";
  n.lldp.note = "lldpd not running";
  EXPECT_TRUE(checks::check_lldp(n).empty());
}

TEST(LldpNoNeighbor, DownNetdevAndInfinibandPortsGiveNothing) {
  NodeInfo n = roce_node_with(std::nullopt);
  netdev(n, "eth2").operstate = "down";
  EXPECT_TRUE(checks::check_lldp(n).empty());
  NodeInfo ib = healthy_ib_node();
  ib.lldp.source = "lldpcli";
  EXPECT_TRUE(checks::check_lldp(ib).empty());
}

TEST(LldpNoNeighbor, BondIsHeardOnItsSlaves) {
  NodeInfo n = roce_node_with(std::nullopt);
  // eth2's RoCE port sits on bond0 (mlx5 LAG); LLDP is heard on the slaves.
  port0(n, "mlx5_0").netdev = "bond0";
  Netdev bond;
  bond.name = "bond0";
  bond.mtu = 9000;
  bond.operstate = "up";
  bond.rdma_ports = {"mlx5_0:1"};
  n.netdevs.push_back(bond);
  Bond b;
  b.name = "bond0";
  b.slaves = {BondSlave{"eth2"}, BondSlave{"eth4"}};
  n.bonds = {b};
  auto fs = with_id(checks::check_lldp(n), "lldp.no_neighbor");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].subject, "bond0");
  netdev(n, "eth2").lldp_neighbors = {switch_port(9216)};
  EXPECT_TRUE(with_id(checks::check_lldp(n), "lldp.no_neighbor").empty());
}
