// link.*: each test changes one value of a healthy InfiniBand node (node_builders.hpp).
#include <gtest/gtest.h>

#include "checks/families.hpp"
#include "node_builders.hpp"

using namespace fabscope;
using namespace fabscope::testing;

TEST(LinkCheck, HealthyNodeHasNoFindings) { EXPECT_TRUE(checks::check_link(healthy_ib_node()).empty()); }

TEST(LinkCheck, PortDown_FailsWithStateAsEvidence) {
  NodeInfo n = healthy_ib_node();
  auto& p = port0(n, "mlx5_1");
  p.state = "DOWN";
  p.phys_state = "Polling";
  auto fs = checks::check_link(n);
  ASSERT_EQ(fs.size(), 1u);  // no separate phys_state finding for a port that is down
  EXPECT_EQ(fs[0].id, "link.port_down");
  EXPECT_EQ(fs[0].severity, Severity::Fail);
  EXPECT_EQ(fs[0].subject, "mlx5_1:1");
  EXPECT_NE(fs[0].evidence.find("state=DOWN phys_state=Polling"), std::string::npos) << fs[0].evidence;
  EXPECT_NE(fs[0].message.find("no link partner"), std::string::npos) << fs[0].message;
  EXPECT_EQ(fs[0].docs, "docs/checks.md#link-port_down");
}

TEST(LinkCheck, PortInInitOnInfiniBand_PointsAtTheSubnetManager) {
  NodeInfo n = healthy_ib_node();
  port0(n, "mlx5_0").state = "INIT";
  auto fs = with_id(checks::check_link(n), "link.port_down");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_NE(fs[0].message.find("subnet manager"), std::string::npos);
  EXPECT_NE(fs[0].remedy.find("opensm"), std::string::npos);
}

TEST(LinkCheck, ActiveDeferCountsAsActive) {
  NodeInfo n = healthy_ib_node();
  port0(n, "mlx5_0").state = "ACTIVE_DEFER";
  EXPECT_TRUE(checks::check_link(n).empty());
}

TEST(LinkCheck, UnknownStateIsNotJudged) {
  NodeInfo n = healthy_ib_node();
  port0(n, "mlx5_0").state = "";
  port0(n, "mlx5_0").phys_state = "";
  EXPECT_TRUE(checks::check_link(n).empty());
}

TEST(LinkCheck, PhysStateNotLinkUpWhileActive_Warns) {
  NodeInfo n = healthy_ib_node();
  port0(n, "mlx5_0").phys_state = "LinkErrorRecovery";
  auto fs = checks::check_link(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "link.phys_state");
  EXPECT_EQ(fs[0].severity, Severity::Warn);
}

TEST(LinkCheck, PhysStateDownWithUnknownState_Fails) {
  NodeInfo n = healthy_ib_node();
  port0(n, "mlx5_0").state = "";
  port0(n, "mlx5_0").phys_state = "Disabled";
  auto fs = checks::check_link(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "link.phys_state");
  EXPECT_EQ(fs[0].severity, Severity::Fail);
}

TEST(LinkCheck, RateBelowFastestPortOfSameLinkLayer_Warns) {
  // An HDR HCA among NDR ones: the whole job runs at its pace.
  NodeInfo n = healthy_ib_node();
  port0(n, "mlx5_1").rate_gbps = 200;
  port0(n, "mlx5_1").rate = "200 Gb/sec (4X HDR)";
  auto fs = checks::check_link(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "link.rate_degraded");
  EXPECT_EQ(fs[0].subject, "mlx5_1:1");
  EXPECT_NE(fs[0].evidence.find("fastest=mlx5_0:1"), std::string::npos) << fs[0].evidence;
  EXPECT_NE(fs[0].message.find("200 Gb/s"), std::string::npos);
}

TEST(LinkCheck, RatesOfDifferentLinkLayersAreNotCompared) {
  NodeInfo n = healthy_ib_node();
  port0(n, "mlx5_1").link_layer = "Ethernet";
  port0(n, "mlx5_1").rate_gbps = 100;
  EXPECT_TRUE(with_id(checks::check_link(n), "link.rate_degraded").empty());
}

TEST(LinkCheck, DownPortRateIsNotComparedNorUsedAsTheBest) {
  NodeInfo n = healthy_ib_node();
  port0(n, "mlx5_1").state = "DOWN";
  port0(n, "mlx5_1").rate_gbps = 10;
  EXPECT_TRUE(with_id(checks::check_link(n), "link.rate_degraded").empty());
}

TEST(LinkCheck, EachNonZeroErrorCounterHasItsId) {
  const std::pair<const char*, const char*> cases[] = {{"symbol_error", "link.symbol_errors"},
                                                       {"link_downed", "link.link_downed"},
                                                       {"link_error_recovery", "link.link_error_recovery"},
                                                       {"port_rcv_errors", "link.port_rcv_errors"}};
  for (const auto& [counter, id] : cases) {
    NodeInfo n = healthy_ib_node();
    port0(n, "mlx5_0").counters[counter] = 17;
    auto fs = checks::check_link(n);
    ASSERT_EQ(fs.size(), 1u) << counter;
    EXPECT_EQ(fs[0].id, id);
    EXPECT_EQ(fs[0].severity, Severity::Warn);
    EXPECT_EQ(fs[0].evidence, std::string("counters/") + counter + "=17");
  }
}

TEST(LinkCheck, MissingCountersAreNotJudged) {
  NodeInfo n = healthy_ib_node();
  port0(n, "mlx5_0").counters.clear();  // rxe has no counters/ directory
  EXPECT_TRUE(checks::check_link(n).empty());
}

TEST(LinkCheck, OtherCountersAreNotJudged) {
  NodeInfo n = healthy_ib_node();
  port0(n, "mlx5_0").counters["port_xmit_wait"] = 3599;  // congestion, not an error
  EXPECT_TRUE(checks::check_link(n).empty());
}
