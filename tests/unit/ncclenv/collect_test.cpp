// Collecting: proc/net/route, and the environment plus nccl.conf files in NCCL's precedence,
// read through a root (a TempDir standing in for /).
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "env_test_util.hpp"
#include "ncclenv/collect.hpp"
#include "ncclenv/lint.hpp"
#include "ncclenv/render.hpp"

using namespace fabscope;
using namespace fabscope::ncclenv;
using fabscope::testing::TempDir;
using fabscope::testing::write_file;

namespace {
// proc/net/route as Linux writes it (header, tab-separated hex fields).
const char* kRoute =
    "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
    "eth0\t00000000\t0100000A\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"
    "eth0\t0000000A\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0\n"
    "ib0\t0000A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n";

std::vector<char*> envp(std::vector<std::string>& storage) {
  std::vector<char*> p;
  for (auto& s : storage) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}
}  // namespace

TEST(EnvCollect, DefaultRouteInterfaces) {
  EXPECT_EQ(parse_default_routes(kRoute), std::vector<std::string>{"eth0"});
  EXPECT_TRUE(parse_default_routes("garbage\n\x01\x02").empty());
  TempDir t;
  write_file(t.path(), "proc/net/route", kRoute);
  EXPECT_EQ(default_route_interfaces(core::Root(t.path())), std::vector<std::string>{"eth0"});
  EXPECT_TRUE(default_route_interfaces(core::Root(fabscope::testing::fixture("rxe-vm"))).empty());
}

TEST(EnvCollect, EnvironmentBeatsHomeConfBeatsEtcConf) {
  TempDir t;
  write_file(t.path(), "etc/nccl.conf", "NCCL_DEBUG=INFO\nNCCL_IB_TIMEOUT=22\nNCCL_SOCKET_IFNAME=eth\n");
  write_file(t.path(), "home/u/.nccl.conf", "NCCL_IB_TIMEOUT=18\nNCCL_IB_TIMEOUT=19\n");
  std::vector<std::string> s = {"NCCL_DEBUG=WARN", "HOME=/home/u", "PATH=/bin"};
  auto p = envp(s);
  Collected c = collect_nccl_environment(core::Root(t.path()), p.data());
  ASSERT_EQ(c.read, (std::vector<std::string>{"environment", "/home/u/.nccl.conf", "/etc/nccl.conf"}));
  auto first = [&](const std::string& k) -> std::string {
    for (const auto& e : c.entries)
      if (e.key == k) return e.where() + "=" + e.value;
    return "";
  };
  EXPECT_EQ(first("NCCL_DEBUG"), "environment=WARN");
  EXPECT_EQ(first("NCCL_IB_TIMEOUT"), "/home/u/.nccl.conf:1=18");  // first line of a file wins
  EXPECT_EQ(first("NCCL_SOCKET_IFNAME"), "/etc/nccl.conf:3=eth");
}

TEST(EnvCollect, NcclConfFileReplacesHomeConf) {
  TempDir t;
  write_file(t.path(), "home/u/.nccl.conf", "NCCL_IB_TIMEOUT=18\n");
  write_file(t.path(), "opt/job.conf", "NCCL_IB_TIMEOUT=23\n");
  std::vector<std::string> s = {"HOME=/home/u", "NCCL_CONF_FILE=/opt/job.conf"};
  auto p = envp(s);
  Collected c = collect_nccl_environment(core::Root(t.path()), p.data());
  EXPECT_EQ(c.read, (std::vector<std::string>{"environment", "/opt/job.conf"}));
}

TEST(EnvCollect, EnvFilesLastSettingWins) {
  TempDir t;
  write_file(t.path(), "a.env", "NCCL_IB_TIMEOUT=18\nNCCL_IB_TIMEOUT=19\n");
  write_file(t.path(), "b.env", "NCCL_IB_TIMEOUT=22\n");
  Collected c = collect_env_files({(t.path() / "a.env").string(), (t.path() / "b.env").string()});
  ASSERT_FALSE(c.entries.empty());
  EXPECT_EQ(c.entries.front().value, "22");
  Collected one = collect_env_files({(t.path() / "a.env").string()});
  EXPECT_EQ(one.entries.front().value, "19");
  EXPECT_THROW(collect_env_files({(t.path() / "missing.env").string()}), Error);
}

