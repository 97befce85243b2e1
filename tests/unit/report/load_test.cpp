// Reading fabscope JSON outputs: what each schema gives, and every way a file can be unusable,
// each reported with the file's name.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/json.hpp"
#include "report/load.hpp"
#include "support/fixtures.hpp"

using namespace fabscope::report;

namespace {

std::string golden(const std::string& rel) {
  std::ifstream in(std::filesystem::path(FABSCOPE_SOURCE_DIR) / "tests/golden" / rel);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string error_of(const std::string& file, const std::string& text) {
  try {
    input_from_json_text(file, text);
  } catch (const fabscope::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ReportLoad, BenchGolden_GivesRowsLimitAndVerdict) {
  Input in = input_from_json_text("runs/h200x2.json", golden("bench/h200x2-all_reduce.json"));
  EXPECT_EQ(in.kind, InputKind::Bench);
  EXPECT_EQ(in.label, "h200x2");
  EXPECT_EQ(in.schema, "fabscope.bench");
  EXPECT_EQ(in.schema_version, 2);
  const BenchRun& b = in.bench;
  EXPECT_EQ(b.collective, "all_reduce");
  EXPECT_EQ(b.nranks, 2);
  EXPECT_EQ(b.nodes, 1);
  EXPECT_EQ(b.hosts, "h200x2");
  EXPECT_EQ(b.gpu_name, "NVIDIA H200");
  EXPECT_EQ(b.nccl_version, "2.28.3");
  ASSERT_EQ(b.rows.size(), 5u);
  EXPECT_EQ(b.rows[4].size_bytes, 1073741824u);
  EXPECT_NEAR(b.rows[4].in_place->busbw_gbytes_per_s, 332.31, 0.01);
  ASSERT_TRUE(b.limit_gbytes_per_s);
  EXPECT_DOUBLE_EQ(*b.limit_gbytes_per_s, 450);
  EXPECT_EQ(b.limit_path, "NVLink");
  EXPECT_EQ(b.verdict_level, "good");
  EXPECT_EQ(b.wrong_total, 0);
}

TEST(ReportLoad, CheckGolden_GivesFindingsAndSummary) {
  Input in = input_from_json_text("ib.json", golden("check/procfs-infiniband.json"));
  EXPECT_EQ(in.kind, InputKind::Node);
  EXPECT_EQ(in.node.worst, "warn");
  EXPECT_EQ(in.node.warn, 3);
  ASSERT_EQ(in.node.findings.size(), 3u);
  EXPECT_EQ(in.node.findings[0].id, "link.rate_degraded");
  EXPECT_EQ(in.node.findings[0].docs, "docs/checks.md#link-rate_degraded");
  EXPECT_TRUE(in.node.verdict.empty());  // check has no doctor verdict
}

TEST(ReportLoad, EmptyFile_NamesIt) {
  EXPECT_EQ(error_of("e.json", ""), "e.json: empty file (no JSON document)");
  EXPECT_EQ(error_of("e.json", " \n\t"), "e.json: empty file (no JSON document)");
}

TEST(ReportLoad, TruncatedJson_NamesItAsTruncated) {
  std::string text = golden("bench/h200x2-all_reduce.json");
  auto e = error_of("cut.json", text.substr(0, text.size() / 2));
  EXPECT_EQ(e.rfind("cut.json: not valid JSON (truncated?): parse error", 0), 0u) << e;
}

TEST(ReportLoad, NotJson_NamesIt) {
  auto e = error_of("x.json", "#  size count type\n");
  EXPECT_EQ(e.rfind("x.json: not valid JSON: parse error", 0), 0u) << e;
}

// nlohmann keeps the last of two equal keys without a word: a finding could read one way to the
// report and another to a tool; such a file is refused, however deep the object.
TEST(ReportLoad, DuplicatedKey_NamesTheFileAndTheKey) {
  std::string text = golden("check/rxe-vm.json");
  auto at = text.find("\"findings\"");
  ASSERT_NE(at, std::string::npos);
  auto brace = text.find('{', at);
  ASSERT_NE(brace, std::string::npos);
  text.insert(brace + 1, "\"docs\": \"javascript:alert(1)\", ");
  auto e = error_of("dup.json", text);
  EXPECT_EQ(e, "dup.json: the key \"docs\" appears twice in one object (which one counts is ambiguous)") << e;
  // The same key in two objects, or in an array of objects, is fine.
  EXPECT_NO_THROW(fabscope::parse_input_json(R"({"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 1}, {"x": 2}]})"));
  EXPECT_THROW(fabscope::parse_input_json(R"({"c": [{"x": 1, "y": {"x": 1}, "x": 2}]})"), fabscope::Error);
}

TEST(ReportLoad, WrongSchema_NamesItAndListsWhatIsRead) {
  auto e = error_of("env.json", R"({"schema": "fabscope.env", "schema_version": 1})");
  EXPECT_EQ(e, "env.json: schema 'fabscope.env' is not one report reads (fabscope.check, fabscope.doctor, "
               "fabscope.bench, fabscope.tune, fabscope.cluster, fabscope.rdma, fabscope.fabric, fabscope.metrics)");
  EXPECT_NE(error_of("n.json", R"({"schema": "fabscope.node", "schema_version": 1})").find("n.json: schema fabscope.node"),
            std::string::npos);
  EXPECT_NE(error_of("a.json", "[1, 2]").find("a.json: not a fabscope JSON output"), std::string::npos);
  EXPECT_NE(error_of("o.json", R"({"results": []})").find("o.json: not a fabscope JSON output (no \"schema\" key)"),
            std::string::npos);
}

TEST(ReportLoad, NewerSchemaVersion_SaysSo) {
  std::string text = golden("bench/h200x2-all_reduce.json");
  auto j = fabscope::json::parse(text);
  j["schema_version"] = 3;
  auto e = error_of("new.json", j.dump());
  EXPECT_EQ(e, "new.json: fabscope.bench schema_version 3 is newer than this fabscope reads (2); use a newer "
               "fabscope report");
}

TEST(ReportLoad, FieldOfTheWrongType_NamesItsPathAndValue) {
  auto j = fabscope::json::parse(golden("bench/h200x2-all_reduce.json"));
  j["results"][3]["out_of_place"]["busbw_gbytes_per_s"] = "fast";
  EXPECT_EQ(error_of("t.json", j.dump()),
            "t.json: field 'results[3].out_of_place.busbw_gbytes_per_s': expected a number, got string \"fast\"");
  auto c = fabscope::json::parse(golden("check/rxe-vm.json"));
  c["findings"][0]["severity"] = "bad";
  EXPECT_EQ(error_of("c.json", c.dump()),
            "c.json: field 'findings[0].severity': expected ok, info, warn or fail, got \"bad\"");
}

TEST(ReportLoad, MissingSummary_NamesTheField) {
  auto c = fabscope::json::parse(golden("check/rxe-vm.json"));
  c.erase("summary");
  EXPECT_EQ(error_of("c.json", c.dump()), "c.json: field 'summary': missing");
}

TEST(ReportLoad, MissingFile_NamesIt) {
  try {
    load_json_file("/nonexistent/x.json");
    FAIL();
  } catch (const fabscope::Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("/nonexistent/x.json: cannot open", 0), 0u) << e.what();
  }
}

