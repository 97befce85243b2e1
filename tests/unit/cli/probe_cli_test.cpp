// `fabscope probe` as a user runs it: exit codes, --help, --json, FABSCOPE_ROOT.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "core/json.hpp"
#include "support/cli_run.hpp"
#include "support/fixtures.hpp"

namespace {

using fabscope::testing::CliResult;

CliResult run(const std::string& args, const std::string& env = "") { return fabscope::testing::run_fabscope(args, env); }

std::string h200_root() { return fabscope::testing::fixture("h200x2-node").string(); }

}  // namespace

TEST(ProbeCli, HelpShowsAnExampleAndExitsZero) {
  auto r = run("probe --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("fabscope probe --json"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--root"), std::string::npos);
}

TEST(ProbeCli, RootThatIsNotADirectoryExitsThreeNamingIt) {
  auto r = run("probe --root /nonexistent/fabscope-root");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("/nonexistent/fabscope-root"), std::string::npos) << r.out;
}

TEST(ProbeCli, UnknownFlagExitsThree) {
  EXPECT_EQ(run("probe --no-such-flag").exit_code, 3);
}

TEST(ProbeCli, JsonCarriesSchemaAndVersion) {
  auto r = run("probe --json --root '" + h200_root() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = fabscope::json::parse(r.out);
  EXPECT_EQ(j.at("schema"), "fabscope.node");
  EXPECT_EQ(j.at("schema_version"), 1);
  EXPECT_EQ(j.at("gpus").size(), 2u);
}

TEST(ProbeCli, RootFromEnvironment) {
  auto r = run("probe --json", "FABSCOPE_ROOT='" + h200_root() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(fabscope::json::parse(r.out).at("hostname"), "vm");
}

TEST(ProbeCli, HumanOutputFitsIn100Columns) {
  auto r = run("probe --root '" + h200_root() + "'");
  ASSERT_EQ(r.exit_code, 0);
  std::size_t start = 0;
  while (start < r.out.size()) {
    auto end = r.out.find('\n', start);
    if (end == std::string::npos) end = r.out.size();
    EXPECT_LE(end - start, 100u) << r.out.substr(start, end - start);
    start = end + 1;
  }
}
