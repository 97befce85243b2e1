// Each judgement of `fabscope fabric` on a subnet built here: it fires on its case, names the
// link with both ends, and stays quiet on the healthy fabric.
#include <gtest/gtest.h>

#include <algorithm>

#include "fabric_builders.hpp"
#include "fabric/judge.hpp"

using namespace fabscope;
using namespace fabscope::testing;

namespace {

std::vector<Finding> with_id(const std::vector<Finding>& fs, const std::string& id) {
  std::vector<Finding> out;
  std::copy_if(fs.begin(), fs.end(), std::back_inserter(out), [&](const Finding& f) { return f.id == id; });
  return out;
}

std::vector<Finding> judged(const Subnet& s, const JudgeOptions& o = {}) { return judge(s, o); }

std::string ids(const std::vector<Finding>& fs) {
  std::string s;
  for (const auto& f : fs) s += f.id + "@" + f.subject + " ";
  return s;
}

}  // namespace

TEST(Judge, HealthyFabricHasNoFindings) {
  const auto fs = judged(healthy_fabric());
  EXPECT_TRUE(fs.empty()) << ids(fs);
}

TEST(Judge, EveryIdIsRegisteredWithItsAnchorAndEvidence) {
  Subnet s = healthy_fabric();
  s.sms.clear();
  connect(s, kLeaf.leaf1, 7, kLeaf.spine1, 1, 1, Speed::HDR);
  (*port_of(s, kLeaf.hca1, 1).counters)[Counter::SymbolErrorCounter] = 5;
  for (const auto& f : judged(s)) {
    const auto& reg = fabric::fabric_checks();
    auto it = std::find_if(reg.begin(), reg.end(), [&](const FindingInfo& c) { return c.id == f.id; });
    ASSERT_NE(it, reg.end()) << f.id;
    EXPECT_LE(f.severity, it->severity) << f.id;
    EXPECT_EQ(f.docs, docs_anchor(f.id));
    EXPECT_FALSE(f.evidence.empty() || f.remedy.empty() || f.message.empty()) << f.id;
  }
}

TEST(Judge, NarrowLinkBelowItsTierAndItsEndsIsDegradedNamingBothEnds) {
  Subnet s = healthy_fabric();
  connect(s, kLeaf.leaf1, 7, kLeaf.spine1, 1, 1, Speed::HDR);  // 1X where 4X
  const auto fs = with_id(judged(s), "fabric.link_degraded");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].subject, "S-leaf1:7 <-> S-spine1:1");
  EXPECT_EQ(fs[0].severity, Severity::Warn);
  EXPECT_NE(fs[0].evidence.find("active=1X HDR could_be=4X HDR tier=leaf<->spine tier_usual=4X HDR"),
            std::string::npos)
      << fs[0].evidence;
  EXPECT_NE(fs[0].remedy.find("ibportstate"), std::string::npos);
}

TEST(Judge, SlowLinkWhoseEndsSupportNoMoreIsMixedSpeed) {
  Subnet s = healthy_fabric();
  connect(s, kLeaf.hca3, 1, kLeaf.leaf2, 1, 4, Speed::EDR);
  port_of(s, kLeaf.hca3, 1).info->speed_supported = speed_bit(Speed::SDR) | speed_bit(Speed::EDR);
  const auto fs = judged(s);
  EXPECT_TRUE(with_id(fs, "fabric.link_degraded").empty()) << ids(fs);
  const auto mixed = with_id(fs, "fabric.link_mixed_speed");
  ASSERT_EQ(mixed.size(), 1u) << ids(fs);
  EXPECT_EQ(mixed[0].subject, "hca3 mlx5_0:1 <-> S-leaf2:1");
  EXPECT_NE(mixed[0].message.find("hca3 mlx5_0:1 supports at most EDR; S-leaf2:1 supports HDR"), std::string::npos)
      << mixed[0].message;
}

