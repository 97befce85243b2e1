// The outputs besides the table: bucket advice, optimize_config.py CSV, environment, report.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <sstream>

#include "core/error.hpp"
#include "ncclenv/render.hpp"
#include "support/fixtures.hpp"
#include "tune/advice.hpp"
#include "tune/render.hpp"
#include "tune/saved_result.hpp"
#include "tune/table.hpp"
#include "tune/sim.hpp"

namespace fabscope::tune {
namespace {

using bench::Collective;

TEST(BucketAdvice, SmallestSizeReachingNinetyPercentOfThePeak) {
  std::vector<CurvePoint> curve{{1 << 20, 60}, {4 << 20, 200}, {16 << 20, 300}, {64 << 20, 330}, {256 << 20, 340}};
  auto a = bucket_advice(Collective::AllReduce, curve);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->knee_bytes, 64u << 20);  // 0.9 * 340 = 306: 300 GB/s at 16 MiB falls short
  EXPECT_EQ(a->bucket_cap_mb, 64);
  EXPECT_EQ(a->peak_bytes, 256u << 20);
  EXPECT_FALSE(a->still_rising);
}

TEST(BucketAdvice, RoundsUpToWholeMiBAndSaysWhenStillRising) {
  std::vector<CurvePoint> curve{{1000, 1}, {3000000, 10}};
  auto a = bucket_advice(Collective::AllReduce, curve);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->bucket_cap_mb, 3);
  EXPECT_TRUE(a->still_rising);
  EXPECT_NE(a->advice.find("measure larger sizes"), std::string::npos);
  EXPECT_FALSE(bucket_advice(Collective::AllReduce, {{1024, 0}, {2048, 0}}));
  EXPECT_FALSE(bucket_advice(Collective::AllReduce, {}));
}

TEST(BucketAdvice, FsdpWordingForAllGather) {
  auto a = bucket_advice(Collective::AllGather, {{1 << 20, 50}, {8 << 20, 100}, {64 << 20, 101}});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->advice.rfind("FSDP: all_gather", 0), 0u) << a->advice;
}

TuneResult simulated() {
  SimMeasurer sim(SimModel{}, 11);
  TuneOptions o;
  o.sizes = {1 << 10, 1 << 20, 1 << 30};
  o.space.channels = {-1, 16, 32};
  TuneResult r = run_tune(sim, o);
  r.simulated = true;
  r.source = "simulated model, seed 11";
  return r;
}

TEST(OptimizeConfigCsv, HeaderAndOneLinePerExplicitMeasurement) {
  TuneResult r = simulated();
  std::string csv = optimize_config_csv(r);
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "collective,size_bytes,algorithm,protocol,channels,nodes,ranks,pipeOps,regBuff,bandwidth_gbps,latency_us");
  std::size_t lines = 0, explicit_trials = 0;
  while (std::getline(in, line)) {
    ++lines;
    EXPECT_EQ(std::count(line.begin(), line.end(), ','), 10) << line;
    EXPECT_EQ(line.rfind("allreduce,", 0), 0u) << line;
  }
  for (const auto& s : r.collectives[0].sizes)
    for (const auto& t : s.search.trials) explicit_trials += t.choice.algo >= 0;
  EXPECT_EQ(lines, explicit_trials);
}

TEST(TunedEnv, LoadsThePluginAndTheTableWithReasons) {
  TuneResult r = simulated();
  auto rows = table_rows(r);
  auto plan = tuned_env(r, rows, "/opt/fabscope/lib/libnccl-tuner-fabscope.so", "/etc/fabscope/nccl_tuner.csv");
  ASSERT_NE(plan.find("NCCL_TUNER_PLUGIN"), nullptr);
  EXPECT_EQ(plan.find("NCCL_TUNER_CONFIG_FILE")->value, "/etc/fabscope/nccl_tuner.csv");
  std::string text = ncclenv::render(plan, ncclenv::Format::EnvFile, {});
  EXPECT_NE(text.find("NCCL_TUNER_CONFIG_FILE=/etc/fabscope/nccl_tuner.csv"), std::string::npos) << text;
  EXPECT_NE(text.find("SIMULATED"), std::string::npos) << text;
}

