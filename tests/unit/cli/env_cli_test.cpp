// `fabscope env` and `fabscope env lint` as a user runs them: help, usage errors, formats,
// JSON schemas, exit codes, 100 columns.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "core/json.hpp"
#include "support/cli_run.hpp"
#include "support/fixtures.hpp"

namespace {

using fabscope::testing::CliResult;

CliResult run_env(const std::string& args, const std::string& env = "") {
  return fabscope::testing::run_fabscope("env " + args, env);
}

std::string root(const std::string& name) { return "--root '" + fabscope::testing::fixture(name).string() + "'"; }

using fabscope::testing::expect_fits_100_columns;

}  // namespace

TEST(EnvCli, HelpShowsExamplesFormatsAndExitCodes) {
  auto r = run_env("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("fabscope env --format docker"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("shell, envfile, docker, k8s, slurm, torchrun, json"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Exit codes"), std::string::npos);
  expect_fits_100_columns(r.out);
  auto l = run_env("lint --help");
  EXPECT_EQ(l.exit_code, 0);
  EXPECT_NE(l.out.find("--env-file"), std::string::npos) << l.out;
  EXPECT_NE(l.out.find("1 warnings, 2 failures"), std::string::npos) << l.out;
  expect_fits_100_columns(l.out);
}

TEST(EnvCli, UnknownFormatExitsThreeListingFormats) {
  auto r = run_env("--format yaml " + root("rxe-vm"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("unknown format 'yaml'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("shell, envfile, docker, k8s, slurm, torchrun, json"), std::string::npos) << r.out;
}

TEST(EnvCli, BadFlagValuesExitThree) {
  EXPECT_EQ(run_env("--master-addr 10.0.0 " + root("rxe-vm")).exit_code, 3);
  EXPECT_EQ(run_env("--roce-dscp 64 " + root("rxe-vm")).exit_code, 3);
  EXPECT_EQ(run_env("--ib-sl 16 " + root("rxe-vm")).exit_code, 3);
  EXPECT_EQ(run_env("--nodes 0 " + root("rxe-vm")).exit_code, 3);
  EXPECT_EQ(run_env("--no-such-flag").exit_code, 3);
  EXPECT_EQ(run_env("lint --env-file /nonexistent/job.env " + root("rxe-vm")).exit_code, 3);
}

TEST(EnvCli, DefaultShellOutputOnRxeVm) {
  auto r = run_env(root("rxe-vm"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("export NCCL_IB_HCA='=rxe0:1,rxe1:1'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("export NCCL_IB_GID_INDEX=1"), std::string::npos) << r.out;
  expect_fits_100_columns(r.out);
}

TEST(EnvCli, JsonCarriesSchemaAndVersion) {
  for (const char* flag : {"--json", "--format json"}) {
    auto r = run_env(std::string(flag) + " " + root("h200x2-node"));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    auto j = fabscope::json::parse(r.out);
    EXPECT_EQ(j.at("schema"), "fabscope.env");
    EXPECT_EQ(j.at("schema_version"), 1);
    EXPECT_EQ(j.at("gpus"), 2);
    EXPECT_EQ(j.at("variables").at(0).at("name"), "NCCL_IB_DISABLE");
  }
}

TEST(EnvCli, FlagsReachThePlan) {
  auto r = run_env("--format envfile --roce-dscp 26 " + root("rxe-vm"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("\nNCCL_IB_TC=104\n"), std::string::npos) << r.out;
  auto t = run_env("--format torchrun --nodes 3 --gpus-per-node 4 " + root("rxe-vm"));
  EXPECT_NE(t.out.find("NNODES=\"${NNODES:-3}\""), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("NPROC_PER_NODE=\"${NPROC_PER_NODE:-4}\""), std::string::npos) << t.out;
}

TEST(EnvCli, EveryFormatFitsIn100Columns) {
  for (const char* f : {"shell", "envfile", "docker", "k8s", "slurm", "torchrun"})
    for (const char* fx : {"rxe-vm", "h200x2-node"}) {
      auto r = run_env(std::string("--format ") + f + " " + root(fx));
      ASSERT_EQ(r.exit_code, 0) << r.out;
      expect_fits_100_columns(r.out);
    }
}

TEST(EnvCli, LintEnvFileExitCodesAndJson) {
  fabscope::testing::TempDir t;
  fabscope::testing::write_file(t.path(), "good.env", "NCCL_IB_HCA==rxe0:1,rxe1:1\nNCCL_DEBUG=WARN\n");
  fabscope::testing::write_file(t.path(), "warn.env", "NCCL_IB_HCAS=rxe0\n");
  fabscope::testing::write_file(t.path(), "fail.env", "NCCL_IB_HCA=mlx5\nNCCL_DEBUG=INFO\nthis is garbage\n");
  auto file = [&](const char* n) { return "--env-file '" + (t.path() / n).string() + "' " + root("rxe-vm"); };
  auto good = run_env("lint " + file("good.env"));
  EXPECT_EQ(good.exit_code, 0) << good.out;
  EXPECT_NE(good.out.find("no findings"), std::string::npos) << good.out;
  auto warn = run_env("lint " + file("warn.env"));
  EXPECT_EQ(warn.exit_code, 1) << warn.out;
  EXPECT_NE(warn.out.find("you mean NCCL_IB_HCA?"), std::string::npos) << warn.out;
  auto fail = run_env("lint " + file("fail.env"));
  EXPECT_EQ(fail.exit_code, 2) << fail.out;
  EXPECT_NE(fail.out.find("fail.env:3"), std::string::npos) << fail.out;
  expect_fits_100_columns(fail.out);
  auto js = run_env("lint --json " + file("fail.env"));
  EXPECT_EQ(js.exit_code, 2);
  auto j = fabscope::json::parse(js.out);
  EXPECT_EQ(j.at("schema"), "fabscope.envlint");
  EXPECT_EQ(j.at("schema_version"), 1);
  EXPECT_EQ(j.at("settings").size(), 2u);
  EXPECT_FALSE(j.at("findings").empty());
  EXPECT_EQ(j.at("findings").at(0).at("severity"), "fail");
}

// docs/ncclenv.md: an env-file that cannot be read is exit 3; a directory used to read as empty
// ("no findings", exit 0).
TEST(EnvCli, LintEnvFileThatIsADirectoryExitsThreeNamingIt) {
  fabscope::testing::TempDir t;
  const std::string dir = t.path().string();
  auto r = run_env("lint --env-file '" + dir + "' " + root("rxe-vm"));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find(dir + ": is a directory, not a file"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("no findings"), std::string::npos) << r.out;
}

TEST(EnvCli, LintReadsTheProcessEnvironmentAndNcclConfUnderRoot) {
  fabscope::testing::TempDir t;
  fabscope::testing::copy_tree(fabscope::testing::fixture("rxe-vm"), t.path());
  fabscope::testing::write_file(t.path(), "etc/nccl.conf", "NCCL_IB_GID_INDEX=1\n");
  auto ok = run_env("lint --root '" + t.path().string() + "'", "env -u NCCL_CONF_FILE HOME=/nonexistent");
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_NE(ok.out.find("from environment, /etc/nccl.conf"), std::string::npos) << ok.out;
  auto bad = run_env("lint --root '" + t.path().string() + "'", "NCCL_IB_DISABLE=1 HOME=/nonexistent");
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_NE(bad.out.find("env.ib_disabled_with_rdma"), std::string::npos) << bad.out;
}

TEST(EnvCli, ListedInTopLevelHelp) {
  std::string cmd = "'" FABSCOPE_BINARY "' --help";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  EXPECT_NE(out.find("\n  env "), std::string::npos) << out;
  expect_fits_100_columns(out);
}