TEST(Judge, SlowLinkBelowWhatBothEndsSupportIsDegradedNamingTheSpeed) {
  Subnet s = healthy_fabric();
  connect(s, kLeaf.hca3, 1, kLeaf.leaf2, 1, 4, Speed::EDR);  // both ends support HDR
  const auto fs = with_id(judged(s), "fabric.link_degraded");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_NE(fs[0].message.find("its speed EDR is below the HDR both ends support and the HDR of the other "
                               "HCA<->leaf links"),
            std::string::npos)
      << fs[0].message;
  EXPECT_EQ(fs[0].message.find("width"), std::string::npos) << fs[0].message;
}

// Issue 45: a cable moved onto a switch port that supports 4X QDR at most. Its ends list 12X (as
// ibsim's do), so "could be" is 12X QDR: the width is below capability but like its tier, the
// speed below its tier but the best both ends can do. Judged together against "12X HDR", which no
// end offers, it was link_degraded with "reseat the cable".
TEST(Judge, LinkAtTheBestBothEndsCanDoIsNotDegradedWhateverTheOtherDimensionLists) {
  Subnet s = healthy_fabric();
  for (auto& n : s.nodes)
    for (auto& p : n.ports)
      if (p.info) p.info->width_supported = width_bit(1) | width_bit(4) | width_bit(8) | width_bit(12);
  connect(s, kLeaf.hca3, 1, kLeaf.leaf2, 1, 4, Speed::QDR);
  for (auto [n, p] : {std::pair{kLeaf.hca3, 1}, std::pair{kLeaf.leaf2, 1}})
    port_of(s, n, p).info->width_supported = width_bit(1) | width_bit(4) | width_bit(8) | width_bit(12);
  port_of(s, kLeaf.leaf2, 1).info->speed_supported = speed_bit(Speed::SDR) | speed_bit(Speed::DDR) | speed_bit(Speed::QDR);
  port_of(s, kLeaf.hca3, 1).info->speed_supported = speed_bit(Speed::QDR) | speed_bit(Speed::HDR);
  const auto fs = judged(s);
  EXPECT_TRUE(with_id(fs, "fabric.link_degraded").empty()) << ids(fs);
  const auto mixed = with_id(fs, "fabric.link_mixed_speed");
  ASSERT_EQ(mixed.size(), 1u) << ids(fs);
  EXPECT_EQ(mixed[0].subject, "hca3 mlx5_0:1 <-> S-leaf2:1");
  // The end whose support limits the link is named, and the remedy is not a reseat.
  EXPECT_NE(mixed[0].message.find("S-leaf2:1 supports at most QDR; hca3 mlx5_0:1 supports HDR"), std::string::npos)
      << mixed[0].message;
  EXPECT_NE(mixed[0].evidence.find("active=4X QDR could_be=12X QDR"), std::string::npos) << mixed[0].evidence;
  EXPECT_EQ(mixed[0].remedy.find("reseat"), std::string::npos) << mixed[0].remedy;
  EXPECT_NE(mixed[0].remedy.find("move it back"), std::string::npos) << mixed[0].remedy;
  // Its width, like the tier's and below the listed 12X, is the tier's info, not this link's.
  const auto tier = with_id(fs, "fabric.tier_below_capability");
  EXPECT_EQ(tier.size(), 2u) << ids(fs);
  // The same on real ports that list only what they do (4X at most): mixed speed, not degraded.
  for (auto& n : s.nodes)
    for (auto& p : n.ports)
      if (p.info) p.info->width_supported = width_bit(1) | width_bit(4);
  const auto real = judged(s);
  EXPECT_TRUE(with_id(real, "fabric.link_degraded").empty()) << ids(real);
  EXPECT_EQ(with_id(real, "fabric.link_mixed_speed").size(), 1u) << ids(real);
}

TEST(Judge, NarrowLinkIsDegradedEvenWhenItsSpeedIsTheBestItsEndsCanDo) {
  Subnet s = healthy_fabric();
  connect(s, kLeaf.hca3, 1, kLeaf.leaf2, 1, 1, Speed::QDR);  // 1X where both ends support 4X
  port_of(s, kLeaf.leaf2, 1).info->speed_supported = speed_bit(Speed::SDR) | speed_bit(Speed::QDR);
  port_of(s, kLeaf.hca3, 1).info->speed_supported |= speed_bit(Speed::QDR);
  const auto fs = with_id(judged(s), "fabric.link_degraded");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_NE(fs[0].message.find("its width 1X is below the 4X both ends support"), std::string::npos) << fs[0].message;
  EXPECT_EQ(fs[0].message.find("its speed"), std::string::npos) << fs[0].message;
}