TEST(Report, TextFitsOneHundredColumnsAndJsonIsVersioned) {
  TuneResult r = simulated();
  auto rows = table_rows(r);
  auto advice = advise(r);
  std::string text = render_report(r, rows, advice);
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) EXPECT_LE(line.size(), 100u) << line;
  EXPECT_NE(text.find("SIMULATED"), std::string::npos);
  EXPECT_NE(text.find("DDP bucket_cap_mb="), std::string::npos) << text;
  json j = report_json(r, rows, advice);
  EXPECT_EQ(j["schema"], "fabscope.tune");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["collectives"][0]["sizes"].size(), 3u);
  EXPECT_EQ(j["table"].size(), rows.size());
  EXPECT_TRUE(j["env_search"].is_null());
  EXPECT_TRUE(j["compute_load"].is_null());
}

// An environment search with one kept setting and one skipped, under a compute load.
TuneResult with_env_and_load() {
  TuneResult r = simulated();
  EnvSearchResult e;
  e.net_path = "none (one node)";
  e.launch = "this binary re-executed, local launcher";
  e.points = {{Collective::AllReduce, 1 << 20}};
  e.processes = 17;
  EnvGroupOutcome kept;
  kept.group = {"NCCL_BUFFSIZE", "bytes of the Simple protocol's buffer", {{}, {{{"NCCL_BUFFSIZE", "8388608"}}}}, ""};
  kept.best = {{{"NCCL_BUFFSIZE", "8388608"}}};
  kept.verified = kept.kept = true;
  kept.reason = "NCCL_BUFFSIZE=8388608: geometric-mean speedup +4.8% [+4.1%, +5.4%] over 4 process pairs; kept";
  EnvGroupOutcome skipped;
  skipped.group = {"NCCL_IB_QPS_PER_CONNECTION", "QPs", {{}}, "one node: no network transport between the ranks"};
  e.groups = {kept, skipped};
  e.chosen = kept.best;
  r.env = e;
  r.compute_load_pct = 50;
  r.compute_load_busy_share = 0.97;
  return r;
}

TEST(BucketAdvice, ComesFromTheCurveMeasuredWithTheKeptEnvironment) {
  // One socket thread still rises at 1 GiB; with two the all-reduce peaks from 64 MiB on.
  TuneResult r = simulated();
  const std::string table_only = advise(r).at(0).advice;
  EnvSearchResult e;
  e.points = {{Collective::AllReduce, 1 << 20}, {Collective::AllReduce, 64 << 20}, {Collective::AllReduce, 1 << 30}};
  EnvGroupOutcome g;
  g.best = {{{"NCCL_SOCKET_NTHREADS", "2"}, {"NCCL_NSOCKS_PERTHREAD", "1"}}};
  g.verified = g.kept = true;
  for (double us : {1000.0, 7000.0, 108000.0}) {
    Verdict v;
    v.default_us = us * 3;
    v.tuned_us = us;
    g.per_point.push_back(v);
  }
  e.groups = {g};
  e.chosen = g.best;
  r.env = e;
  auto a = advise(r);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].bucket_cap_mb, 64);
  EXPECT_EQ(a[0].knee_bytes, 64u << 20);
  EXPECT_NE(a[0].advice.find("(measured with NCCL_SOCKET_NTHREADS=2 NCCL_NSOCKS_PERTHREAD=1)"), std::string::npos)
      << a[0].advice;
  // The check of table and values together, where there is one, is the curve the job runs.
  CombinedCheck c;
  c.env = e.chosen;
  c.verified = c.kept = true;
  for (double us : {1000.0, 20000.0, 108000.0}) {  // 64 MiB at 36% of the peak: the knee is 1 GiB
    Verdict v;
    v.tuned_us = us;
    c.per_point.push_back(v);
  }
  r.env->combined = c;
  EXPECT_EQ(advise(r).at(0).bucket_cap_mb, 1024);
  // Values dropped (nothing chosen): the table's own curve again.
  r.env->chosen = {};
  EXPECT_EQ(advise(r).at(0).advice, table_only);
}

