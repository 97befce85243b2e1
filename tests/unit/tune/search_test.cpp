// The search and the verification rule on the simulated cost model (tune/sim.hpp), fixed seeds.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.hpp"
#include "tune/halving.hpp"
#include "tune/sim.hpp"
#include "tune/space.hpp"
#include "tune/table.hpp"
#include "tune/tune.hpp"
#include "tune/verify.hpp"

namespace fabscope::tune {
namespace {

using bench::Collective;

Choice true_best(const SimMeasurer& sim, Collective c, std::uint64_t bytes, const std::vector<Choice>& cands) {
  Choice best = cands.front();
  for (const auto& ch : cands)
    if (sim.true_time_us(c, bytes, ch) < sim.true_time_us(c, bytes, best)) best = ch;
  return best;
}

TuneOptions standard_options() {
  TuneOptions o;
  for (std::uint64_t b = 1024; b <= (1ull << 30); b *= 4) o.sizes.push_back(b);
  return o;
}

TEST(SuccessiveHalving, FindsTheTrueBestWithoutNoise) {
  SimModel model;
  model.noise_rel = 0;
  SimMeasurer sim(model, 1);
  auto cands = candidates(Collective::AllReduce, SpaceSpec{}, 1, 8);
  for (std::uint64_t bytes : {4096ull, 1ull << 20, 1ull << 30}) {
    auto r = successive_halving(sim, Collective::AllReduce, bytes, cands, HalvingRule{});
    const Choice best = true_best(sim, Collective::AllReduce, bytes, cands);
    EXPECT_DOUBLE_EQ(sim.true_time_us(Collective::AllReduce, bytes, r.best),
                     sim.true_time_us(Collective::AllReduce, bytes, best))
        << bytes << ": " << label(r.best) << " vs " << label(best);
  }
}

TEST(SuccessiveHalving, FindsANearBestChoiceUnderNoise) {
  SimMeasurer sim(SimModel{}, 42);
  auto cands = candidates(Collective::AllReduce, SpaceSpec{}, 1, 8);
  const std::uint64_t bytes = 256ull << 20;
  auto r = successive_halving(sim, Collective::AllReduce, bytes, cands, HalvingRule{});
  const double best = sim.true_time_us(Collective::AllReduce, bytes, true_best(sim, Collective::AllReduce, bytes, cands));
  EXPECT_LE(sim.true_time_us(Collective::AllReduce, bytes, r.best), best * 1.02) << label(r.best);
}

TEST(SuccessiveHalving, MeasuresFarFewerThanEveryCandidateAtEveryRung) {
  SimMeasurer sim(SimModel{}, 3);
  auto cands = candidates(Collective::AllReduce, SpaceSpec{}, 1, 8);
  HalvingRule rule;
  auto r = successive_halving(sim, Collective::AllReduce, 1 << 20, cands, rule);
  // 43 candidates: 42 + 14 + 5 + 2 others and the default at each of 4 rungs.
  EXPECT_EQ(r.rungs, 4);
  EXPECT_LT(r.trials.size(), cands.size() * 2);
  double exhaustive_s = cands.size() * rule.first_budget_s * 27;  // all at the last rung's budget
  EXPECT_LT(sim.timed_s(), exhaustive_s / 4);
}

TEST(SuccessiveHalving, ChoicesNcclCannotRunAreDroppedAndReported) {
  SimModel model;
  model.unavailable_algos = {static_cast<int>(Algo::Tree)};
  SimMeasurer sim(model, 5);
  auto cands = candidates(Collective::AllReduce, SpaceSpec{}, 1, 8);
  auto r = successive_halving(sim, Collective::AllReduce, 4096, cands, HalvingRule{});
  EXPECT_NE(r.best.algo, static_cast<int>(Algo::Tree));
  EXPECT_EQ(r.unavailable.size(), 21u);  // tree x 3 protocols x 7 channel counts
}

TEST(SuccessiveHalving, RefusesAListWithoutTheDefaultFirst) {
  SimMeasurer sim(SimModel{}, 1);
  EXPECT_THROW(successive_halving(sim, Collective::AllReduce, 1024, {Choice{1, 2, 8}}, HalvingRule{}), Error);
}

TEST(Verification, KeepsAClearlyFasterChoice) {
  VerifyRule rule;
  auto v = judge_pairs({100, 101, 99, 100, 102, 100}, {90, 91, 89, 90, 92, 90}, rule);
  EXPECT_TRUE(v.keep_tuned) << v.reason;
  EXPECT_GT(v.speedup_lo, 1.0);
  EXPECT_NEAR(v.speedup, 1.111, 0.01);
}

TEST(Verification, KeepsTheDefaultWhenTheGainIsWithinTheNoise) {
  auto v = judge_pairs({100, 90, 110, 95, 105, 100}, {98, 97, 101, 94, 99, 100}, VerifyRule{});
  EXPECT_FALSE(v.keep_tuned);
  EXPECT_NE(v.reason.find("not faster beyond the noise"), std::string::npos) << v.reason;
}

TEST(Verification, RefusesASlowerChoiceWhateverTheInterval) {
  auto v = judge_pairs({100, 100, 100}, {103, 103, 103}, VerifyRule{});
  EXPECT_FALSE(v.keep_tuned);
  EXPECT_NE(v.reason.find("slower"), std::string::npos) << v.reason;
}

TEST(Verification, NeedsTwoPairs) {
  EXPECT_THROW(judge_pairs({1}, {1}, VerifyRule{}), Error);
}

TEST(Tune, FindsTheGainWhereNcclsDefaultIsWrong) {
  // The model's default uses 16 channels; 24 or more are faster for large all-reduce.
  SimMeasurer sim(SimModel{}, 11);
  auto r = run_tune(sim, standard_options());
  const auto& sizes = r.collectives.at(0).sizes;
  const auto& largest = sizes.back();
  ASSERT_FALSE(largest.written.is_default()) << largest.verdict.reason;
  EXPECT_GT(largest.written.channels, 16);
  EXPECT_GT(largest.verdict.speedup_lo, 1.0);
}

TEST(Tune, KeepsTheDefaultWhereNothingIsBetter) {
  // With every protocol and channel count but NCCL's pick's removed, nothing can beat it.
  SimModel model;
  SimMeasurer sim(model, 9);
  TuneOptions o;
  o.sizes = {1ull << 30};
  o.space.algos = {static_cast<int>(Algo::Ring)};
  o.space.protos = {static_cast<int>(Proto::Simple)};
  o.space.channels = {-1, model.default_channels};  // both are exactly NCCL's pick
  auto r = run_tune(sim, o);
  const auto& s = r.collectives.at(0).sizes.at(0);
  EXPECT_TRUE(s.written.is_default()) << label(s.written) << ": " << s.verdict.reason;
  EXPECT_TRUE(table_rows(r).empty());
}

class NeverSlower : public ::testing::TestWithParam<int> {};

TEST_P(NeverSlower, NoWrittenChoiceIsSlowerThanTheDefaultBeyondTwoPercent) {
  SimModel model;
  model.noise_rel = 0.06;  // noisier than a real GPU, to stress the rule
  SimMeasurer sim(model, static_cast<std::uint64_t>(GetParam()));
  TuneOptions o = standard_options();
  o.collectives = {Collective::AllReduce, Collective::AllGather};
  auto r = run_tune(sim, o);
  int written = 0;
  for (const auto& co : r.collectives)
    for (const auto& s : co.sizes) {
      if (s.written.is_default()) continue;
      ++written;
      const double def = sim.true_time_us(co.collective, s.bytes, kNcclDefault);
      const double tuned = sim.true_time_us(co.collective, s.bytes, s.written);
      EXPECT_LE(tuned, def * 1.02) << s.bytes << " " << label(s.written);
    }
  EXPECT_GT(written, 0);  // the model leaves room at large sizes: the rule is not vacuous
}

INSTANTIATE_TEST_SUITE_P(Seeds, NeverSlower, ::testing::Values(1, 2, 3, 4, 5, 6, 7, 8));

TEST(Space, CandidatesFollowWhatNcclImplements) {
  auto ar = candidates(Collective::AllReduce, SpaceSpec{}, 1, 8);
  EXPECT_TRUE(ar.front().is_default());
  EXPECT_EQ(ar.size(), 1u + 7 * 2 * 3);  // channels x {tree, ring} x protocols
  auto bc = candidates(Collective::Broadcast, SpaceSpec{}, 1, 8);
  EXPECT_EQ(bc.size(), 1u + 7 * 3);  // ring only
  for (const auto& c : bc) EXPECT_TRUE(c.is_default() || c.algo == static_cast<int>(Algo::Ring));
  auto ag = candidates(Collective::AllGather, SpaceSpec{}, 4, 4);  // one rank per node: PAT
  EXPECT_TRUE(std::any_of(ag.begin(), ag.end(), [](const Choice& c) { return c.algo == static_cast<int>(Algo::Pat); }));
  SpaceSpec nvls;
  nvls.nvls = true;
  auto with = candidates(Collective::AllReduce, nvls, 1, 8);
  for (const auto& c : with)
    if (c.algo == static_cast<int>(Algo::Nvls)) {
      EXPECT_EQ(c.proto, static_cast<int>(Proto::Simple));
    }
  EXPECT_THROW(candidates(Collective::AlltoAll, SpaceSpec{}, 1, 8), UsageError);
  SpaceSpec tree_only;
  tree_only.algos = {static_cast<int>(Algo::Tree)};
  EXPECT_THROW(candidates(Collective::AllGather, tree_only, 1, 8), UsageError);
}

TEST(Space, ListsParseAndNameTheBadElement) {
  EXPECT_EQ(parse_algos("ring, Tree"), (std::vector<int>{1, 0}));
  EXPECT_EQ(parse_protos("simple,ll"), (std::vector<int>{2, 0}));
  EXPECT_EQ(parse_channels("-1,8,8,32"), (std::vector<int>{-1, 8, 32}));
  try {
    parse_algos("ring,rings");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'rings'"), std::string::npos);
  }
  EXPECT_THROW(parse_channels("0"), UsageError);
  EXPECT_THROW(parse_channels("65"), UsageError);
  EXPECT_THROW(parse_channels("8x"), UsageError);
  EXPECT_THROW(parse_protos(""), UsageError);
}

TEST(RunTune, UnderAComputeLoadEveryWrittenChoiceIsAlsoVerifiedIdle) {
  SimModel model;
  SimMeasurer sim(model, 11);
  TuneOptions o = standard_options();
  o.compute_load_pct = 50;
  TuneResult r = run_tune(sim, o);
  EXPECT_EQ(r.compute_load_pct, 50);
  int written = 0;
  for (const auto& s : r.collectives[0].sizes) {
    EXPECT_EQ(s.idle.has_value(), !s.written.is_default()) << s.bytes;
    if (!s.idle) continue;
    ++written;
    EXPECT_EQ(s.idle->pairs, o.verify.pairs);
  }
  EXPECT_GT(written, 0);
  // The measurer is left under the load the table was made for.
  SimMeasurer loaded(model, 3), idle(model, 3);
  loaded.set_compute_load(50);
  EXPECT_GT(loaded.true_time_us(Collective::AllReduce, 1 << 30, kNcclDefault),
            idle.true_time_us(Collective::AllReduce, 1 << 30, kNcclDefault));
}

TEST(RunTune, IdleRunsHaveNoIdleVerdict) {
  SimMeasurer sim(SimModel{}, 11);
  TuneResult r = run_tune(sim, standard_options());
  for (const auto& s : r.collectives[0].sizes) EXPECT_FALSE(s.idle.has_value());
}

}  // namespace
}  // namespace fabscope::tune