TEST(EnvCollect, LintProcessEnvironmentReadsTheNodesRoot) {
  TempDir t;
  fabscope::testing::copy_tree(fabscope::testing::fixture("rxe-vm"), t.path());
  write_file(t.path(), "etc/nccl.conf", "NCCL_IB_HCAS=rxe0\ngarbage line\n");
  NodeInfo node = fabscope::testing::probe_fixture("rxe-vm");
  node.root = t.path().string();
  auto fs = lint_process_environment(node);
  bool unknown = false, syntax = false;
  for (const auto& f : fs) {
    unknown = unknown || (f.id == "env.unknown_variable" && f.message.find("NCCL_IB_HCA?") != std::string::npos);
    syntax = syntax || (f.id == "env.syntax" && f.subject == "/etc/nccl.conf:2");
  }
  EXPECT_TRUE(unknown);
  EXPECT_TRUE(syntax);
}

TEST(EnvCollect, LintSettingsJudgesEnvFilesAgainstTheNodeUnderTheRoot) {
  TempDir t;
  fabscope::testing::copy_tree(fabscope::testing::fixture("rxe-vm"), t.path());
  write_file(t.path(), "job.env", "NCCL_IB_HCA=mlx5_9\nNCCL_DEBUG=INFO\nOMP_NUM_THREADS=4\nnot a line\n");
  std::vector<std::string> storage{"NCCL_IB_HCA=rxe0"};
  auto env = envp(storage);
  const LintReport r = lint_settings(core::Root(t.path()), {(t.path() / "job.env").string()}, env.data());
  EXPECT_EQ(r.sources, std::vector<std::string>{(t.path() / "job.env").string()});  // not the environment
  EXPECT_EQ(r.nccl_settings(), 2u);
  ASSERT_FALSE(r.findings.empty());
  for (std::size_t i = 1; i < r.findings.size(); ++i)
    EXPECT_GE(r.findings[i - 1].severity, r.findings[i].severity) << "most severe first";
  bool hca = false, syntax = false;
  for (const auto& f : r.findings) {
    hca = hca || f.evidence.find("mlx5_9") != std::string::npos;
    syntax = syntax || f.id == "env.syntax";
  }
  EXPECT_TRUE(hca);
  EXPECT_TRUE(syntax);
  EXPECT_THROW(lint_settings(core::Root(t.path()), {(t.path() / "missing.env").string()}, env.data()), Error);
}

TEST(EnvCollect, LintReportJsonListsOnlyNcclSettingsWithTheirSource) {
  LintReport r;
  r.sources = {"job.env"};
  r.entries = {{"job.env", 1, "NCCL_DEBUG", "WARN"}, {"job.env", 2, "OMP_NUM_THREADS", "4"}};
  r.findings = {make_finding("env.bad_value", Severity::Warn, "NCCL_X", "m", "e", "r", "docs/ncclenv.md")};
  const json j = lint_report_json(r);
  EXPECT_EQ(j.at("schema"), "fabscope.envlint");
  EXPECT_EQ(j.at("schema_version"), 1);
  EXPECT_EQ(j.at("sources"), json::array({"job.env"}));
  ASSERT_EQ(j.at("settings").size(), 1u);
  EXPECT_EQ(j.at("settings")[0], (json{{"key", "NCCL_DEBUG"}, {"value", "WARN"}, {"source", "job.env"}, {"line", 1}}));
  EXPECT_EQ(j.at("findings")[0].at("docs"), "docs/ncclenv.md#env-bad_value");
  EXPECT_NE(render_lint_text(r).find("env lint: 0 fail, 1 warn, 0 info; 1 NCCL setting from job.env"),
            std::string::npos);
}
