// The nccl-tests table reader, on a real capture and on the layouts nccl-tests printed over
// its versions.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "report/load.hpp"
#include "report/nccl_tests.hpp"
#include "support/fixtures.hpp"

using fabscope::report::parse_nccl_tests;
using fabscope::report::strip_launcher_prefix;

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string error_of(const std::string& file, const std::string& text) {
  try {
    parse_nccl_tests(file, text);
  } catch (const fabscope::Error& e) {
    return e.what();
  }
  return "";
}

const char* kHeader =
    "#                                                              out-of-place                       in-place\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n";

}  // namespace

TEST(NcclTests, A3MegaCapture_Reads31SizesWithDevicesAndSummary) {
  auto text = slurp(fabscope::testing::fixture("nccl-tests/a3mega-h100x16-all_reduce.txt"));
  auto runs = parse_nccl_tests("a3mega.txt", text);
  ASSERT_EQ(runs.size(), 1u);
  const auto& r = runs[0];
  EXPECT_EQ(r.source, "nccl-tests");
  EXPECT_EQ(r.collective, "all_reduce");  // from the mpirun line quoting all_reduce_perf
  EXPECT_EQ(r.datatype, "float");
  EXPECT_EQ(r.op, "sum");
  EXPECT_EQ(r.nranks, 16);
  EXPECT_EQ(r.nodes, 2);
  EXPECT_EQ(r.hosts, "ztan-mig-235z, ztan-mig-gq73");
  EXPECT_EQ(r.gpu_name, "NVIDIA H100 80GB HBM3");
  ASSERT_EQ(r.rows.size(), 31u);
  EXPECT_EQ(r.rows.front().size_bytes, 8u);
  EXPECT_EQ(r.rows.back().size_bytes, 8589934592u);
  EXPECT_EQ(r.rows.back().count, 2147483648u);
  EXPECT_DOUBLE_EQ(r.rows.back().out_of_place.busbw_gbytes_per_s, 338.82);
  EXPECT_DOUBLE_EQ(r.rows.back().out_of_place.time_us, 47535);
  ASSERT_TRUE(r.rows.back().in_place);
  EXPECT_DOUBLE_EQ(r.rows.back().in_place->busbw_gbytes_per_s, 337.35);
  EXPECT_EQ(r.rows.back().in_place->wrong, 0);
  EXPECT_DOUBLE_EQ(r.avg_busbw_gbytes_per_s, 70.742);
  EXPECT_EQ(r.wrong_total, 0);
  EXPECT_FALSE(r.limit_gbytes_per_s);  // nccl-tests does not know the link
}

TEST(NcclTests, LauncherPrefixes_AreStripped) {
  EXPECT_EQ(strip_launcher_prefix("[1,0]<stdout>:           8             2     float"), "           8             2     float");
  EXPECT_EQ(strip_launcher_prefix("3: #  Rank  0"), "#  Rank  0");
  EXPECT_EQ(strip_launcher_prefix("           8             2"), "           8             2");
}

TEST(NcclTests, OpenMpiTaggedOutput_IsRead) {
  std::string text;
  std::istringstream h(kHeader);
  std::string line;
  while (std::getline(h, line)) text += "[1,0]<stdout>:" + line + "\n";
  text += "[1,0]<stdout>:           0             0     float     sum      -1    15.51    0.00    0.00      0    15.52    0.00    0.00      0\n"
          "[1,0]<stdout>:  2147483648     536870912     float     sum      -1   9197.5  233.49  437.79      0   9195.2  233.54  437.89      0\n"
          "[1,0]<stdout>:# Out of bounds values : 0 OK\n[1,0]<stdout>:# Avg bus bandwidth    : 52.9753\n";
  auto runs = parse_nccl_tests("tagged.txt", text);
  ASSERT_EQ(runs.size(), 1u);
  ASSERT_EQ(runs[0].rows.size(), 2u);
  EXPECT_EQ(runs[0].rows[0].size_bytes, 0u);
  EXPECT_DOUBLE_EQ(runs[0].rows[1].out_of_place.busbw_gbytes_per_s, 437.79);
  EXPECT_EQ(runs[0].collective, "unknown");
}

TEST(NcclTests, OldLayout_ErrorColumnWithoutRoot_IsNotACount) {
  // nccl-tests before 2.10: no root column; "error" is the largest deviation, not a count.
  std::string text =
      "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
      "#        (B)    (elements)                       (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
      "    33554432       8388608     float     sum   4393.9    7.64   14.32  4e-07   4384.4    7.65   14.35  4e-07\n";
  auto runs = parse_nccl_tests("old.txt", text);
  ASSERT_EQ(runs.size(), 1u);
  ASSERT_EQ(runs[0].rows.size(), 1u);
  EXPECT_DOUBLE_EQ(runs[0].rows[0].out_of_place.busbw_gbytes_per_s, 14.32);
  EXPECT_FALSE(runs[0].rows[0].out_of_place.wrong);
  EXPECT_DOUBLE_EQ(runs[0].rows[0].in_place->time_us, 4384.4);
}

