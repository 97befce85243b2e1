// Every text format fed to the program that will read it: bash -n for the shell, docker, slurm
// and torchrun outputs, python3's yaml.safe_load for the Kubernetes list, our own env-file
// reader for the env-file. A format that only looks right fails here.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>

#include "core/json.hpp"
#include "env_test_util.hpp"
#include "ncclenv/envfile.hpp"
#include "ncclenv/plan.hpp"
#include "ncclenv/render.hpp"

using namespace fabscope;
using namespace fabscope::ncclenv;
using fabscope::testing::TempDir;

namespace {

struct Run {
  int exit_code = -1;
  std::string out;
};

Run run(const std::string& cmd) {
  Run r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

bool have(const std::string& tool) { return run("command -v " + tool).exit_code == 0; }

std::string write(const TempDir& t, const std::string& name, const std::string& text) {
  fabscope::testing::write_file(t.path(), name, text);
  return (t.path() / name).string();
}

const std::vector<std::string> kFixtures = {"rxe-vm", "procfs-infiniband", "h200x2-node"};

EnvPlan fixture_plan(const std::string& name, PlanOptions o = {}) {
  return plan(fabscope::testing::probe_fixture(name), o);
}

PlanOptions all_flags() {
  PlanOptions o;
  o.master_addr = "10.9.0.1";
  o.roce_dscp = 26;
  o.ib_sl = 3;
  return o;
}

}  // namespace

TEST(EnvConsumers, BashParsesShellDockerSlurmAndTorchrun) {
  if (!have("bash")) GTEST_SKIP() << "bash not installed";
  TempDir t;
  for (const auto& f : kFixtures)
    for (Format fmt : {Format::Shell, Format::Docker, Format::Slurm, Format::Torchrun}) {
      const std::string text = render(fixture_plan(f, all_flags()), fmt, RenderOptions{});
      auto path = write(t, "script.sh", text);
      auto r = run("bash -n '" + path + "'");
      EXPECT_EQ(r.exit_code, 0) << f << " " << format_names()[static_cast<int>(fmt)] << ":\n" << r.out << "\n" << text;
    }
}

TEST(EnvConsumers, SourcingTheShellOutputSetsEveryPlannedValue) {
  if (!have("bash")) GTEST_SKIP() << "bash not installed";
  TempDir t;
  for (const auto& f : kFixtures) {
    const EnvPlan p = fixture_plan(f, all_flags());
    auto path = write(t, "env.sh", render(p, Format::Shell, RenderOptions{}));
    std::string cmd = "bash -c '. \"" + path + "\"";
    for (const auto& v : p.vars) cmd += "; printf \"%s=%s\\n\" " + v.name + " \"$" + v.name + "\"";
    cmd += "'";
    auto r = run(cmd);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    for (const auto& v : p.vars) EXPECT_NE(r.out.find(v.name + "=" + v.value + "\n"), std::string::npos) << r.out;
  }
}

TEST(EnvConsumers, PyYamlLoadsTheK8sListWithStringValues) {
  if (run("python3 -c 'import yaml'").exit_code != 0) GTEST_SKIP() << "python3-yaml not installed";
  TempDir t;
  for (const auto& f : kFixtures) {
    const EnvPlan p = fixture_plan(f, all_flags());
    auto path = write(t, "env.yaml", render(p, Format::K8s, RenderOptions{}));
    auto r = run("python3 -c 'import json,sys,yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))' '" + path + "'");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    json j = json::parse(r.out);
    ASSERT_TRUE(j.is_array()) << r.out;
    ASSERT_EQ(j.size(), p.vars.size());
    for (std::size_t i = 0; i < p.vars.size(); ++i) {
      EXPECT_EQ(j[i].at("name"), p.vars[i].name);
      ASSERT_TRUE(j[i].at("value").is_string()) << "k8s env values must be strings: " << j[i].dump();
      EXPECT_EQ(j[i].at("value"), p.vars[i].value);
    }
  }
}

TEST(EnvConsumers, EnvFileRoundTripsThroughTheReader) {
  for (const auto& f : kFixtures) {
    const EnvPlan p = fixture_plan(f, all_flags());
    const ParsedFile parsed = parse_env_text(render(p, Format::EnvFile, RenderOptions{}), "plan.env", Dialect::EnvFile);
    EXPECT_TRUE(parsed.findings.empty()) << parsed.findings.front().message;
    ASSERT_EQ(parsed.entries.size(), p.vars.size());
    for (std::size_t i = 0; i < p.vars.size(); ++i) {
      EXPECT_EQ(parsed.entries[i].key, p.vars[i].name);
      EXPECT_EQ(parsed.entries[i].value, p.vars[i].value);
    }
    // NCCL's own reader rules (nccl.conf) read the same file the same way.
    const ParsedFile conf = parse_env_text(render(p, Format::EnvFile, RenderOptions{}), "nccl.conf", Dialect::NcclConf);
    EXPECT_TRUE(conf.findings.empty());
    EXPECT_EQ(conf.entries.size(), p.vars.size());
  }
}

TEST(EnvConsumers, JsonCarriesSchemaAndEveryVariable) {
  const EnvPlan p = fixture_plan("rxe-vm");
  json j = json::parse(render(p, Format::Json, RenderOptions{}));
  EXPECT_EQ(j.at("schema"), "fabscope.env");
  EXPECT_EQ(j.at("schema_version"), 1);
  ASSERT_EQ(j.at("variables").size(), p.vars.size());
  for (const auto& v : j.at("variables")) {
    EXPECT_FALSE(v.at("reason").get<std::string>().empty());
    EXPECT_FALSE(v.at("evidence").get<std::string>().empty());
  }
}

TEST(EnvConsumers, TextFormatsFitIn100Columns) {
  for (const auto& f : kFixtures)
    for (Format fmt : {Format::Shell, Format::EnvFile, Format::Docker, Format::K8s, Format::Slurm, Format::Torchrun}) {
      const std::string text = render(fixture_plan(f, all_flags()), fmt, RenderOptions{});
      std::size_t start = 0;
      while (start < text.size()) {
        auto end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        EXPECT_LE(end - start, 100u) << f << ": " << text.substr(start, end - start);
        start = end + 1;
      }
    }
}

TEST(EnvConsumers, ShellQuoteSurvivesQuotesAndBlanks) {
  if (!have("bash")) GTEST_SKIP() << "bash not installed";
  for (const std::string v : {"=eth0", "a b", "it's", "^docker,lo", "$HOME", ""}) {
    auto r = run("bash -c " + shell_quote("x=" + shell_quote(v) + "; printf %s \"$x\""));
    EXPECT_EQ(r.out, v);
  }
}