TEST(Judge, TierUniformlyBelowCapabilityIsOneInfoForTheTier) {
  // ibsim's quirk: every port reports 12X and every speed as supported.
  Subnet s = healthy_fabric();
  for (auto& n : s.nodes)
    for (auto& p : n.ports)
      if (p.info) {
        p.info->width_supported = width_bit(1) | width_bit(4) | width_bit(8) | width_bit(12);
        p.info->speed_supported = 0x3fe;
      }
  const auto fs = judged(s);
  const auto tier = with_id(fs, "fabric.tier_below_capability");
  ASSERT_EQ(tier.size(), 2u) << ids(fs);  // HCA<->leaf and leaf<->spine
  EXPECT_EQ(tier[0].severity, Severity::Info);
  EXPECT_TRUE(with_id(fs, "fabric.link_degraded").empty()) << ids(fs);
  EXPECT_EQ(exit_code_for(fs), 0);
  // The per-link facts keep "below capability" for each link (iblinkinfo's "Could be").
  const auto facts = fabric::link_facts(s);
  EXPECT_EQ(facts.size(), 8u);
  for (const auto& f : facts) {
    EXPECT_TRUE(f.below_capability) << f.name;
    EXPECT_EQ(f.could_width, 12);
    EXPECT_EQ(f.could_speed, Speed::XDR);
  }
}

TEST(Judge, LinkFactsNameTheHcaEndFirstAndTheTiers) {
  const auto facts = fabric::link_facts(healthy_fabric());
  ASSERT_EQ(facts.size(), 8u);
  int hca_leaf = 0, leaf_spine = 0;
  for (const auto& f : facts) {
    hca_leaf += f.tier == "HCA<->leaf";
    leaf_spine += f.tier == "leaf<->spine";
    EXPECT_FALSE(f.below_capability || f.below_tier) << f.name;
  }
  EXPECT_EQ(hca_leaf, 4);
  EXPECT_EQ(leaf_spine, 4);
  EXPECT_EQ(facts[0].name.rfind("S-", 0), 0u);  // leaf1:7 <-> spine1:1 comes first by index
  auto hca = std::find_if(facts.begin(), facts.end(), [](const auto& f) { return f.tier == "HCA<->leaf"; });
  EXPECT_EQ(hca->name.rfind("hca", 0), 0u) << hca->name;
}

TEST(Judge, PortStuckInInitIsReportedOnItsLink) {
  Subnet s = healthy_fabric();
  port_of(s, kLeaf.hca2, 1).info->state = PortState::Init;
  port_of(s, kLeaf.leaf1, 2).info->state = PortState::Init;
  const auto fs = with_id(judged(s), "fabric.port_not_active");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].subject, "hca2 mlx5_0:1 <-> S-leaf1:2");
  EXPECT_NE(fs[0].evidence.find("hca2 mlx5_0:1=Init"), std::string::npos) << fs[0].evidence;
}

TEST(Judge, MtuBelowTheUsualIsReported) {
  Subnet s = healthy_fabric();
  port_of(s, kLeaf.hca4, 1).info->mtu_active = 2048;
  const auto fs = with_id(judged(s), "fabric.mtu_below_usual");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].subject, "hca4 mlx5_0:1 <-> S-leaf2:2");
  EXPECT_EQ(fs[0].evidence, "mtu_active=2048 usual=4096");
}

TEST(Judge, AnyNonZeroErrorCounterIsReportedByDefault) {
  Subnet s = healthy_fabric();
  (*port_of(s, kLeaf.leaf1, 7).counters)[Counter::SymbolErrorCounter] = 1;
  (*port_of(s, kLeaf.leaf1, 7).counters)[Counter::PortXmitWait] = 123456;  // not an error total
  (*port_of(s, kLeaf.leaf1, 7).counters)[Counter::PortXmitData] = 999;
  const auto fs = with_id(judged(s), "fabric.error_counters");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].subject, "S-leaf1:7 <-> S-spine1:1");
  EXPECT_EQ(fs[0].evidence, "at S-leaf1:7: SymbolErrorCounter=1 (threshold 0)");
}