TEST(Report, EnvironmentSearchAndComputeLoadAreReported) {
  TuneResult r = with_env_and_load();
  auto rows = table_rows(r);
  std::string text = render_report(r, rows, advise(r));
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) EXPECT_LE(line.size(), 100u) << line;
  EXPECT_NE(text.find("17 processes"), std::string::npos) << text;
  EXPECT_NE(text.find("NCCL_BUFFSIZE: set NCCL_BUFFSIZE=8388608"), std::string::npos) << text;
  EXPECT_NE(text.find("skipped: one node"), std::string::npos) << text;
  EXPECT_NE(text.find("50% of the SMs"), std::string::npos) << text;
  EXPECT_NE(text.find("97% of the measured time"), std::string::npos) << text;
  json j = report_json(r, rows, advise(r));
  EXPECT_EQ(j["env_search"]["chosen"][0]["name"], "NCCL_BUFFSIZE");
  EXPECT_EQ(j["compute_load"]["sm_percent"], 50.0);
}

TEST(TunedEnv, KeptSettingsComeWithTheirReasonAndMeasuredGain) {
  TuneResult r = with_env_and_load();
  auto plan = tuned_env(r, table_rows(r), "/usr/lib/fabscope/libnccl-tuner-fabscope.so", "/etc/t.csv");
  auto it = std::find_if(plan.vars.begin(), plan.vars.end(), [](const auto& v) { return v.name == "NCCL_BUFFSIZE"; });
  ASSERT_NE(it, plan.vars.end());
  EXPECT_EQ(it->value, "8388608");
  EXPECT_NE(it->evidence.find("+4.8%"), std::string::npos) << it->evidence;
  bool noted = false;
  for (const auto& n : plan.notes) noted |= n.find("NCCL_IB_QPS_PER_CONNECTION") != std::string::npos;
  EXPECT_TRUE(noted);
  const std::string file = ncclenv::render(plan, ncclenv::Format::EnvFile, {});
  EXPECT_NE(file.find("NCCL_BUFFSIZE=8388608"), std::string::npos) << file;
}

// --launch reads the table job's tune.json back: every field the outputs use comes back.
TEST(ResultJson, RoundTripsEveryKindOfRun) {
  SimModel no_tree;
  no_tree.unavailable_algos = {static_cast<int>(Algo::Tree)};  // trials NCCL could not run
  SimMeasurer sim(no_tree, 5);
  TuneOptions o;
  o.sizes = {1 << 20, 1 << 30};
  o.space.channels = {-1, 32};
  o.compute_load_pct = 40;
  TuneResult loaded = run_tune(sim, o);
  loaded.source = "simulated model, seed 5";
  loaded.compute_load_busy_share = 0.93;
  for (const TuneResult& r : {simulated(), with_env_and_load(), loaded}) {
    const auto rows = table_rows(r);
    const json j = report_json(r, rows, advise(r));
    const TuneResult back = saved_result_from_json("tune.json", json::parse(j.dump())).run;
    EXPECT_EQ(report_json(back, table_rows(back), advise(back)), j);
    EXPECT_EQ(render_report(back, table_rows(back), advise(back)), render_report(r, rows, advise(r)));
    EXPECT_EQ(optimize_config_csv(back), optimize_config_csv(r));
  }
  EXPECT_NE(render_report(loaded, table_rows(loaded), advise(loaded)).find("could not run here"), std::string::npos);
}

// The one reader (tune --launch and report) gives back the table rows and the advice as written,
// so the whole document comes back: every kind of run, and the shipped tune.json of the first
// layout (which lacks the keys added later: they come back as null).
TEST(ResultJson, TheWholeDocumentComesBack) {
  for (const TuneResult& r : {simulated(), with_env_and_load()}) {
    const auto rows = table_rows(r);
    const json j = report_json(r, rows, advise(r));
    const SavedResult back = saved_result_from_json("tune.json", json::parse(j.dump()));
    EXPECT_EQ(back.table, rows);
    EXPECT_EQ(report_json(back.run, back.table, back.advice), j);
  }
  std::ifstream in(fabscope::testing::fixture("tune-simulated/seed1-all_reduce-all_gather.json"));
  json j = json::parse(in);
  const SavedResult back = saved_result_from_json("seed1.json", j);
  ASSERT_FALSE(back.table.empty());
  ASSERT_FALSE(back.advice.empty());
  j["compute_load"] = nullptr;
  j["env_search"] = nullptr;
  for (auto& c : j["collectives"])
    for (auto& z : c["sizes"]) z["idle"] = nullptr;
  EXPECT_EQ(report_json(back.run, back.table, back.advice), j);
}

