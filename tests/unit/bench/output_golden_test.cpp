// Output formats against golden files (tests/golden/bench/): the nccl-tests text table and
// summary lines, CSV and JSON, rendered from one report. The rows are numbers measured on the
// 2x H200 device node (bench/RESULTS.md); environment fields that change per run (date, pid)
// are fixed here. After an intended change, regenerate with
//   FABSCOPE_UPDATE_GOLDEN=1 <build>/tests/fabscope_bench_tests --gtest_filter='Golden*'
// and review the diff.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "bench/efficiency.hpp"
#include "bench/nccltests_json.hpp"
#include "bench/output.hpp"
#include "support/fixtures.hpp"
#include "support/golden.hpp"

using namespace fabscope;
using namespace fabscope::bench;

namespace {

void compare(const std::string& name, const std::string& actual) {
  fabscope::testing::expect_golden_text("bench/" + name, actual);
}

struct Row {
  std::uint64_t bytes;
  double oop_us;
  double ip_us;
  std::int64_t iters;
  double ci;
};

// all_reduce float sum on 2x H200 (NV18), local launcher, adaptive iterations: five sizes of
// the 8 B..4 GiB sweep of bench/RESULTS.md (out-of-place iterations and CI for both placements).
Report h200_report() {
  Report r;
  r.options = parse_options({"--sizes", "8,1M,16M,256M,1G", "--no-progress"});
  r.env.hostname = "h200x2";
  r.env.launcher = "local";
  r.env.launch_evidence = "no MPI or torchrun variables";
  r.env.nranks = 2;
  r.env.processes = 1;
  r.env.nccl_version = "2.28.3";
  r.env.cuda_driver = "13.0";
  r.env.cuda_runtime = "13.0";
  r.env.nvidia_driver = "580.159.04";
  r.env.fabscope_version = "0.1.0";
  r.env.nccl_env = {{"NCCL_NVLS_ENABLE", "0"}};
  r.env.date_utc = "2026-11-23T00:00:00Z";
  for (int i = 0; i < 2; ++i)
    r.devices.push_back({i, "h200x2", 4242, i, i == 0 ? "0000:00:06.0" : "0000:00:07.0", "NVIDIA H200"});
  r.topo.gpus = 2;
  r.topo.nvlink_active = 18;
  r.topo.nvlink_link_gbytes_per_s = 25;
  r.topo.nvlink_rate_source = "NVML NVLink version 6";
  const Row rows[] = {
      {8, 11.69, 11.15, 456, 0.0951},
      {1048576, 13.10, 13.15, 111, 0.0048},
      {16777216, 77.63, 74.41, 21, 0.0065},
      {268435456, 895.98, 902.22, 3, 0.0049},
      {1073741824, 3292.01, 3231.15, 3, 0.0292},
  };
  const auto& d = describe(Collective::AllReduce);
  for (const auto& row : rows) {
    SizeResult s;
    s.bytes = row.bytes;
    s.count = row.bytes / 4;
    s.out_of_place = make_timing(d, 2, row.bytes, row.oop_us);
    s.in_place = make_timing(d, 2, row.bytes, row.ip_us);
    for (Timing* t : {&s.out_of_place, &*s.in_place}) {
      t->wrong = 0;
      t->iterations = row.iters;
      t->batches = 3;
      t->rel_ci = row.ci;
    }
    r.results.push_back(s);
  }
  summarise(r);
  judge(r);
  r.summary.sweep_s = 1.25;
  return r;
}

}  // namespace

TEST(Golden, TextTableKeepsNcclTestsColumnsAndSummaryLines) {
  compare("h200x2-all_reduce.txt", render_text(h200_report()));
}

TEST(Golden, Csv) { compare("h200x2-all_reduce.csv", render_csv(h200_report())); }

TEST(Golden, Json) { compare("h200x2-all_reduce.json", report_json(h200_report()).dump(2) + "\n"); }