TEST(Judge, ThresholdsFileRaisesTheBar) {
  Subnet s = healthy_fabric();
  (*port_of(s, kLeaf.leaf1, 7).counters)[Counter::SymbolErrorCounter] = 10;
  (*port_of(s, kLeaf.leaf1, 7).counters)[Counter::LinkDownedCounter] = 2;
  JudgeOptions o;
  o.thresholds = fabric::parse_thresholds("SymbolErrorCounter=10\nLinkDownedCounter=1\n", "t");
  const auto fs = with_id(judged(s, o), "fabric.error_counters");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].evidence, "at S-leaf1:7: LinkDownedCounter=2 thresholds: LinkDownedCounter=1");
  o.thresholds = fabric::parse_thresholds("SymbolErrorCounter=10\nLinkDownedCounter=2\n", "t");
  EXPECT_TRUE(with_id(judged(s, o), "fabric.error_counters").empty());
}

TEST(Judge, XmitWaitTotalIsJudgedOnlyWhenTheFileNamesIt) {
  Subnet s = healthy_fabric();
  (*port_of(s, kLeaf.leaf1, 7).counters)[Counter::PortXmitWait] = 5000;
  JudgeOptions o;
  o.thresholds = fabric::parse_thresholds("PortXmitWait=1000\n", "t");
  const auto fs = with_id(judged(s, o), "fabric.error_counters");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_NE(fs[0].evidence.find("PortXmitWait=5000"), std::string::npos);
}

TEST(Judge, SaturatedCounterIsReportedAsSaturatedNotAsATotal) {
  Subnet s = healthy_fabric();
  (*port_of(s, kLeaf.hca1, 1).counters)[Counter::SymbolErrorCounter] = 65535;
  const auto fs = judged(s);
  const auto sat = with_id(fs, "fabric.counter_saturated");
  ASSERT_EQ(sat.size(), 1u) << ids(fs);
  EXPECT_EQ(sat[0].subject, "hca1 mlx5_0:1 <-> S-leaf1:1");
  EXPECT_NE(sat[0].evidence.find("SymbolErrorCounter=65535"), std::string::npos);
  EXPECT_TRUE(with_id(fs, "fabric.error_counters").empty()) << ids(fs);
}

namespace {
struct Sampled {
  Subnet before, now;
  JudgeOptions opt;
};
Sampled two_samples(double interval_s = 10) {
  Sampled s{healthy_fabric(), healthy_fabric(), {}};
  s.opt.interval_s = interval_s;
  return s;
}
}  // namespace

TEST(Judge, QuietIntervalHasNoFindingsEvenWithOldErrors) {
  auto t = two_samples();
  (*port_of(t.before, kLeaf.hca1, 1).counters)[Counter::SymbolErrorCounter] = 7;
  (*port_of(t.now, kLeaf.hca1, 1).counters)[Counter::SymbolErrorCounter] = 7;
  t.opt.before = t.before;
  const auto fs = judged(t.now, t.opt);
  EXPECT_TRUE(fs.empty()) << ids(fs);
}

TEST(Judge, GrowingErrorsAreReportedWithTheirRate) {
  auto t = two_samples(10);
  (*port_of(t.before, kLeaf.leaf2, 8).counters)[Counter::SymbolErrorCounter] = 100;
  (*port_of(t.now, kLeaf.leaf2, 8).counters)[Counter::SymbolErrorCounter] = 150;
  (*port_of(t.now, kLeaf.leaf2, 8).counters)[Counter::LinkDownedCounter] = 1;
  t.opt.before = t.before;
  const auto fs = with_id(judged(t.now, t.opt), "fabric.errors_growing");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].subject, "S-leaf2:8 <-> S-spine2:2");
  EXPECT_EQ(fs[0].evidence, "at S-leaf2:8: SymbolErrorCounter=+50 (5.000/s) LinkDownedCounter=+1 (0.100/s)");
}

