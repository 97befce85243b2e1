// `fabscope probe` as a user runs it: exit codes, --help, --json, FABSCOPE_ROOT.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
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

TEST(ProbeCli, FilesThisUserMayNotReadAreNotesNotFindings) {
  // A bonding status and a NUMA CPU list the probing user cannot read (mode 000); as root the
  // probe runs as nobody (setpriv), because root reads any file.
  fabscope::testing::TempDir t;
  fabscope::testing::copy_tree(fabscope::testing::fixture("virtio-2cpu-node"), t.path());
  fabscope::testing::write_file(t.path(), "proc/net/bonding/bond0", "Bonding Mode: fault-tolerance (active-backup)\n");
  std::filesystem::permissions(t.path() / "proc/net/bonding/bond0", std::filesystem::perms::none);
  std::filesystem::permissions(t.path() / "sys/devices/system/node/node0/cpulist", std::filesystem::perms::none);
  std::string as_user;
  if (::geteuid() == 0) {
    if (std::system("setpriv --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "root without setpriv";
    as_user = "setpriv --reuid=65534 --regid=65534 --clear-groups";
    std::filesystem::permissions(t.path(), std::filesystem::perms::owner_all | std::filesystem::perms::group_exec |
                                               std::filesystem::perms::others_exec |
                                               std::filesystem::perms::others_read);
  }
  auto r = fabscope::testing::run_fabscope("probe --json --root " + fabscope::testing::quote(t.path().string()),
                                           as_user, false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = fabscope::json::parse(r.out);
  std::string notes = j.at("probe_notes").dump();
  EXPECT_NE(notes.find("proc/net/bonding/bond0: not readable as this user, bond not judged"), std::string::npos)
      << notes;
  EXPECT_NE(notes.find("node0/cpulist: not readable as this user"), std::string::npos) << notes;
  EXPECT_TRUE(j.at("bonds").empty());
  auto c = fabscope::testing::run_fabscope("check --json --root " + fabscope::testing::quote(t.path().string()),
                                           as_user, false);
  EXPECT_EQ(fabscope::json::parse(c.out).at("findings").dump().find("bond."), std::string::npos);
}
