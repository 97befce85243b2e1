// Pair schedules (every round disjoint, every pair once) and the slow node / slow link verdicts.
#include <gtest/gtest.h>

#include <limits>

#include <cmath>
#include <set>

#include "cluster/outliers.hpp"
#include "cluster/render.hpp"
#include "cluster/schedule.hpp"
#include "core/error.hpp"

using namespace fabscope;
using namespace fabscope::cluster;

namespace {

void expect_disjoint(const std::vector<Round>& rounds) {
  for (const auto& r : rounds) {
    std::set<int> busy;
    for (auto [a, b] : r) {
      EXPECT_LT(a, b);
      EXPECT_TRUE(busy.insert(a).second) << "node " << a << " twice in a round";
      EXPECT_TRUE(busy.insert(b).second) << "node " << b << " twice in a round";
    }
  }
}

std::set<Pair> all_pairs(const std::vector<Round>& rounds) {
  std::set<Pair> s;
  for (const auto& r : rounds)
    for (auto p : r) EXPECT_TRUE(s.insert(p).second) << p.first << "-" << p.second << " twice";
  return s;
}

// n nodes at `base` Gb/s with a little deterministic noise.
std::vector<PairResult> measured(const std::vector<Round>& rounds, double base) {
  std::vector<PairResult> out;
  int k = 0;
  for (const auto& r : rounds)
    for (auto [a, b] : r) {
      double noise = ((k++ * 37) % 11 - 5) * 0.002 * base;
      out.push_back({a, b, base + noise, base - noise, ""});
    }
  return out;
}

}  // namespace

TEST(Schedule, AllIsARoundRobinTournamentForEvenAndOddN) {
  for (int n : {2, 3, 4, 7, 8, 33}) {
    auto rounds = make_schedule(n, {PairsMode::All, 0}, 1);
    EXPECT_EQ(static_cast<int>(rounds.size()), n % 2 ? n : n - 1) << n;
    expect_disjoint(rounds);
    EXPECT_EQ(all_pairs(rounds).size(), static_cast<std::size_t>(n * (n - 1) / 2)) << n;
    for (const auto& r : rounds) EXPECT_EQ(static_cast<int>(r.size()), n / 2) << n;  // odd n: one bye
  }
}

TEST(Schedule, RingPairsEachNodeWithItsSuccessor) {
  for (int n : {3, 4, 5, 10}) {
    auto rounds = make_schedule(n, {PairsMode::Ring, 0}, 1);
    EXPECT_EQ(rounds.size(), n % 2 ? 3u : 2u) << n;
    expect_disjoint(rounds);
    auto pairs = all_pairs(rounds);
    EXPECT_EQ(static_cast<int>(pairs.size()), n);
    for (int i = 0; i < n; ++i) EXPECT_TRUE(pairs.count({std::min(i, (i + 1) % n), std::max(i, (i + 1) % n)}));
  }
  EXPECT_EQ(make_schedule(2, {PairsMode::Ring, 0}, 1).size(), 1u);
}

TEST(Schedule, RandomRoundsAreDistinctDisjointAndSeeded) {
  auto a = make_schedule(64, {PairsMode::Random, 5}, 42);
  ASSERT_EQ(a.size(), 5u);
  expect_disjoint(a);
  EXPECT_EQ(all_pairs(a).size(), 5u * 32);
  EXPECT_EQ(a, make_schedule(64, {PairsMode::Random, 5}, 42));
  EXPECT_NE(a, make_schedule(64, {PairsMode::Random, 5}, 43));
  EXPECT_THROW(make_schedule(4, {PairsMode::Random, 4}, 1), UsageError);
}

TEST(Schedule, ParsePairsNamesTheBadValue) {
  EXPECT_EQ(parse_pairs("all").mode, PairsMode::All);
  EXPECT_EQ(parse_pairs("3").rounds, 3);
  try {
    parse_pairs("sometimes");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'sometimes'"), std::string::npos);
  }
  EXPECT_THROW(parse_pairs("0"), UsageError);
  EXPECT_THROW(parse_pairs("-2"), UsageError);
}