TEST(Judge, GrowingXmitDiscardsAreTheirOwnFinding) {
  auto t = two_samples(2);
  (*port_of(t.now, kLeaf.spine1, 1).counters)[Counter::PortXmitDiscards] = 40;
  t.opt.before = t.before;
  const auto fs = with_id(judged(t.now, t.opt), "fabric.xmit_discards_growing");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_NE(fs[0].evidence.find("PortXmitDiscards=+40 (20.000/s)"), std::string::npos) << fs[0].evidence;
}

TEST(Judge, XmitWaitIsAFractionOfTheIntervalWhenTheTickIsKnown) {
  auto t = two_samples(1);
  (*port_of(t.now, kLeaf.leaf1, 7).counters)[Counter::PortXmitWait] = 50'000'000;  // x 4 ns = 0.2 s
  t.opt.before = t.before;
  t.opt.xmit_wait_tick_ns = 4;
  auto fs = with_id(judged(t.now, t.opt), "fabric.xmit_wait");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].severity, Severity::Warn);
  EXPECT_NE(fs[0].message.find("(20.0% of the time)"), std::string::npos) << fs[0].message;
  t.opt.xmit_wait_tick_ns = 0;  // unknown: ticks per second only, never a warning
  fs = with_id(judged(t.now, t.opt), "fabric.xmit_wait");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].severity, Severity::Info);
  EXPECT_NE(fs[0].evidence.find("50000000 ticks/s"), std::string::npos) << fs[0].evidence;
}

TEST(Judge, CounterThatWentBackwardsIsSaidNeverAHugeRate) {
  auto t = two_samples();
  (*port_of(t.before, kLeaf.hca2, 1).counters)[Counter::PortRcvErrors] = 900;
  (*port_of(t.now, kLeaf.hca2, 1).counters)[Counter::PortRcvErrors] = 3;
  t.opt.before = t.before;
  const auto fs = judged(t.now, t.opt);
  const auto reset = with_id(fs, "fabric.counter_reset");
  ASSERT_EQ(reset.size(), 1u) << ids(fs);
  EXPECT_NE(reset[0].evidence.find("PortRcvErrors=900->3"), std::string::npos);
  EXPECT_TRUE(with_id(fs, "fabric.errors_growing").empty()) << ids(fs);
}

TEST(Judge, SaturatedCounterHasNoRate) {
  auto t = two_samples();
  (*port_of(t.before, kLeaf.hca2, 1).counters)[Counter::LinkErrorRecoveryCounter] = 200;
  (*port_of(t.now, kLeaf.hca2, 1).counters)[Counter::LinkErrorRecoveryCounter] = 255;
  t.opt.before = t.before;
  const auto fs = judged(t.now, t.opt);
  EXPECT_TRUE(with_id(fs, "fabric.errors_growing").empty()) << ids(fs);
  EXPECT_EQ(with_id(fs, "fabric.counter_saturated").size(), 1u) << ids(fs);
}

TEST(Judge, NoMasterSmFails) {
  Subnet s = healthy_fabric();
  s.sms[0].state = SmState::Standby;
  s.sms[0].priority = 1;
  const auto fs = with_id(judged(s), "fabric.sm_none");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].severity, Severity::Fail);
  s.sms.clear();
  EXPECT_EQ(with_id(judged(s), "fabric.sm_none").size(), 1u);
}

TEST(Judge, TwoMastersFail) {
  Subnet s = healthy_fabric();
  s.sms[1].state = SmState::Master;
  const auto fs = with_id(judged(s), "fabric.sm_multiple_masters");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_NE(fs[0].evidence.find("hca1 mlx5_0 (lid 10) MASTER priority 15; hca2 mlx5_0 (lid 11) MASTER"),
            std::string::npos)
      << fs[0].evidence;
}

TEST(Judge, MasterWithoutStandbyWarns) {
  Subnet s = healthy_fabric();
  s.sms.pop_back();
  EXPECT_EQ(with_id(judged(s), "fabric.sm_no_standby").size(), 1u);
}

TEST(Judge, StandbyAboveTheMasterWarnsAndEqualPrioritiesInform) {
  Subnet s = healthy_fabric();
  s.sms[1].priority = 15;
  auto fs = with_id(judged(s), "fabric.sm_priority");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].severity, Severity::Info);
  s.sms[0].priority = 3;
  fs = with_id(judged(s), "fabric.sm_priority");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].severity, Severity::Warn);
}