namespace {
NcclTestsJsonContext nccl_tests_context() {
  NcclTestsJsonContext c;
  c.start_time = "2026-11-23 10:00:00";
  c.end_time = "2026-11-23 10:00:02";
  c.args = {"fabscope", "bench", "--sizes", "8,1M,16M,256M,1G", "-J", "/tmp/out.json"};
  c.env = {"NCCL_NVLS_ENABLE=0", "PATH=/usr/bin"};
  c.nccl_version_code = 22803;
  return c;
}

// Keys of an object in document order (nlohmann::ordered_json keeps them).
std::vector<std::string> keys(const nlohmann::ordered_json& j) {
  std::vector<std::string> k;
  for (auto it = j.begin(); it != j.end(); ++it) k.push_back(it.key());
  return k;
}
}  // namespace

TEST(Golden, NcclTestsJsonFile) {
  compare("h200x2-all_reduce.nccl-tests.json", nccl_tests_json(h200_report(), nccl_tests_context()));
}

// The key order and value forms nccl-tests 2.19.6 writes (src/util.cu: jsonOutputInit,
// writeDeviceReport, writeBenchmarkLine*, writeResultFooter, writeErrors, jsonOutputFinalize).
TEST(NcclTestsJson, KeysInNcclTestsOrderAndValueForms) {
  auto j = nlohmann::ordered_json::parse(nccl_tests_json(h200_report(), nccl_tests_context()));
  EXPECT_EQ(keys(j), (std::vector<std::string>{"version", "start_time", "args", "env", "nccl_version", "config",
                                               "results", "out_of_bounds", "average_bus_bandwidth", "errors",
                                               "end_time"}));
  EXPECT_EQ(j["version"], 3);
  EXPECT_EQ(j["nccl_version"], 22803);
  EXPECT_EQ(keys(j["config"]),
            (std::vector<std::string>{"nthreads", "ngpus", "minimum_bytes", "maximum_bytes", "step_bytes",
                                      "warmup_iters", "iterations", "aggregated_iterations", "validation", "graph",
                                      "blocking_collectives", "per_iter_timing", "per_iter_skip", "parallel_init",
                                      "devices"}));
  EXPECT_EQ(j["config"]["blocking_collectives"], "false");  // booleans are strings in nccl-tests
  EXPECT_EQ(keys(j["config"]["devices"][1]),
            (std::vector<std::string>{"rank", "group", "pid", "hostname", "device", "device_hex", "device_info"}));
  EXPECT_EQ(j["config"]["devices"][1]["device_hex"], "0000:00:07");
  const auto& row = j["results"][4];
  EXPECT_EQ(keys(row), (std::vector<std::string>{"size", "count", "type", "redop", "root", "out_of_place",
                                                 "in_place", "actual_iterations", "experiment_name"}));
  EXPECT_EQ(row["root"], "    -1");  // the 6-wide text of the column
  EXPECT_EQ(row["count"], 268435456);
  EXPECT_EQ(keys(row["out_of_place"]), (std::vector<std::string>{"time", "alg_bw", "bus_bw", "nwrong"}));
  EXPECT_TRUE(row["in_place"]["nwrong"].is_number_float());
  EXPECT_EQ(keys(j["out_of_bounds"]), (std::vector<std::string>{"count", "okay"}));
  EXPECT_EQ(j["out_of_bounds"]["okay"], "true");
  EXPECT_EQ(j["average_bus_bandwidth"]["okay"], "unchecked");
}

