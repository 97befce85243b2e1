// Rank 0's result of one pair from the reports of its two ends (cluster/pair_round.hpp): the
// rates each end measured, and what makes a pair failed instead of slow.
#include <gtest/gtest.h>

#include "cluster/pair_round.hpp"

using namespace fabscope;
using namespace fabscope::cluster;

namespace {

// Ranks 0, 2 and 5 joined (schedule indexes 0, 1, 2), every one with a tcp pair address.
RoundPlan three_nodes() {
  RoundPlan p;
  p.joined = {0, 2, 5};
  for (const char* name : {"n0", "n2", "n5"}) p.offers.push_back({name, std::string(name) + ":4000", "", "none"});
  p.spec = {PairsMode::All, 0};
  return p;
}

RunOptions named() {
  RunOptions o;
  o.node_names = {"n0", "n1", "n2", "n3", "n4", "n5"};
  return o;
}

std::string report(int peer, std::optional<double> rx, std::optional<double> tx, double wall_s,
                   const std::string& error = "") {
  return json{{"peer", peer}, {"rx_gbps", rx}, {"tx_gbps", tx}, {"wall_s", wall_s}, {"error", error}}.dump();
}

}  // namespace

TEST(ClusterPairRound, EachDirection_IsWhatItsReceiverCounted) {
  std::vector<std::optional<std::string>> reports(6);
  reports[2] = report(5, 9.5, std::nullopt, 4.1);
  reports[5] = report(2, 8.0, std::nullopt, 4.3);
  const PairResult pr = pair_result(three_nodes(), EngineMode::Tcp, 1, 2, reports, named());
  EXPECT_EQ(pr.a, 2);
  EXPECT_EQ(pr.b, 5);
  EXPECT_EQ(pr.engine, "tcp");
  EXPECT_EQ(pr.a_to_b_gbps, 8.0);
  EXPECT_EQ(pr.b_to_a_gbps, 9.5);
  EXPECT_EQ(pr.wall_seconds, 4.3);  // the slower side
  EXPECT_EQ(pr.error, "");
}

TEST(ClusterPairRound, WithoutAReceiverCount_TheWriterCounts) {
  std::vector<std::optional<std::string>> reports(6);
  reports[0] = report(2, std::nullopt, 20.0, 4.0);
  reports[2] = report(0, std::nullopt, 19.0, 4.0);
  const PairResult pr = pair_result(three_nodes(), EngineMode::Tcp, 0, 1, reports, named());
  EXPECT_EQ(pr.a_to_b_gbps, 20.0);
  EXPECT_EQ(pr.b_to_a_gbps, 19.0);
}

TEST(ClusterPairRound, LostEnd_FailsThePairWithoutRates) {
  std::vector<std::optional<std::string>> reports(6);
  reports[0] = report(2, 9.0, std::nullopt, 4.0);
  const PairResult pr = pair_result(three_nodes(), EngineMode::Tcp, 0, 1, reports, named());
  EXPECT_EQ(pr.error, "n2 was lost during the round");
  EXPECT_FALSE(pr.a_to_b_gbps);
  EXPECT_FALSE(pr.b_to_a_gbps);
}

TEST(ClusterPairRound, ReportAboutAnotherPeer_CountsAsNothingForThePair) {
  std::vector<std::optional<std::string>> reports(6);
  reports[0] = report(5, 9.0, std::nullopt, 4.0);
  reports[2] = report(0, 9.0, std::nullopt, 4.0, "connection refused");
  const PairResult pr = pair_result(three_nodes(), EngineMode::Tcp, 0, 1, reports, named());
  EXPECT_EQ(pr.error, "n0 reported nothing for the pair; n2: connection refused");
  EXPECT_FALSE(pr.a_to_b_gbps);
}

TEST(ClusterPairRound, NoEngineBothEndsOffer_NothingRan) {
  std::vector<std::optional<std::string>> reports(6);
  const PairResult pr = pair_result(three_nodes(), EngineMode::Rdma, 0, 2, reports, named());
  EXPECT_EQ(pr.engine, "");
  EXPECT_EQ(pr.error, pr.engine_reason);
  EXPECT_NE(pr.error.find("--engine rdma"), std::string::npos) << pr.error;
}