TEST(Judge, DuplicateNodeGuidFails) {
  Subnet s = healthy_fabric();
  s.nodes[kLeaf.hca4].guid = s.nodes[kLeaf.hca3].guid;
  const auto fs = with_id(judged(s), "fabric.duplicate_guid");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].subject, "node GUID 0x000000000000c000");
  EXPECT_NE(fs[0].evidence.find("hca3 mlx5_0, hca4 mlx5_0"), std::string::npos);
}

TEST(Judge, DuplicatePortGuidFails) {
  Subnet s = healthy_fabric();
  port_of(s, kLeaf.hca2, 1).guid = port_of(s, kLeaf.hca1, 1).guid;
  const auto fs = with_id(judged(s), "fabric.duplicate_guid");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].subject, "port GUID 0x000000000000a001");
}

TEST(Judge, DuplicateLidFailsAndLmcRangesCount) {
  Subnet s = healthy_fabric();
  port_of(s, kLeaf.hca2, 1).info->lid = 3;  // leaf1's LID
  auto fs = with_id(judged(s), "fabric.duplicate_lid");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].subject, "LID 3");
  s = healthy_fabric();
  port_of(s, kLeaf.hca1, 1).info->lmc = 2;  // 10..13 overlaps hca2's 11
  fs = with_id(judged(s), "fabric.duplicate_lid");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].subject, "LID 11");
}

TEST(Judge, ExpectedTopologyIdenticalHasNoFindings) {
  JudgeOptions o;
  o.expected = healthy_fabric();
  EXPECT_TRUE(judged(healthy_fabric(), o).empty());
}

TEST(Judge, MissingNodeFailsWithoutAlsoListingItsLinks) {
  Subnet s = healthy_fabric();
  JudgeOptions o;
  o.expected = s;
  // hca4 gone: its leaf port is down now.
  Port& leaf = port_of(s, kLeaf.leaf2, 2);
  leaf.remote_node = -1, leaf.remote_port = 0, leaf.info = down_info();
  s.nodes.pop_back();
  s.sms.back().node = kLeaf.hca2;
  const auto fs = judged(s, o);
  ASSERT_EQ(with_id(fs, "fabric.node_missing").size(), 1u) << ids(fs);
  EXPECT_EQ(with_id(fs, "fabric.node_missing")[0].subject, "hca4 mlx5_0");
  EXPECT_TRUE(with_id(fs, "fabric.link_missing").empty()) << ids(fs);
}

TEST(Judge, MissingLinkBetweenPresentNodesWarns) {
  Subnet s = healthy_fabric();
  JudgeOptions o;
  o.expected = s;
  for (auto [n, p] : {std::pair{kLeaf.leaf2, 8}, std::pair{kLeaf.spine2, 2}}) {
    port_of(s, n, p).remote_node = -1, port_of(s, n, p).remote_port = 0, port_of(s, n, p).info = down_info();
  }
  const auto fs = with_id(judged(s, o), "fabric.link_missing");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].subject, "S-spine2:2 <-> S-leaf2:8");
}

TEST(Judge, CableOnOtherPortsIsMovedNotMissingAndNew) {
  Subnet s = healthy_fabric();
  JudgeOptions o;
  o.expected = s;
  for (auto [n, p] : {std::pair{kLeaf.leaf2, 8}, std::pair{kLeaf.spine2, 2}}) {
    port_of(s, n, p).remote_node = -1, port_of(s, n, p).remote_port = 0, port_of(s, n, p).info = down_info();
  }
  connect(s, kLeaf.leaf2, 6, kLeaf.spine2, 5);
  const auto fs = judged(s, o);
  const auto moved = with_id(fs, "fabric.link_moved");
  ASSERT_EQ(moved.size(), 1u) << ids(fs);
  EXPECT_EQ(moved[0].subject, "S-spine2:5 <-> S-leaf2:6");
  EXPECT_NE(moved[0].evidence.find("expected=S-spine2:2 <-> S-leaf2:8"), std::string::npos) << moved[0].evidence;
  EXPECT_TRUE(with_id(fs, "fabric.link_missing").empty()) << ids(fs);
  EXPECT_TRUE(with_id(fs, "fabric.link_new").empty()) << ids(fs);
}