TEST(Outliers, QuietFabricHasNoOutliers) {
  auto pairs = measured(make_schedule(16, {PairsMode::All, 0}, 1), 100);
  auto o = detect_outliers(16, pairs);
  EXPECT_TRUE(o.judged);
  EXPECT_NEAR(o.median_gbps, 100, 1);
  EXPECT_TRUE(o.slow_nodes.empty());
  EXPECT_TRUE(o.slow_links.empty());
}

TEST(Outliers, SlowNodeIsSlowWithEveryPeer) {
  auto pairs = measured(make_schedule(8, {PairsMode::All, 0}, 1), 100);
  for (auto& p : pairs)
    if (p.a == 5 || p.b == 5) p.a_to_b_gbps = *p.a_to_b_gbps * 0.3, p.b_to_a_gbps = *p.b_to_a_gbps * 0.3;
  auto o = detect_outliers(8, pairs);
  ASSERT_EQ(o.slow_nodes.size(), 1u);
  EXPECT_EQ(o.slow_nodes[0].rank, 5);
  EXPECT_EQ(o.slow_nodes[0].slow_pairs, 7u);
  EXPECT_TRUE(o.slow_links.empty());
  auto fs = outlier_findings(o, pairs, {"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"});
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "cluster.slow_node");
  EXPECT_EQ(fs[0].subject, "n5");
  EXPECT_NE(fs[0].evidence.find("n5: median of its pairs 29.8 Gb/s; pair median 99."), std::string::npos) << fs[0].evidence;
}

TEST(Outliers, SlowLinkIsOnePairWithBothNodesFineElsewhere) {
  auto pairs = measured(make_schedule(8, {PairsMode::All, 0}, 1), 100);
  for (auto& p : pairs)
    if (p.a == 2 && p.b == 6) p.a_to_b_gbps = 40;
  auto o = detect_outliers(8, pairs);
  EXPECT_TRUE(o.slow_nodes.empty());
  ASSERT_EQ(o.slow_links.size(), 1u);
  EXPECT_EQ(o.slow_links[0].a, 2);
  EXPECT_EQ(o.slow_links[0].b, 6);
  auto fs = outlier_findings(o, pairs, {});
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].subject, "rank2<->rank6");
  EXPECT_NE(fs[0].evidence.find("rank2->rank6 40.0 Gb/s"), std::string::npos) << fs[0].evidence;
}

TEST(Outliers, SlowNodeInARingAndFailedPairs) {
  auto pairs = measured(make_schedule(6, {PairsMode::Ring, 0}, 1), 25);
  for (auto& p : pairs)
    if (p.a == 3 || p.b == 3) p.a_to_b_gbps = 5, p.b_to_a_gbps = 5;
  pairs.push_back({0, 3, std::nullopt, std::nullopt, "connect refused"});
  auto o = detect_outliers(6, pairs);
  ASSERT_EQ(o.slow_nodes.size(), 1u);
  EXPECT_EQ(o.slow_nodes[0].rank, 3);
  EXPECT_TRUE(o.slow_links.empty());
  auto fs = outlier_findings(o, pairs, {});
  EXPECT_EQ(fs.back().id, "cluster.pair_failed");
  EXPECT_EQ(fs.back().evidence, "connect refused");
}

TEST(Outliers, TooFewPairsGiveNoVerdict) {
  auto o = detect_outliers(2, {{0, 1, 10.0, 90.0, ""}});
  EXPECT_FALSE(o.judged);
  EXPECT_TRUE(o.slow_nodes.empty() && o.slow_links.empty());
}