TEST(NcclTestsJson, CputimePerIterationAndUncheckedPlacements) {
  auto r = h200_report();
  r.options = parse_options({"--sizes", "8,1M,16M,256M,1G", "-C", "1", "-I", "1", "-n", "4", "-K", "1"});
  for (auto& s : r.results) {
    s.out_of_place.cpu_time_us = 2.5;
    s.out_of_place.per_iter = iter_stats({9, 4, 3, 5}, 1);
    s.in_place->per_iter = iter_stats({9, 4, 3, 5}, 1);
  }
  r.results[0].in_place->wrong.reset();
  auto j = nlohmann::ordered_json::parse(nccl_tests_json(r, nccl_tests_context()));
  const auto& row = j["results"][0];
  EXPECT_EQ(keys(row), (std::vector<std::string>{"size", "count", "type", "redop", "root", "out_of_place",
                                                 "out_of_place_per_iter", "in_place", "in_place_per_iter",
                                                 "actual_iterations", "experiment_name"}));
  EXPECT_EQ(keys(row["out_of_place"]), (std::vector<std::string>{"cpu_time", "alg_bw", "bus_bw", "nwrong"}));
  EXPECT_DOUBLE_EQ(row["out_of_place"]["cpu_time"].get<double>(), 2.5);
  EXPECT_TRUE(row["in_place"]["nwrong"].is_null());
  const auto& pi = row["out_of_place_per_iter"];
  EXPECT_EQ(keys(pi), (std::vector<std::string>{"skipped_iterations", "min_us", "max_us", "avg_us", "p50_us", "p95_us",
                                                "p99_us", "stdev_us", "cv_pct", "times_us"}));
  EXPECT_EQ(pi["skipped_iterations"], 1);
  EXPECT_DOUBLE_EQ(pi["min_us"].get<double>(), 3);
  EXPECT_DOUBLE_EQ(pi["max_us"].get<double>(), 5);
  EXPECT_EQ(pi["times_us"].size(), 4u);
  EXPECT_EQ(j["config"]["iterations"], 4);
  EXPECT_EQ(j["config"]["per_iter_timing"], "true");
}

// The shape of a JSON value: object keys in order with their shapes, an array's first element,
// and the kind of every scalar (integer, float, string, null), so two documents with the same
// layout and different numbers compare equal.
std::string shape(const nlohmann::ordered_json& j) {
  if (j.is_object()) {
    std::string s = "{";
    for (auto it = j.begin(); it != j.end(); ++it) s += it.key() + ":" + shape(it.value()) + ",";
    return s + "}";
  }
  if (j.is_array()) return j.empty() ? "[]" : "[" + shape(j.front()) + "]";
  if (j.is_number_integer()) return "int";
  if (j.is_number_float()) return "float";
  if (j.is_string()) return "string";
  if (j.is_null()) return "null";
  return "bool";
}

// Against a file nccl-tests 2.19.6 wrote on the H100 node for the same flags
// (tests/fixtures/nccl-tests-json/SOURCE): the same keys in the same order, the same kinds.
TEST(NcclTestsJson, SameLayoutAsAFileNcclTestsWrote) {
  std::ifstream in(std::filesystem::path(FABSCOPE_TEST_FIXTURES) / "nccl-tests-json/h100-all_reduce-I.json");
  ASSERT_TRUE(in);
  std::stringstream text;
  text << in.rdbuf();
  auto theirs = nlohmann::ordered_json::parse(text.str());

  auto r = h200_report();
  r.options = parse_options({"-b", "8", "-e", "1M", "-f", "32", "-n", "20", "-w", "1", "-I", "1", "-J", "out.json"});
  r.env.nranks = 1;
  r.devices.resize(1);
  for (auto& s : r.results) {
    s.out_of_place.per_iter = iter_stats(std::vector<double>(20, 7.5), 0);
    s.in_place->per_iter = iter_stats(std::vector<double>(20, 2.5), 0);
  }
  auto ours = nlohmann::ordered_json::parse(nccl_tests_json(r, nccl_tests_context()));
  EXPECT_EQ(shape(ours), shape(theirs));
  EXPECT_EQ(shape(ours["results"][0]), shape(theirs["results"][0]));
  EXPECT_EQ(shape(ours["config"]), shape(theirs["config"]));
  EXPECT_EQ(ours["errors"], theirs["errors"]);
}

TEST(NcclTestsJson, StringsEscapedAsNcclTestsDoes) {
  EXPECT_EQ(nccl_tests_json_string("a\"b/c\\d\te\n"), "a\\\"b\\/c\\\\d\\te\\n");
  EXPECT_EQ(nccl_tests_json_string(std::string("ok\x01tail")), "ok");  // stops at a control character
}