// Real runs on 2x H200 (tests/fixtures/tune-h200x2): the rows read from each tune.json are the
// rows the plugin reads from the nccl_tuner.csv the same run wrote, the table computed again from
// the run read back is that table, and the whole document (the newest layout, with an environment
// search) comes back.
TEST(ResultJson, RealRunsReadBackAsTheirTables) {
  for (const std::string run : {"table", "launch"}) {
    std::ifstream in(fabscope::testing::fixture("tune-h200x2/" + run + ".json"));
    const json j = json::parse(in);
    const SavedResult back = saved_result_from_json(run + ".json", j);
    EXPECT_FALSE(back.run.simulated);
    const auto csv = read_table_file(fabscope::testing::fixture("tune-h200x2/" + run + "-nccl_tuner.csv").string());
    ASSERT_FALSE(csv.empty()) << run;
    EXPECT_EQ(back.table, csv) << run;
    EXPECT_EQ(table_rows(back.run), csv) << run;
    EXPECT_EQ(report_json(back.run, back.table, back.advice), j) << run;
    EXPECT_EQ(back.run.env.has_value(), run == "launch");
  }
}

// What the report shows is checked where it is read: each error names the file and the field.
TEST(ResultJson, ValuesThatContradictEachOtherAreErrors) {
  const TuneResult r = simulated();
  const json good = report_json(r, table_rows(r), advise(r));
  ASSERT_FALSE(good["table"].empty());
  auto error_of = [&](const std::function<void(json&)>& edit) -> std::string {
    json j = good;
    edit(j);
    try {
      saved_result_from_json("t.json", j);
    } catch (const Error& e) {
      return e.what();
    }
    return "(accepted)";
  };
  std::size_t v = 0;  // a verified size
  while (v < good["collectives"][0]["sizes"].size() && !good["collectives"][0]["sizes"][v]["verified"].get<bool>()) ++v;
  ASSERT_LT(v, good["collectives"][0]["sizes"].size());
  const std::string at = "t.json: field 'collectives[0].sizes[" + std::to_string(v) + "].";
  EXPECT_EQ(error_of([&](json& j) { j["collectives"][0]["sizes"][v]["pairs"] = 0; }),
            at + "verified': true with 0 pairs measured");
  EXPECT_EQ(error_of([&](json& j) { j["collectives"][0]["sizes"][v]["speedup"] = 0; }),
            at + "speedup': expected a positive number");
  EXPECT_EQ(error_of([&](json& j) { j["collectives"][0]["sizes"][v]["speedup_ci95"] = nullptr; }),
            at + "speedup_ci95': expected [low, high], got null");
  EXPECT_EQ(error_of([&](json& j) { j["collectives"][0]["sizes"][v]["speedup_ci95"] = json::array({1.0}); }),
            at + "speedup_ci95': expected [low, high], got an array");
  EXPECT_EQ(error_of([&](json& j) { j["table"][0]["collective"] = "alltoall"; }),
            "t.json: field 'table[0].collective': 'alltoall' is not a collective of the tuner table");
  EXPECT_EQ(error_of([&](json& j) {
              j["table"][0]["min_bytes"] = 4096;
              j["table"][0]["max_bytes"] = 1024;
            }),
            "t.json: field 'table[0].max_bytes': 1024 is below min_bytes 4096");
  EXPECT_EQ(error_of([&](json& j) { j.erase("advice"); }), "t.json: field 'advice': missing");
  EXPECT_EQ(error_of([&](json& j) { j["collectives"][0]["collective"] = "all_sum"; }),
            "t.json: field 'collectives[0].collective': unknown collective 'all_sum'");
  EXPECT_EQ(error_of([&](json& j) { j["schema_version"] = 2; }),
            "t.json: field 'schema_version': this fabscope reads version 1, got 2");
}

