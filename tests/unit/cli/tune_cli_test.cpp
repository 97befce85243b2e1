// fabscope tune as a user runs it: the whole command on the simulated model (--simulate), the
// files it writes, usage errors, and what it says without a GPU build.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/json.hpp"
#include "support/cli_run.hpp"
#include "table.h"  // plugins/nccl-tuner: the reader NCCL's process uses

namespace {

using fabscope::testing::quote;
using fabscope::testing::run_fabscope;
namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

class TuneCli : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/fabscope-tune-cli-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(TuneCli, SimulatedRunWritesEveryOutput) {
  auto r = run_fabscope("tune --simulate 7 --no-progress -b 64K -e 256M -o " + quote(dir_.string()));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("SIMULATED"), std::string::npos) << r.out;
  for (const char* f : {"nccl_tuner.csv", "tune.env", "tune-report.txt", "tune.json", "measurements.csv"})
    EXPECT_TRUE(fs::exists(dir_ / f)) << f;
  // The table reads back through the plugin's reader without a bad line.
  std::string table = slurp(dir_ / "nccl_tuner.csv");
  fst_table t;
  ASSERT_EQ(fst_parse_text(table.data(), table.size(), &t, nullptr, nullptr), 0);
  EXPECT_EQ(t.bad_lines, 0u);
  EXPECT_GT(t.count, 0u);
  fst_table_free(&t);
  std::string env = slurp(dir_ / "tune.env");
  EXPECT_NE(env.find("NCCL_TUNER_CONFIG_FILE=" + fs::absolute(dir_ / "nccl_tuner.csv").lexically_normal().string()),
            std::string::npos)
      << env;
  EXPECT_NE(env.find("NCCL_TUNER_PLUGIN="), std::string::npos);
  auto j = fabscope::json::parse(slurp(dir_ / "tune.json"));
  EXPECT_EQ(j["schema"], "fabscope.tune");
  EXPECT_EQ(j["simulated"], true);
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) EXPECT_LE(line.size(), 100u) << line;
}

TEST_F(TuneCli, JsonGoesToStdout) {
  auto r = run_fabscope("tune --simulate 3 --json --no-progress --sizes 1M,1G -c all_reduce,all_gather -o " +
                            quote(dir_.string()),
                        "", false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = fabscope::json::parse(r.out);
  EXPECT_EQ(j["schema_version"], 1);
  ASSERT_EQ(j["collectives"].size(), 2u);
  EXPECT_EQ(j["collectives"][1]["collective"], "all_gather");
  EXPECT_EQ(j["collectives"][0]["sizes"].size(), 2u);
}

TEST_F(TuneCli, UsageErrorsExitThreeNamingTheValue) {
  auto r = run_fabscope("tune --simulate 1 -c all_to_all");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("'all_to_all'"), std::string::npos) << r.out;
  r = run_fabscope("tune --simulate 1 --channels 8,99");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("'99'"), std::string::npos) << r.out;
  r = run_fabscope("tune --simulate 1 --protocols ll,fast");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("'fast'"), std::string::npos) << r.out;
  r = run_fabscope("tune --simulate 1 --env-format yaml");
  EXPECT_EQ(r.exit_code, 3);
  r = run_fabscope("tune --simulate 1 -b 1G -e 1K");
  EXPECT_EQ(r.exit_code, 3);
}

TEST_F(TuneCli, WithoutAGpuBuildOrGpuItSaysWhyAndExitsThree) {
  // CI machines have no GPU: either this build has no GPU side, or the session finds no GPU.
  auto r = run_fabscope("tune --no-progress -o " + quote(dir_.string()), "CUDA_VISIBLE_DEVICES=");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "nccl_tuner.csv"));
}

}  // namespace