TEST(ReportLoad, BenchVersion1_IsStillRead) {
  auto j = fabscope::json::parse(golden("bench/h200x2-all_reduce.json"));
  j["schema_version"] = 1;
  for (auto& r : j["results"]) r.erase("cycle");
  Input in = input_from_json("v1.json", j);
  EXPECT_EQ(in.schema_version, 1);
  EXPECT_EQ(in.bench.rows.size(), 5u);
}

TEST(ReportLoad, BenchCycles_AreKeptPerRow) {
  auto j = fabscope::json::parse(golden("bench/h200x2-all_reduce.json"));
  auto again = j["results"];
  for (auto& r : again) r["cycle"] = 1;
  for (auto& r : again) j["results"].push_back(r);
  Input in = input_from_json("n2.json", j);
  ASSERT_EQ(in.bench.rows.size(), 10u);
  EXPECT_EQ(in.bench.rows[0].cycle, 0);
  EXPECT_EQ(in.bench.rows[9].cycle, 1);
}

TEST(ReportLoad, TuneFieldOfTheWrongType_NamesItsPath) {
  std::ifstream in(fabscope::testing::fixture("tune-simulated/seed1-all_reduce-all_gather.json"));
  auto j = fabscope::json::parse(in);
  j["collectives"][1]["sizes"][2]["speedup_ci95"] = "narrow";
  EXPECT_EQ(error_of("t.json", j.dump()),
            "t.json: field 'collectives[1].sizes[2].speedup_ci95': expected [low, high], got string \"narrow\"");
}

TEST(ReportLoad, Label_IsTheFileStem) {
  EXPECT_EQ(label_for("runs/default.json"), "default");
  EXPECT_EQ(label_for("tuned"), "tuned");
}

// Found by the report_inputs fuzz target (tests/fuzz/regressions/report_inputs): a number beyond
// a double made nlohmann throw out_of_range, which escaped as an exception the CLI does not report.
TEST(ReportLoad, NumberBeyondADouble_IsNotValidJsonNamingTheFile) {
  auto e = error_of("big.json", R"({"schema":"fabscope.check","schema_version":1,"x":1e99999})");
  EXPECT_EQ(e.rfind("big.json: not valid JSON: number overflow", 0), 0u) << e;
}
