// The time-weighted straggler rule: a delay before each training step lands in the step's first
// collective only, the step's other collectives are balanced. With two ranks the count test cannot
// tell the late rank's ~55% share of "least" from chance; the wait credited to it can.
#include <gtest/gtest.h>

#include <random>

#include "job/analysis.hpp"
#include "job/records.hpp"

using namespace fabscope::job;

namespace {

struct StepJob {
  int ranks = 2;
  int ops = 64;
  int per_step = 10;          // collectives per training step; the first absorbs the delay
  int slow = -1;              // the late rank
  double delay_ns = 0;        // before its step's first collective
  double spike_at = -1;       // or: one collective (index) where `slow` is late by delay_ns
  double base_ns = 2e6;
  double jitter_ns = 4e5;
  double gap_ns = 3e6;        // between collectives
  std::uint64_t seed = 1;
};

Snapshot step_job(const StepJob& s) {
  std::mt19937_64 rng(s.seed);
  std::uniform_real_distribution<double> jit(0, s.jitter_ns);
  Snapshot snap;
  snap.source = "synthetic steps";
  std::vector<RankRecord> recs(s.ranks);
  const std::uint64_t t0 = 1'800'000'000'000'000'000ull;
  for (int r = 0; r < s.ranks; r++) {
    recs[r].job_id = "j";
    recs[r].host = "h";
    recs[r].pid = 100 + r;
    recs[r].comm = "00000000000000bb";
    recs[r].rank = r;
    recs[r].nranks = s.ranks;
    recs[r].gpu = r;
  }
  double clock = 0;
  for (int i = 0; i < s.ops; i++) {
    const bool first = i % s.per_step == 0;
    std::vector<double> arrive(s.ranks);
    double last = 0;
    for (int r = 0; r < s.ranks; r++) {
      double late = 0;
      if (r == s.slow && s.spike_at < 0 && first) late = s.delay_ns;
      if (r == s.slow && s.spike_at == i) late = s.delay_ns;
      arrive[r] = clock + jit(rng) + late;
      last = std::max(last, arrive[r]);
    }
    const double end = last + s.base_ns;
    for (int r = 0; r < s.ranks; r++) {
      OpRecord o;
      o.seq = static_cast<std::uint64_t>(i);
      o.op = "AllReduce";
      o.bytes = 1 << 20;
      o.cpu_start_unix_ns = t0 + static_cast<std::uint64_t>(arrive[r]);
      o.gpu_start_ns = t0 + static_cast<std::uint64_t>(arrive[r]);
      o.gpu_stop_ns = t0 + static_cast<std::uint64_t>(end);
      o.done_unix_ns = t0 + static_cast<std::uint64_t>(end + 20000);
      recs[r].ops.push_back(o);
      recs[r].started = recs[r].completed = static_cast<std::uint64_t>(i + 1);
      recs[r].last_start_unix_ns = o.cpu_start_unix_ns;
      recs[r].last_done_unix_ns = o.done_unix_ns;
      recs[r].now_unix_ns = o.done_unix_ns + 1'000'000;
    }
    clock = end + s.gap_ns;
  }
  snap.ranks = std::move(recs);
  return snap;
}

int straggler_of(const Snapshot& s, const Options& o = {}) {
  Analysis a = analyze(s, o);
  EXPECT_EQ(a.comms.size(), 1u);
  return a.comms.empty() ? -1 : a.comms[0].straggler;
}

}  // namespace

TEST(TimeWeightedStraggler, TwoRanksLateBeforeEachStepAreNamedWhereTheCountTestIsNot) {
  int named = 0, by_count = 0;
  Options count_only;
  count_only.min_wait_dominance = 2;  // never met: the count test alone
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    StepJob j;
    j.slow = static_cast<int>(seed % 2);
    j.delay_ns = 6e6;  // 10% of a 10-collective step of ~6 ms each
    j.seed = seed;
    Snapshot s = step_job(j);
    named += straggler_of(s) == j.slow;
    by_count += straggler_of(s, count_only) == j.slow;
  }
  EXPECT_EQ(named, 20);
  EXPECT_LT(by_count, 10);
}

TEST(TimeWeightedStraggler, HealthyTwoRankJobsNameNoOne) {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    StepJob j;
    j.seed = seed;
    EXPECT_EQ(straggler_of(step_job(j)), -1) << "seed " << seed;
  }
}

TEST(TimeWeightedStraggler, OneStallIsNotAStraggler) {
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    StepJob j;
    j.slow = 1;
    j.spike_at = 40;
    j.delay_ns = 60e6;  // one collective 60 ms late: a third of the window's time
    j.seed = seed;
    EXPECT_EQ(straggler_of(step_job(j)), -1) << "seed " << seed;
  }
}