TEST(Judge, NewNodeAndNewLinkInform) {
  Subnet s = healthy_fabric();
  JudgeOptions o;
  o.expected = s;
  const int hca5 = add_node(s, NodeType::Hca, "hca5 mlx5_0", 0xe000, 1, 14);
  connect(s, hca5, 1, kLeaf.leaf1, 3);
  connect(s, kLeaf.leaf1, 6, kLeaf.spine2, 6);  // a second uplink between known switches
  const auto fs = judged(s, o);
  EXPECT_EQ(with_id(fs, "fabric.node_new").size(), 1u) << ids(fs);
  const auto links = with_id(fs, "fabric.link_new");
  ASSERT_EQ(links.size(), 1u) << ids(fs);
  EXPECT_EQ(links[0].subject, "S-spine2:6 <-> S-leaf1:6");
  EXPECT_EQ(exit_code_for(fs), 0);
}

TEST(Judge, FirmwareDifferingWithinOneModelWarnsOncePerModel) {
  Subnet s = healthy_fabric();
  for (int n : {kLeaf.spine1, kLeaf.spine2, kLeaf.leaf1}) s.nodes[n].firmware = "27.2010.6102";
  s.nodes[kLeaf.leaf2].firmware = "27.2000.1000";
  s.nodes[kLeaf.hca1].firmware = "28.39.1002";  // another model: not compared with the switches
  const auto fs = with_id(judged(s), "fabric.firmware_differs");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].subject, "switch 02c9:d2f0");
  EXPECT_NE(fs[0].evidence.find("27.2000.1000: 1 (S-leaf2)"), std::string::npos) << fs[0].evidence;
  EXPECT_NE(fs[0].remedy.find("27.2010.6102 is the most common"), std::string::npos);
}

TEST(Judge, NodesAndPortsThatDidNotAnswerAreNamed) {
  Subnet s = healthy_fabric();
  s.nodes[kLeaf.leaf2].note = "PortInfo of ports 3-8 timed out";
  port_of(s, kLeaf.hca3, 1).note = "PMA did not answer";
  port_of(s, kLeaf.hca3, 1).counters.reset();
  s.notes.push_back("switch at 0,1,8 did not answer NodeInfo");
  const auto fs = with_id(judged(s), "fabric.not_answered");
  ASSERT_EQ(fs.size(), 3u);
  EXPECT_EQ(fs[0].subject, "S-leaf2");
  EXPECT_EQ(fs[1].subject, "hca3 mlx5_0:1");
  EXPECT_EQ(fs[2].subject, "subnet");
  EXPECT_NE(fs[2].message.find("switch at 0,1,8 did not answer NodeInfo"), std::string::npos);
}

TEST(Judge, FindingsComeMostSevereFirst) {
  Subnet s = healthy_fabric();
  s.sms.pop_back();                                              // warn
  s.sms[0].state = SmState::Standby;                             // fail (no master)
  port_of(s, kLeaf.hca4, 1).info->mtu_active = 2048;            // warn
  const auto fs = judged(s);
  ASSERT_GE(fs.size(), 2u);
  EXPECT_EQ(fs.front().severity, Severity::Fail);
  for (std::size_t i = 1; i < fs.size(); ++i) EXPECT_LE(fs[i].severity, fs[i - 1].severity);
}

TEST(Judge, ErrorsAtBothEndsOfACableAreOneFindingForTheLink) {
  Subnet s = healthy_fabric();
  (*port_of(s, kLeaf.leaf1, 7).counters)[Counter::SymbolErrorCounter] = 4;
  (*port_of(s, kLeaf.spine1, 1).counters)[Counter::PortRcvErrors] = 2;
  const auto fs = with_id(judged(s), "fabric.error_counters");
  ASSERT_EQ(fs.size(), 1u) << ids(fs);
  EXPECT_EQ(fs[0].subject, "S-leaf1:7 <-> S-spine1:1");
  // Each end's counters, in the order the sweep lists the nodes.
  EXPECT_EQ(fs[0].evidence,
            "at S-spine1:1: PortRcvErrors=2 (threshold 0); at S-leaf1:7: SymbolErrorCounter=4 (threshold 0)");
}
