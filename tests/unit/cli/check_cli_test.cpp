// `fabscope check` and `fabscope doctor` as a user runs them: --help, exit codes, errors, JSON,
// 100 columns, FABSCOPE_ROOT.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/cli_run.hpp"
#include "core/json.hpp"
#include "support/fixtures.hpp"

using fabscope::json;
using fabscope::testing::fixture;
using fabscope::testing::quote;
using fabscope::testing::run_fabscope;

namespace {

std::string h200() { return fixture("h200x2-node").string(); }
std::string rxe() { return fixture("rxe-vm").string(); }

// Output with every run of blanks and newlines made one blank, so wrapping does not matter.
std::string flat(const std::string& s) {
  std::string out;
  for (char c : s) {
    bool blank = c == ' ' || c == '\n';
    if (blank && (out.empty() || out.back() == ' ')) continue;
    out += blank ? ' ' : c;
  }
  return out;
}

using fabscope::testing::expect_fits_100_columns;

}  // namespace

TEST(CheckCli, HelpShowsExamplesAndExitCodes) {
  auto r = run_fabscope("check --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("fabscope check --json"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--root"), std::string::npos);
  EXPECT_NE(r.out.find("Exit codes: 0 nothing above info, 1 warnings, 2 failures, 3 usage"), std::string::npos);
  expect_fits_100_columns(r.out);
}

TEST(CheckCli, IsListedInTopLevelHelp) {
  auto r = run_fabscope("--help");
  EXPECT_NE(r.out.find("\n  check "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  doctor "), std::string::npos) << r.out;
}

TEST(CheckCli, RootThatIsNotADirectoryExitsThreeNamingIt) {
  auto r = run_fabscope("check --root /nonexistent/fabscope-root");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("/nonexistent/fabscope-root"), std::string::npos) << r.out;
}

TEST(CheckCli, UnknownFlagExitsThree) { EXPECT_EQ(run_fabscope("check --no-such-flag").exit_code, 3); }

TEST(CheckCli, WarningsExitOne) {
  // The capture's socket buffers are 4 MiB (os.socket_buffers_small).
  EXPECT_EQ(run_fabscope("check --root " + quote(h200())).exit_code, 1);
}

TEST(CheckCli, JsonCarriesSchemaFindingsSummaryAndExitCode) {
  auto r = run_fabscope("check --json --root " + quote(rxe()), "", false);
  ASSERT_EQ(r.exit_code, 1) << r.out;
  auto j = json::parse(r.out);
  EXPECT_EQ(j.at("schema"), "fabscope.check");
  EXPECT_EQ(j.at("schema_version"), 1);
  EXPECT_EQ(j.at("hostname"), "(none)");
  EXPECT_EQ(j.at("exit_code"), 1);
  EXPECT_EQ(j.at("summary").at("worst"), "warn");
  ASSERT_TRUE(j.at("findings").is_array());
  for (const auto& f : j.at("findings"))
    for (const char* key : {"id", "severity", "subject", "message", "evidence", "remedy", "docs"})
      EXPECT_TRUE(f.contains(key)) << key;
  EXPECT_GT(j.at("checks").size(), 20u);
}

TEST(CheckCli, RootFromEnvironment) {
  auto r = run_fabscope("check --json", "FABSCOPE_ROOT=" + quote(h200()), false);
  ASSERT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(json::parse(r.out).at("hostname"), "vm");
}

TEST(CheckCli, HumanOutputFitsIn100ColumnsAndEndsWithASummary) {
  for (const auto& root : {h200(), rxe()}) {
    auto r = run_fabscope("check --root " + quote(root));
    expect_fits_100_columns(r.out);
    EXPECT_NE(r.out.find("finding(s): 0 fail, "), std::string::npos) << r.out;
    // The one finding layout (core/finding_text.hpp): severity, id and subject on one line.
    EXPECT_NE(r.out.find("WARN os.socket_buffers_small  "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\n     evidence: "), std::string::npos) << r.out;
  }
}

TEST(CheckCli, NodeFromASavedProbe) {
  auto r = run_fabscope("check --json --node " + quote((fixture("rxe-vm") / "probe-live-no-provider.json").string()),
                        "", false);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  auto j = json::parse(r.out);
  std::size_t not_visible = 0;
  for (const auto& f : j.at("findings")) not_visible += f.at("id") == "verbs.device_not_visible";
  EXPECT_EQ(not_visible, 2u);
}

TEST(CheckCli, NodeFileThatIsNotANodeDescriptionExitsThreeNamingIt) {
  fabscope::testing::TempDir t;
  fabscope::testing::write_file(t.path(), "bad.json", "{\"schema\": \"fabscope.check\"}");
  fabscope::testing::write_file(t.path(), "junk.json", "not json at all");
  auto r = run_fabscope("check --node " + quote((t.path() / "bad.json").string()));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("bad.json: not a fabscope node description"), std::string::npos) << r.out;
  r = run_fabscope("check --node " + quote((t.path() / "junk.json").string()));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("junk.json: not a JSON object"), std::string::npos) << r.out;
  r = run_fabscope("check --node /nonexistent/probe.json");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("/nonexistent/probe.json: cannot open"), std::string::npos) << r.out;
}