TEST(Render, MatrixFitsOneHundredColumnsAtAnySize) {
  for (int n : {4, 10, 11, 80, 1000}) {
    auto rounds = make_schedule(n, n > 100 ? PairsSpec{PairsMode::Random, 3} : PairsSpec{PairsMode::All, 0}, 1);
    auto pairs = measured(rounds, 100);
    pairs[0].a_to_b_gbps = 20;
    std::vector<std::string> names;
    for (int i = 0; i < n; ++i) names.push_back("a-rather-long-node-name-" + std::to_string(i));
    auto text = render_matrix(n, pairs, names, 100);
    ASSERT_FALSE(text.empty()) << n;
    std::size_t start = 0, lines = 0;
    while (start < text.size()) {
      auto end = text.find('\n', start);
      EXPECT_LE(end - start, 100u) << n << ": " << text.substr(start, end - start);
      start = end + 1;
      ++lines;
    }
    EXPECT_LE(lines, 100u) << n;
    if (n > 10) {
      EXPECT_NE(text.find('!'), std::string::npos) << n;  // the 20 Gb/s pair shows
    }
  }
}

TEST(Schedule, PeerAgreesWithTheRoundForEveryMode) {
  for (auto spec : {PairsSpec{PairsMode::All, 0}, PairsSpec{PairsMode::Ring, 0}, PairsSpec{PairsMode::Random, 3}})
    for (int n : {5, 8, 13}) {
      Schedule s(n, spec, 7);
      for (std::size_t k = 0; k < s.size(); ++k) {
        std::vector<int> expect(static_cast<std::size_t>(n), -1);
        for (auto [a, b] : s.round(k)) expect[static_cast<std::size_t>(a)] = b, expect[static_cast<std::size_t>(b)] = a;
        for (int r = 0; r < n; ++r) EXPECT_EQ(s.peer(k, r), expect[static_cast<std::size_t>(r)]) << n << " " << k;
      }
    }
}

TEST(Outliers, NoisyFabricStillCallsAPairBelowHalfTheMedianSlow) {
  // Noise of +-40 % (a VM under load): the MAD allowance alone would excuse anything.
  std::vector<PairResult> pairs;
  auto rounds = make_schedule(7, {PairsMode::All, 0}, 1);
  int k = 0;
  for (const auto& r : rounds)
    for (auto [a, b] : r) {
      double v = 100 * (0.6 + 0.8 * ((k++ * 7919) % 100) / 100.0);
      if (a == 4 || b == 4) v = 20;
      pairs.push_back({a, b, v, v, ""});
    }
  auto o = detect_outliers(7, pairs);
  EXPECT_GE(o.threshold_gbps, o.median_gbps * 0.5 - 1e-9);
  ASSERT_EQ(o.slow_nodes.size(), 1u);
  EXPECT_EQ(o.slow_nodes[0].rank, 4);
}

// The VM testbed's slow node is shaped to about 2 Mbit/s: its evidence said "0.0 Gb/s".
TEST(Outliers, SmallBandwidthsKeepThreeSignificantDigits) {
  auto pairs = measured(make_schedule(6, {PairsMode::All, 0}, 1), 0.0147);
  for (auto& p : pairs)
    if (p.a == 3 || p.b == 3) p.a_to_b_gbps = 0.00185, p.b_to_a_gbps = 0.00185;
  auto o = detect_outliers(6, pairs);
  ASSERT_EQ(o.slow_nodes.size(), 1u);
  auto fs = outlier_findings(o, pairs, {"vm0", "vm1", "vm2", "vm3", "vm4", "vm5"});
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_NE(fs[0].evidence.find("vm3: median of its pairs 0.00185 Gb/s; pair median 0.0146 Gb/s"),
            std::string::npos) << fs[0].evidence;
}

// Bandwidths below 1 Gb/s keep three significant digits: a node shaped to a few Mbit/s is not
// "0.0 Gb/s", and neither is the threshold it is judged by.
TEST(FormatGbps, SmallValuesKeepSignificantDigits) {
  using fabscope::cluster::format_gbps;
  EXPECT_EQ(format_gbps(0.00178), "0.00178");
  EXPECT_EQ(format_gbps(0.5), "0.5");
  EXPECT_EQ(format_gbps(0), "0.0");
  EXPECT_EQ(format_gbps(93.26), "93.3");
  EXPECT_EQ(format_gbps(std::numeric_limits<double>::infinity()), "-");
}