TEST(IterStats, NearestRankPercentilesAndPopulationStdev) {
  std::vector<double> t;
  for (int i = 1; i <= 200; ++i) t.push_back(i);
  auto s = iter_stats(t, 0);
  EXPECT_EQ(s.min_us, 1);
  EXPECT_EQ(s.max_us, 200);
  EXPECT_EQ(s.p50_us, 101);  // sorted[n / 2]
  EXPECT_EQ(s.p95_us, 190);  // sorted[ceil(0.95 n) - 1]
  EXPECT_EQ(s.p99_us, 198);
  EXPECT_DOUBLE_EQ(s.avg_us, 100.5);
  EXPECT_NEAR(s.stdev_us, 57.7343, 1e-4);
  auto few = iter_stats({5, 1, 3}, 0);
  EXPECT_EQ(few.p99_us, 5);  // fewer than 100 samples: p99 is the largest
  auto skipped = iter_stats({100, 1, 2}, 1);
  EXPECT_EQ(skipped.max_us, 2);
  EXPECT_EQ(skipped.times_us.size(), 3u);
  EXPECT_EQ(iter_stats({1}, 1).max_us, 0);  // nothing left
}

TEST(Output, RowsParseLikeNcclTestsRows) {
  // What nccl-tests parsers do: split a non-comment line on whitespace, 13 fields, size first,
  // out-of-place busbw at index 7 and in-place busbw at index 11.
  auto r = h200_report();
  std::istringstream line(text_row(r, r.results[4]));
  std::vector<std::string> f;
  for (std::string w; line >> w;) f.push_back(w);
  ASSERT_EQ(f.size(), 13u);
  EXPECT_EQ(f[0], "1073741824");
  EXPECT_EQ(f[1], "268435456");
  EXPECT_EQ(f[2], "float");
  EXPECT_EQ(f[3], "sum");
  EXPECT_EQ(f[4], "-1");
  char busbw[32];
  std::snprintf(busbw, sizeof busbw, "%.2f", r.results[4].out_of_place.busbw_gbytes_per_s);
  EXPECT_EQ(f[7], busbw);
  EXPECT_EQ(f[8], "0");
}

TEST(Output, SummaryLinesAreThoseParsersLookFor) {
  auto text = text_summary(h200_report());
  EXPECT_NE(text.find("# Out of bounds values : 0 OK\n"), std::string::npos);
  EXPECT_NE(text.find("# Avg bus bandwidth    : "), std::string::npos);
}

// Seen with CUDA_VISIBLE_DEVICES=0 on the H200 node: one rank moves nothing over a link, every
// busbw is 0, and the summary printed "Peak bus bandwidth : 0.00 GB/s at 0 B".
TEST(Output, OneRankHasNoPeakLine) {
  auto r = h200_report();
  r.env.nranks = 1;
  r.topo.gpus = 1;
  const auto& d = describe(Collective::AllReduce);
  for (auto& s : r.results) {
    s.out_of_place = make_timing(d, 1, s.bytes, s.out_of_place.time_us);
    s.out_of_place.wrong = 0;
    s.in_place = make_timing(d, 1, s.bytes, s.in_place->time_us);
    s.in_place->wrong = 0;
  }
  summarise(r);
  judge(r);
  auto text = text_summary(r);
  EXPECT_EQ(text.find("# Peak bus bandwidth"), std::string::npos) << text;
  EXPECT_NE(text.find("# Verdict              : "), std::string::npos) << text;
}

// Seen on one H100: an in-place broadcast on one rank is an empty call (about 5 us whatever the
// size), and its bus bandwidth (factor 1) became a "peak" of 2,970,330 GB/s.
TEST(Output, OneRankBroadcastHasNoPeakFromAnEmptyInPlaceCall) {
  auto r = h200_report();
  r.env.nranks = 1;
  r.topo.gpus = 1;
  const auto& d = describe(Collective::Broadcast);
  for (auto& s : r.results) {
    s.out_of_place = make_timing(d, 1, s.bytes, s.out_of_place.time_us);
    s.in_place = make_timing(d, 1, s.bytes, 5.0);
  }
  ASSERT_GT(r.results.back().in_place->busbw_gbytes_per_s, 1e5);
  summarise(r);
  judge(r);
  EXPECT_EQ(r.summary.peak_busbw, 0);
  EXPECT_GT(r.summary.avg_busbw, 0);  // nccl-tests' average keeps every placement
  EXPECT_EQ(text_summary(r).find("# Peak bus bandwidth"), std::string::npos);
}