TEST(NcclTests, AlltoallNotApplicableInPlace_AndNoiseLinesBetweenRows) {
  std::string text = std::string("# nccl-tests version 2.18.3 nccl-headers=23003 nccl-library=23003\n"
                                 "# Collective test starting: alltoall_perf\n") +
                     "NCCL version 2.30.3+cuda13.0\n" + kHeader +
                     "[host:02943] 15 more processes have sent help message help-mca-var.txt\n"
                     "        1024            16     float    none      -1    55.66    0.02    0.02       0    29.21    0.04    0.03    N/A\n"
                     "        2048            32     float    none      -1    29.69    0.07    0.06       0      N/A     N/A     N/A    N/A\n"
                     "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 9.04853\n#\n"
                     "# Collective test concluded: alltoall_perf\n";
  auto runs = parse_nccl_tests("a2a.txt", text);
  ASSERT_EQ(runs.size(), 1u);
  const auto& r = runs[0];
  EXPECT_EQ(r.collective, "alltoall");
  EXPECT_EQ(r.tool_version, "2.18.3");
  EXPECT_EQ(r.nccl_version, "2.30.3");
  EXPECT_EQ(r.op, "none");
  ASSERT_EQ(r.rows.size(), 2u);
  ASSERT_TRUE(r.rows[0].in_place);
  EXPECT_FALSE(r.rows[0].in_place->wrong);  // "N/A": not checked
  EXPECT_FALSE(r.rows[1].in_place);         // every in-place column N/A
}

TEST(NcclTests, TwoTablesInOneFile_AreTwoRuns) {
  std::string one = std::string(kHeader) +
                    "           8             2     float     sum      -1    42.14    0.00    0.00      0    40.06    0.00    0.00      0\n"
                    "# Avg bus bandwidth    : 0.00\n";
  auto runs = parse_nccl_tests("two.txt", "./all_reduce_perf -g 8\n" + one + "./broadcast_perf -g 2\n" + one);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].collective, "all_reduce");
  EXPECT_EQ(runs[1].collective, "broadcast");
}

TEST(NcclTests, TruncatedRow_NamesFileAndLine) {
  std::string text = std::string(kHeader) +
                     "           8             2     float     sum      -1    42.14    0.00    0.00      0    40.06    0.00    0.00      0\n"
                     "          16             4     float     sum      -1    41.0";
  auto e = error_of("cut.txt", text);
  EXPECT_NE(e.find("cut.txt: line 5"), std::string::npos) << e;
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;
}

TEST(NcclTests, BadNumber_NamesColumnAndValue) {
  std::string text = std::string(kHeader) +
                     "           8             2     float     sum      -1    42.14    0.00    fast      0    40.06    0.00    0.00      0\n";
  auto e = error_of("bad.txt", text);
  EXPECT_NE(e.find("bad.txt: line 4: column 'busbw': 'fast'"), std::string::npos) << e;
}

TEST(NcclTests, NoTable_IsAnErrorNamingTheFile) {
  EXPECT_NE(error_of("empty.txt", "").find("empty.txt: no nccl-tests table"), std::string::npos);
  EXPECT_NE(error_of("log.txt", "NCCL INFO Bootstrap : Using eth0\n").find("log.txt: no nccl-tests table"),
            std::string::npos);
}

TEST(NcclTests, HeaderWithoutRows_IsAnError) {
  auto e = error_of("norows.txt", std::string("# nThread 1\n") + kHeader + "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0\n");
  EXPECT_NE(e.find("norows.txt: the nccl-tests table at line 3 has no rows"), std::string::npos) << e;
}

// Found by the report_inputs fuzz target (tests/fuzz/regressions/report_inputs): a header whose
// in-place group has a time but no algbw/busbw made the row reader index column -1.
TEST(NcclTests, InPlaceGroupWithoutBandwidthColumns_IsNoHeader) {
  std::string text =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time\n"
      "           8             2     float     sum      -1    10.00    0.00    0.00      0    10.00\n";
  EXPECT_NE(error_of("cut.txt", text).find("no nccl-tests table"), std::string::npos) << error_of("cut.txt", text);
}

TEST(NcclTests, SizeBeyond64Bits_IsAnErrorNamingTheLine) {
  std::string text = std::string(kHeader) +
                     "  99999999999999999999999             2     float     sum      -1    10.00    0.00    0.00"
                     "      0    10.00    0.00    0.00      0\n";
  std::string e = error_of("big.txt", text);
  EXPECT_NE(e.find("big.txt: line 4: size '99999999999999999999999'"), std::string::npos) << e;
}