// A tune.json of the first layout of version 1 (tests/fixtures/tune-simulated, written before
// sizes[].idle existed) reads back, as a run without a compute load: no size verified idle.
TEST(ResultJson, FileWithoutIdle_ReadsAsNoIdleVerification) {
  std::ifstream in(fabscope::testing::fixture("tune-simulated/seed1-all_reduce-all_gather.json"));
  std::stringstream text;
  text << in.rdbuf();
  const json j = json::parse(text.str());
  ASSERT_FALSE(j["collectives"][0]["sizes"][0].contains("idle"));
  const TuneResult r = saved_result_from_json("tune.json", j).run;
  ASSERT_EQ(r.collectives.size(), 2u);
  for (const auto& c : r.collectives)
    for (const auto& s : c.sizes) EXPECT_FALSE(s.idle.has_value()) << s.bytes;
  // And the idle key present but null (the later layout without a load) reads the same.
  json with_null = j;
  for (auto& c : with_null["collectives"])
    for (auto& s : c["sizes"]) s["idle"] = nullptr;
  const TuneResult back = saved_result_from_json("tune.json", with_null).run;
  EXPECT_EQ(report_json(back, table_rows(back), advise(back)), report_json(r, table_rows(r), advise(r)));
}

TEST(ResultJson, ABrokenFileIsAnErrorNamingTheField) {
  TuneResult r = simulated();
  auto error_of = [](const json& j) -> std::string {
    try {
      saved_result_from_json("tune.json", j);
    } catch (const Error& e) {
      return e.what();
    }
    return "(accepted)";
  };
  json j = report_json(r, table_rows(r), advise(r));
  j["collectives"][0]["sizes"][1]["written"]["label"] = "ring/fast/8ch";
  std::string e = error_of(j);
  EXPECT_NE(e.find("'ring/fast/8ch'"), std::string::npos) << e;
  j = report_json(r, table_rows(r), advise(r));
  j["collectives"][0]["sizes"][2].erase("rungs");
  e = error_of(j);
  EXPECT_NE(e.find("collectives[0].sizes[2].rungs"), std::string::npos) << e;
  j = report_json(r, table_rows(r), advise(r));
  j["collectives"][0]["sizes"][0]["bytes"] = 1e300;  // not an integer: refused, never cast
  e = error_of(j);
  EXPECT_NE(e.find(".bytes'"), std::string::npos) << e;
  j = report_json(r, table_rows(r), advise(r));
  j["schema"] = "fabscope.bench";
  EXPECT_THROW(saved_result_from_json("tune.json", j), Error);
}

TEST(ChoiceLabel, ParsesWhatLabelWritesAndNothingElse) {
  for (const Choice& c : {kNcclDefault, Choice{1, 2, 16}, Choice{0, 0, -1}, Choice{-1, -1, 8}, Choice{6, 1, 32}})
    EXPECT_EQ(choice_from_label(label(c)), c) << label(c);
  for (const char* bad : {"", "ring", "ring/simple", "ring/simple/0ch", "ring/simple/99ch", "warp/simple/8ch",
                          "ring/simple/8", "nccl-algo/nccl-ch", "ring//8ch"})
    EXPECT_THROW(choice_from_label(bad), Error) << bad;
}

TEST(TunedEnv, ValuesDroppedByTheCombinedCheckBecomeNotes) {
  TuneResult r = with_env_and_load();
  r.env->table = "/shared/tune/nccl_tuner.csv";
  CombinedCheck c;
  c.env = r.env->chosen;
  c.verified = true;
  c.kept = false;
  c.reason = "the table with NCCL_BUFFSIZE=8388608 against NCCL's defaults: ...; point 1 is -2.4% (slower than "
             "NCCL's defaults by more than 2.0%): the values are dropped, the table alone stays";
  r.env->combined = c;
  r.env->chosen = {};
  auto plan = tuned_env(r, table_rows(r), "/usr/lib/fabscope/libnccl-tuner-fabscope.so", "/etc/t.csv");
  for (const auto& v : plan.vars) EXPECT_NE(v.name, "NCCL_BUFFSIZE");
  bool noted = false;
  for (const auto& n : plan.notes) noted |= n.find("NCCL_BUFFSIZE: NCCL_BUFFSIZE=8388608 was faster on top of the table") == 0;
  EXPECT_TRUE(noted);
  const std::string text = render_report(r, table_rows(r), advise(r));
  EXPECT_NE(text.find("# both together: the table with NCCL_BUFFSIZE=8388608"), std::string::npos) << text;
  EXPECT_NE(text.find("# every process loaded the table searched first"), std::string::npos) << text;
  EXPECT_NE(text.find("# chosen: nothing"), std::string::npos) << text;
}

}  // namespace
}  // namespace fabscope::tune
