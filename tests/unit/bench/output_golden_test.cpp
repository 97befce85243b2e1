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
#include "bench/output.hpp"
#include "support/fixtures.hpp"

using namespace fabscope;
using namespace fabscope::bench;

namespace {

std::filesystem::path golden(const std::string& name) {
  return std::filesystem::path(FABSCOPE_SOURCE_DIR) / "tests/golden/bench" / name;
}

void compare(const std::string& name, const std::string& actual) {
  auto path = golden(name);
  if (const char* u = std::getenv("FABSCOPE_UPDATE_GOLDEN"); u && *u) {
    std::ofstream(path) << actual;
    GTEST_SKIP() << "rewrote " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing " << path << " (run with FABSCOPE_UPDATE_GOLDEN=1)";
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_EQ(actual, want.str()) << "differs from " << path;
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

TEST(Output, WrongValuesSayFailed) {
  auto r = h200_report();
  r.results[0].out_of_place.wrong = 3;
  summarise(r);
  EXPECT_NE(text_summary(r).find("# Out of bounds values : 3 FAILED"), std::string::npos);
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
  EXPECT_EQ(j.at("schema_version"), 1);
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
