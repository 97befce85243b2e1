// The peak busbw the report shows is the bench's: the one its summary states, and by its rule
// (one rank has none) where the file states none (nccl-tests output).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/json.hpp"
#include "report/load.hpp"
#include "report/model.hpp"

using namespace fabscope;
using namespace fabscope::report;

namespace {

json peak_fixture() {
  std::ifstream f(std::string(FABSCOPE_SOURCE_DIR) + "/tests/fixtures/saved-outputs/bench-h200x2-all_reduce.json");
  std::stringstream ss;
  ss << f.rdbuf();
  return json::parse(ss.str());
}

}  // namespace

TEST(BenchPeak, TheBenchSummaryIsTheReportsPeak) {
  json doc = peak_fixture();
  auto in = input_from_json("bench.json", doc);
  ASSERT_EQ(in.kind, InputKind::Bench);
  auto p = bench_peak(in.bench);
  ASSERT_TRUE(p.known);
  EXPECT_DOUBLE_EQ(p.busbw_gbytes_per_s, doc["summary"]["peak_busbw_gbytes_per_s"].get<double>());
  EXPECT_EQ(p.size_bytes, doc["summary"]["peak_size_bytes"].get<std::uint64_t>());
  // The summary's word wins over the rows: a peak the bench did not count is not shown.
  doc["summary"]["peak_busbw_gbytes_per_s"] = 100.0;
  doc["summary"]["peak_size_bytes"] = 4096;
  p = bench_peak(input_from_json("bench.json", doc).bench);
  EXPECT_DOUBLE_EQ(p.busbw_gbytes_per_s, 100.0);
  EXPECT_EQ(p.size_bytes, 4096u);
}

TEST(BenchPeak, OneRankHasNoneAndRowsAreTheFallback) {
  auto in = input_from_json("bench.json", peak_fixture());
  BenchRun b = in.bench;
  b.nranks = 1;
  EXPECT_FALSE(bench_peak(b).known);
  // No summary peak (nccl-tests): the highest busbw of any size and placement.
  b = in.bench;
  b.peak_busbw_gbytes_per_s.reset();
  double best = 0;
  std::uint64_t at = 0;
  for (const auto& row : b.rows)
    for (const Placement* pl : {&row.out_of_place, row.in_place ? &*row.in_place : nullptr})
      if (pl && pl->busbw_gbytes_per_s > best) best = pl->busbw_gbytes_per_s, at = row.size_bytes;
  auto p = bench_peak(b);
  EXPECT_TRUE(p.known);
  EXPECT_DOUBLE_EQ(p.busbw_gbytes_per_s, best);
  EXPECT_EQ(p.size_bytes, at);
}

TEST(BenchPeak, ANegativePeakInTheFileIsRefused) {
  json doc = peak_fixture();
  doc["summary"]["peak_busbw_gbytes_per_s"] = -1.0;
  EXPECT_THROW(input_from_json("bench.json", doc), std::exception);
}