// docs/formats.md: counters are unsigned, rates are not negative; such a value is an input error,
// not a counter of 18446744073709551611 or a judged rate of -100 Gb/s.
TEST(CheckCli, NodeWithANegativeCounterOrRateExitsThreeNamingTheField) {
  const auto golden = std::filesystem::path(FABSCOPE_SOURCE_DIR) / "tests/golden/probe/procfs-infiniband.json";
  std::ifstream in(golden);
  const json base = json::parse(in);
  fabscope::testing::TempDir t;
  auto run_with = [&](const char* name, const std::string& pointer, const json& value) {
    json j = base;
    j[json::json_pointer(pointer)] = value;
    fabscope::testing::write_file(t.path(), name, j.dump(2));
    return run_fabscope("check --node " + quote((t.path() / name).string()));
  };
  auto r = run_with("counter.json", "/rdma_devices/0/ports/0/counters/symbol_error", -5);
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("counter.json: field 'rdma_devices[0].ports[0].counters.symbol_error' is -5"),
            std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("18446744073709551611"), std::string::npos) << r.out;
  r = run_with("rate.json", "/rdma_devices/0/ports/0/rate_gbps", -100.0);
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("rate.json: field 'rdma_devices[0].ports[0].rate_gbps' is -100.0"), std::string::npos)
      << r.out;
  // The same file with a real counter is judged (the test can fail).
  r = run_with("ok.json", "/rdma_devices/0/ports/0/counters/symbol_error", 5);
  EXPECT_NE(r.exit_code, 3) << r.out;
}

// A key twice in one object: nlohmann would keep the last without a word.
TEST(CheckCli, NodeWithADuplicatedKeyExitsThreeNamingIt) {
  fabscope::testing::TempDir t;
  fabscope::testing::write_file(t.path(), "dup.json",
                                R"({"schema": "fabscope.node", "schema_version": 1, "hostname": "a", "hostname": "b"})");
  auto r = run_fabscope("check --node " + quote((t.path() / "dup.json").string()));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("dup.json: the key \"hostname\" appears twice in one object"), std::string::npos) << r.out;
}

TEST(CheckCli, NodeAndRootTogetherIsAUsageError) {
  auto r = run_fabscope("check --node x.json --root " + quote(h200()));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("exclude each other"), std::string::npos) << r.out;
}

TEST(DoctorCli, HelpShowsExamplesAndVerdicts) {
  auto r = run_fabscope("doctor --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("fabscope doctor --json"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("healthy (exit 0), degraded (warnings, exit 1), broken (failures, exit 2)"),
            std::string::npos);
  expect_fits_100_columns(r.out);
}

TEST(DoctorCli, GpuNodeWithoutRdmaSaysSocketsPlainly) {
  auto r = run_fabscope("doctor --root " + quote(h200()));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(flat(r.out).find("2 GPUs (NVIDIA H200, NVLink not known: NVML is asked on a live node only), no "
                             "RDMA device: multi-node NCCL traffic would use TCP sockets over eth0 (MTU 1400)."),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("verdict: degraded"), std::string::npos);
  EXPECT_NE(r.out.find("next steps:"), std::string::npos);
  expect_fits_100_columns(r.out);
}

TEST(DoctorCli, NodeWithoutGpuOrRdmaIsHealthyAndQuiet) {
  // A tree with only a proc/ of a login node: the h200 capture's proc files, no sys/.
  fabscope::testing::TempDir t;
  fabscope::testing::copy_tree(fixture("h200x2-node") / "proc", t.path() / "proc");
  auto r = run_fabscope("doctor --root " + quote(t.path().string()));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("no NVIDIA GPU, no RDMA device"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verdict: healthy (0 fail, 0 warn, 0 info)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("SEV"), std::string::npos) << r.out;
}

TEST(DoctorCli, JsonCarriesVerdictTransportAndNextSteps) {
  auto r = run_fabscope("doctor --json --root " + quote(h200()), "", false);
  ASSERT_EQ(r.exit_code, 1) << r.out;
  auto j = json::parse(r.out);
  EXPECT_EQ(j.at("schema"), "fabscope.doctor");
  EXPECT_EQ(j.at("schema_version"), 1);
  EXPECT_EQ(j.at("verdict"), "degraded");
  EXPECT_EQ(j.at("transport"), "sockets");
  EXPECT_EQ(j.at("gpus"), 2);
  EXPECT_EQ(j.at("rdma_devices"), 0);
  EXPECT_FALSE(j.at("next_steps").empty());
  EXPECT_EQ(j.at("exit_code"), 1);
}

TEST(DoctorCli, BadRootExitsThree) {
  auto r = run_fabscope("doctor --root /nonexistent/fabscope-root");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("/nonexistent/fabscope-root"), std::string::npos) << r.out;
}