TEST(NcclTests, RankNumberBeyondInt_IsNotARankLine) {
  std::string text = "#  Rank  99999999999999999999 Group  0 Pid   6899 on n1 device  0 [0000:04:00] GPU\n" +
                     std::string(kHeader) +
                     "           8             2     float     sum      -1    10.00    0.00    0.00      0"
                     "    10.00    0.00    0.00      0\n";
  auto runs = parse_nccl_tests("rank.txt", text);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_FALSE(runs[0].nranks.has_value());
}

// nccl-tests' own JSON file (-J), a real one (tests/fixtures/nccl-tests-json): read by its shape,
// given among the JSON files or with --nccl-tests.
namespace {

fabscope::json nccl_tests_json_doc() {
  return fabscope::json::parse(slurp(fabscope::testing::fixture("nccl-tests-json/h100-all_reduce-I.json")));
}

std::string json_error_of(const fabscope::json& doc) {
  try {
    fabscope::report::input_from_json("out.json", doc);
  } catch (const fabscope::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(NcclTestsJson, RealFile_ReadsAsOneRun) {
  const std::string text = slurp(fabscope::testing::fixture("nccl-tests-json/h100-all_reduce-I.json"));
  for (const auto& in : {fabscope::report::input_from_json_text("out.json", text),
                         fabscope::report::inputs_from_nccl_tests_text("out.json", text).at(0)}) {
    EXPECT_EQ(in.kind, fabscope::report::InputKind::Bench);
    EXPECT_EQ(in.schema, "nccl-tests JSON");
    EXPECT_EQ(in.schema_version, 3);
    const auto& b = in.bench;
    EXPECT_EQ(b.source, "nccl-tests");
    EXPECT_EQ(b.collective, "all_reduce");
    EXPECT_EQ(b.nccl_version, "2.28.3");
    EXPECT_EQ(b.gpu_name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(b.hosts, "vm");
    EXPECT_EQ(b.nranks, 1);
    EXPECT_EQ(b.datatype, "float");
    EXPECT_EQ(b.op, "sum");
    ASSERT_EQ(b.rows.size(), 4u);
    EXPECT_EQ(b.rows[0].size_bytes, 8u);
    EXPECT_EQ(b.rows[3].size_bytes, 262144u);
    EXPECT_EQ(b.rows[3].count, 65536u);
    EXPECT_DOUBLE_EQ(b.rows[0].out_of_place.time_us, 9.116);
    ASSERT_TRUE(b.rows[3].in_place);
    EXPECT_DOUBLE_EQ(b.rows[3].in_place->algbw_gbytes_per_s, 70.354397);
    EXPECT_EQ(b.rows[0].out_of_place.wrong, 0);
    EXPECT_EQ(b.wrong_total, 0);
  }
}

TEST(NcclTestsJson, AbsentInPlaceAndCpuTimeAndUncheckedValues) {
  auto doc = nccl_tests_json_doc();
  for (auto& row : doc["results"]) {
    row.erase("in_place");  // alltoall and sendrecv have no in-place
    auto& p = row["out_of_place"];
    p["cpu_time"] = p["time"];  // -C 1
    p.erase("time");
    p["nwrong"] = nullptr;  // -c 0
  }
  auto in = fabscope::report::input_from_json("out.json", doc);
  ASSERT_EQ(in.bench.rows.size(), 4u);
  EXPECT_FALSE(in.bench.rows[0].in_place);
  EXPECT_DOUBLE_EQ(in.bench.rows[0].out_of_place.time_us, 9.116);
  EXPECT_FALSE(in.bench.rows[0].out_of_place.wrong);
}

TEST(NcclTestsJson, MalformedValue_NamesFileAndField) {
  auto doc = nccl_tests_json_doc();
  doc["results"][2]["out_of_place"]["bus_bw"] = "fast";
  std::string e = json_error_of(doc);
  EXPECT_NE(e.find("out.json"), std::string::npos) << e;
  EXPECT_NE(e.find("results[2].out_of_place.bus_bw"), std::string::npos) << e;

  doc = nccl_tests_json_doc();
  doc["results"][1].erase("size");
  e = json_error_of(doc);
  EXPECT_NE(e.find("results[1].size"), std::string::npos) << e;

  doc = nccl_tests_json_doc();
  doc["results"] = fabscope::json::array();
  e = json_error_of(doc);
  EXPECT_NE(e.find("'results'"), std::string::npos) << e;
}

TEST(NcclTestsJson, NeitherFabscopeNorNcclTests_SaysWhatIsRead) {
  const std::string e = json_error_of(fabscope::json{{"results", 1}});
  EXPECT_NE(e.find("out.json: not a fabscope JSON output (no \"schema\" key) nor nccl-tests' -J file"), std::string::npos)
      << e;
}