TEST(Output, WrongValuesSayFailed) {
  auto r = h200_report();
  r.results[0].out_of_place.wrong = 3;
  summarise(r);
  EXPECT_NE(text_summary(r).find("# Out of bounds values : 3 FAILED"), std::string::npos);
}

TEST(Output, PerIterationColumnsFollowEachPlacement) {
  auto r = h200_report();
  r.options = parse_options({"--sizes", "8,1M,16M,256M,1G", "-I", "1"});
  r.results[0].out_of_place.per_iter = iter_stats({9, 4, 3, 5}, 0);
  std::istringstream line(text_row(r, r.results[0]));
  std::vector<std::string> f;
  for (std::string w; line >> w;) f.push_back(w);
  ASSERT_EQ(f.size(), 21u);  // nccl-tests -I 1: i_min i_max i_p99 i_cv% after each placement
  EXPECT_EQ(f[9], "3.00");
  EXPECT_EQ(f[10], "9.00");
  EXPECT_NE(text_header(r).find("i_p99"), std::string::npos);
}

TEST(Output, CputimeLabelsTheTimeColumn) {
  auto r = h200_report();
  r.options = parse_options({"--sizes", "8", "-C", "1"});
  r.results[0].out_of_place.cpu_time_us = 1.25;
  EXPECT_NE(text_header(r).find("cputime"), std::string::npos);
  EXPECT_NE(text_row(r, r.results[0]).find("   1.25"), std::string::npos);
}

TEST(Output, HeaderNamesTheTimer) {
  auto r = h200_report();
  EXPECT_NE(text_header(r).find(" timer: wall"), std::string::npos);
  r.options.timer = Timer::Gpu;
  EXPECT_NE(text_header(r).find("launch cost hidden"), std::string::npos);
}

TEST(Output, UndefinedInPlaceAndUncheckedPrintNA) {
  auto r = h200_report();
  r.results[0].in_place.reset();
  r.results[0].out_of_place.wrong.reset();
  std::istringstream line(text_row(r, r.results[0]));
  std::vector<std::string> f;
  for (std::string w; line >> w;) f.push_back(w);
  ASSERT_EQ(f.size(), 13u);
  EXPECT_EQ(f[8], "N/A");
  EXPECT_EQ(f[9], "N/A");
  EXPECT_EQ(f[12], "N/A");
}

TEST(Output, TimeColumnFitsSevenCharacters) {
  EXPECT_EQ(format_time_us(12.345), "12.35");
  EXPECT_EQ(format_time_us(9999.994), "9999.99");
  EXPECT_EQ(format_time_us(17560.84), "17560.8");
  EXPECT_EQ(format_time_us(141223.4), "141223");
}

TEST(Output, JsonCarriesSchemaEnvironmentTopologyAndSettings) {
  auto j = report_json(h200_report());
  EXPECT_EQ(j.at("schema"), "fabscope.bench");
  EXPECT_EQ(j.at("schema_version"), 2);
  EXPECT_EQ(j.at("settings").at("timer"), "wall");
  EXPECT_EQ(j.at("settings").at("collective"), "all_reduce");
  EXPECT_EQ(j.at("environment").at("nccl_version"), "2.28.3");
  EXPECT_EQ(j.at("topology").at("nvlink_active_per_gpu"), 18);
  EXPECT_EQ(j.at("results").size(), 5u);
  EXPECT_EQ(j.at("summary").at("verdict_level"), "good");
}

TEST(Output, CsvHasOneLinePerSizeAndPlacement) {
  auto csv = render_csv(h200_report());
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 5 * 2);
}
