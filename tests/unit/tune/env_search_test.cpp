// The environment search over a simulated "process" per measurement (a SimMeasurer built with
// the candidate's variables, as a fresh process would read them), and its rules on measured pairs.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "tune/env_search.hpp"
#include "tune/env_worker.hpp"
#include "tune/sim.hpp"

namespace fabscope::tune {
namespace {

using bench::Collective;

class SimProcesses : public EnvMeasurer {
 public:
  explicit SimProcesses(std::uint64_t seed, double noise = 0.03) : seed_(seed), noise_(noise) {}
  ProcessResult run_process(const EnvAssignment& env, double budget_s) override {
    SimModel model;
    model.env = env;
    model.noise_rel = noise_;
    SimMeasurer m(model, seed_ * 7919 + static_cast<std::uint64_t>(n_++));
    ProcessResult r;
    for (const auto& p : points) r.time_us.push_back(m.measure(p.collective, p.bytes, kNcclDefault, budget_s).time_us);
    r.nranks = 8;
    r.nnodes = 1;
    envs.push_back(env);
    return r;
  }
  std::int64_t processes() const override { return n_; }
  std::vector<EnvPoint> points;
  std::vector<EnvAssignment> envs;

 private:
  std::uint64_t seed_;
  double noise_;
  std::int64_t n_ = 0;
};

std::vector<EnvPoint> standard_points() {
  std::vector<EnvPoint> p;
  for (std::uint64_t b = 1024; b <= (1ull << 30); b *= 4) p.push_back({Collective::AllReduce, b});
  return p;
}

TEST(EnvSearch, FindsTheBufferSizeThatHelpsAndKeepsTheThreadsDefault) {
  for (std::uint64_t seed : {1u, 2u, 3u, 4u, 5u}) {
    SimProcesses m(seed);
    m.points = standard_points();
    auto r = run_env_search(m, m.points, env_groups(NetPath::None, 1, {}), EnvSearchRule{});
    ASSERT_EQ(r.groups.size(), 4u);
    EXPECT_TRUE(r.groups[0].kept) << seed << ": " << r.groups[0].reason;
    EXPECT_EQ(r.groups[0].best.label(), "NCCL_BUFFSIZE=8388608") << seed;
    EXPECT_FALSE(r.groups[1].kept) << seed << ": " << r.groups[1].reason;
    EXPECT_FALSE(r.groups[2].kept);
    EXPECT_FALSE(r.groups[3].kept);
    EXPECT_EQ(r.chosen.label(), "NCCL_BUFFSIZE=8388608") << seed;
    EXPECT_EQ(r.processes, m.processes());
  }
}

TEST(EnvSearch, ReportsEachSearchAndVerification) {
  SimProcesses m(1);
  m.points = standard_points();
  std::vector<std::string> lines;
  run_env_search(m, m.points, env_groups(NetPath::None, 1, {}), EnvSearchRule{},
                 [&](const std::string& l) { lines.push_back(l); });
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0], "NCCL_BUFFSIZE: 4 values, one process each");
  EXPECT_EQ(lines[1], "NCCL_BUFFSIZE: verifying NCCL_BUFFSIZE=8388608 against the base, 4 process pairs");
  EXPECT_EQ(lines[2], "NCCL_NTHREADS: 3 values, one process each on top of NCCL_BUFFSIZE=8388608");
}

TEST(EnvSearch, LaterSettingsAreMeasuredOnTopOfTheKeptOnes) {
  SimProcesses m(9);
  m.points = standard_points();
  auto r = run_env_search(m, m.points, env_groups(NetPath::None, 1, {}), EnvSearchRule{});
  ASSERT_TRUE(r.groups[0].kept);
  EXPECT_EQ(r.groups[1].base.label(), "NCCL_BUFFSIZE=8388608");
  for (const auto& t : r.groups[1].trials) EXPECT_NE(t.env.label().find("NCCL_BUFFSIZE=8388608"), std::string::npos);
}

TEST(EnvSearch, EveryMeasurementIsItsOwnProcessAndSkippedSettingsCostNone) {
  SimProcesses m(3);
  m.points = standard_points();
  EnvSpaceSpec spec;
  spec.only = {"socket", "qps"};
  auto r = run_env_search(m, m.points, env_groups(NetPath::None, 1, spec), EnvSearchRule{});
  EXPECT_EQ(m.processes(), 0);
  EXPECT_TRUE(r.chosen.is_default());
  EXPECT_NE(r.groups[0].reason.find("skipped"), std::string::npos);
}

TEST(EnvSearch, NothingHelpsMeansNothingChosen) {
  EnvGroup g{"NCCL_NTHREADS", "", {{}, {{{"NCCL_NTHREADS", "128"}}}, {{{"NCCL_NTHREADS", "256"}}}}, ""};
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    SimProcesses m(seed);
    m.points = standard_points();
    auto r = run_env_search(m, m.points, {g}, EnvSearchRule{});
    EXPECT_TRUE(r.chosen.is_default()) << seed << ": " << r.groups[0].reason;
  }
}

TEST(JudgeEnv, RefusesAGeometricMeanGainThatCostsOneSizeMoreThanTwoPercent) {
  EnvGroupOutcome g;
  g.best = {{{"NCCL_BUFFSIZE", "16777216"}}};
  // Four sizes: three 10% faster, one 3% slower, in every pair.
  std::vector<std::vector<double>> base, cand;
  for (int p = 0; p < 4; ++p) {
    const double wobble = 1 + 0.001 * p;
    base.push_back({100 * wobble, 200 * wobble, 300 * wobble, 400 * wobble});
    cand.push_back({90 * wobble, 180 * wobble, 270 * wobble, 412 * wobble});
  }
  judge_env(g, base, cand, EnvSearchRule{});
  EXPECT_FALSE(g.kept);
  EXPECT_GT(g.overall.speedup, 1.05);
  EXPECT_NE(g.reason.find("point 4"), std::string::npos) << g.reason;
}

TEST(JudgeEnv, KeepsAGainBeyondTheNoise) {
  EnvGroupOutcome g;
  g.best = {{{"NCCL_BUFFSIZE", "8388608"}}};
  std::vector<std::vector<double>> base{{100, 200}, {101, 199}, {99, 201}, {100, 200}};
  std::vector<std::vector<double>> cand{{95, 190}, {96, 189}, {94, 191}, {95, 190}};
  judge_env(g, base, cand, EnvSearchRule{});
  EXPECT_TRUE(g.kept) << g.reason;
  EXPECT_GT(g.overall.speedup_lo, 1.0);
}

TEST(JudgeEnv, KeepsNothingWithinTheNoise) {
  EnvGroupOutcome g;
  g.best = {{{"NCCL_NTHREADS", "256"}}};
  std::vector<std::vector<double>> base{{100, 200}, {104, 196}, {97, 205}, {101, 198}};
  std::vector<std::vector<double>> cand{{101, 198}, {98, 203}, {103, 199}, {99, 200}};
  judge_env(g, base, cand, EnvSearchRule{});
  EXPECT_FALSE(g.kept);
  EXPECT_NE(g.reason.find("not faster beyond the noise"), std::string::npos) << g.reason;
}

TEST(EnvSearch, AProcessReturningTheWrongNumberOfTimesIsAnError) {
  class Short : public EnvMeasurer {
   public:
    ProcessResult run_process(const EnvAssignment&, double) override { return ProcessResult{{1.0}, 2, 1, "", ""}; }
    std::int64_t processes() const override { return 0; }
  } m;
  std::vector<EnvPoint> pts{{Collective::AllReduce, 1024}, {Collective::AllReduce, 4096}};
  EXPECT_THROW(run_env_search(m, pts, env_groups(NetPath::None, 1, {}), EnvSearchRule{}), Error);
}

TEST(EnvSearchJson, RoundTrips) {
  SimProcesses m(5);
  m.points = standard_points();
  auto r = run_env_search(m, m.points, env_groups(NetPath::None, 1, {}), EnvSearchRule{});
  r.net_path = net_path_name(NetPath::None);
  r.launch = "test";
  const json j = env_search_json(r);
  const auto back = env_search_from_json(j);
  EXPECT_EQ(env_search_json(back), j);
  EXPECT_EQ(back.chosen, r.chosen);
}

TEST(EnvSearchJson, RejectsAForeignVariableNamingTheField) {
  SimProcesses m(5);
  m.points = {{Collective::AllReduce, 1024}};
  auto r = run_env_search(m, m.points, env_groups(NetPath::None, 1, {}), EnvSearchRule{});
  json j = env_search_json(r);
  j["chosen"] = json::array({{{"name", "LD_PRELOAD"}, {"value", "x.so"}}});
  try {
    env_search_from_json(j);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("LD_PRELOAD"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fabscope::tune
