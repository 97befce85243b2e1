// fabscope tune as a user runs it: the whole command on the simulated model (--simulate), the
// files it writes, usage errors, and what it says without a GPU build.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/json.hpp"
#include "support/cli_run.hpp"
#include "table.h"  // plugins/nccl-tuner: the reader NCCL's process uses

namespace {

using fabscope::testing::quote;
using fabscope::testing::run_fabscope;
namespace fs = std::filesystem;

using fabscope::testing::slurp;

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

// Every file tune writes goes through the one writer: a character device (a link to /dev/null
// here; as root `-o` over /dev would have replaced the device) is written in place, a FIFO too.
TEST_F(TuneCli, OutputsThatAreDevicesOrFifosAreWrittenInPlace) {
  fs::create_directories(dir_);
  fs::create_symlink("/dev/null", dir_ / "tune-report.txt");
  ASSERT_EQ(::mkfifo((dir_ / "measurements.csv").c_str(), 0600), 0);
  // The FIFO's reader, opened (without waiting) before the run and drained while it runs, so the
  // writer never waits on a full pipe.
  int rd = ::open((dir_ / "measurements.csv").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(rd, 0);
  std::atomic<bool> done{false};
  std::string csv;
  std::thread reader([&] {
    char buf[4096];
    while (true) {
      pollfd p{rd, POLLIN, 0};
      ::poll(&p, 1, 50);
      ssize_t n = ::read(rd, buf, sizeof buf);
      if (n > 0) csv.append(buf, static_cast<std::size_t>(n));
      else if (done) break;
    }
  });
  auto r = run_fabscope("tune --simulate 3 --no-progress --no-env-search --sizes 1M -o " + quote(dir_.string()),
                        "timeout -s KILL 120");
  done = true;
  reader.join();
  ::close(rd);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(fs::is_symlink(dir_ / "tune-report.txt"));
  EXPECT_TRUE(fs::is_fifo(dir_ / "measurements.csv"));
  EXPECT_FALSE(csv.empty());
  EXPECT_TRUE(fs::is_regular_file(dir_ / "tune.json"));
}

TEST_F(TuneCli, SizesBeyondOneTebibyteAreRefused) {
  auto r = run_fabscope("tune --simulate 1 --sizes 1M,18446744073709551615");  // 16 EiB less a byte
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("tune: size 18446744073709551615 B is larger than 1 TiB"), std::string::npos) << r.out;
  r = run_fabscope("tune --simulate 1 -b 2T -e 2T");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("larger than 1 TiB"), std::string::npos) << r.out;
}

TEST_F(TuneCli, SizeErrorsNameTune) {
  for (const char* args : {"--sizes 1M,abc", "--sizes 1M,,8"}) {
    auto r = run_fabscope(std::string("tune --simulate 1 ") + args);
    EXPECT_EQ(r.exit_code, 3) << args << ": " << r.out;
    EXPECT_NE(r.out.find("fabscope tune: "), std::string::npos) << args << ": " << r.out;
    EXPECT_EQ(r.out.find("bench:"), std::string::npos) << args << ": " << r.out;
  }
}

TEST_F(TuneCli, WithoutAGpuBuildOrGpuItSaysWhyAndExitsThree) {
  // CI machines have no GPU: either this build has no GPU side, or the session finds no GPU.
  auto r = run_fabscope("tune --no-progress -o " + quote(dir_.string()), "CUDA_VISIBLE_DEVICES=");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "nccl_tuner.csv"));
}

// The environment-only settings: every measurement is this binary started again (--env-worker),
// the simulated worker reading its variables from its own environment as NCCL would.
TEST_F(TuneCli, SimulatedRunSearchesTheEnvironmentInFreshProcesses) {
  auto r = run_fabscope("tune --simulate 7 --no-progress -b 64K -e 256M -o " + quote(dir_.string()));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("environment-only settings: one fresh process per measurement"), std::string::npos) << r.out;
  auto j = fabscope::json::parse(slurp(dir_ / "tune.json"));
  const auto& e = j["env_search"];
  ASSERT_TRUE(e.is_object()) << j.dump(1);
  EXPECT_GT(e["processes"].get<int>(), 10);
  EXPECT_EQ(e["net_path"], "none (one node)");
  ASSERT_EQ(e["chosen"].size(), 1u) << e["chosen"].dump();
  EXPECT_EQ(e["chosen"][0]["name"], "NCCL_BUFFSIZE");
  EXPECT_EQ(e["chosen"][0]["value"], "8388608");
  std::string env = slurp(dir_ / "tune.env");
  EXPECT_NE(env.find("\nNCCL_BUFFSIZE=8388608\n"), std::string::npos) << env;
  EXPECT_NE(env.find("NCCL_NTHREADS: NCCL's default kept"), std::string::npos) << env;
  // The table is searched first; every worker loads it, then both together face NCCL's defaults.
  const std::string table = fs::absolute(dir_ / "nccl_tuner.csv").lexically_normal().string();
  EXPECT_EQ(e["table"], table);
  ASSERT_TRUE(e["combined"].is_object()) << e.dump(1);
  EXPECT_EQ(e["combined"]["verified"], true);
  EXPECT_EQ(e["combined"]["kept"], true) << e["combined"]["reason"];
  EXPECT_GT(e["combined"]["overall"]["speedup"].get<double>(), 1.05);
  EXPECT_NE(r.out.find("# both together: the table with NCCL_BUFFSIZE=8388608 against NCCL's defaults"),
            std::string::npos) << r.out;
  EXPECT_NE(env.find("against the table with NCCL's defaults"), std::string::npos) << env;
}

TEST_F(TuneCli, AWorkerMeasuresWithTheVariablesOfItsOwnProcess) {
  const std::string spec =
      R"({"points":[{"collective":"all_reduce","bytes":268435456}],"budget_s":0.05,"env":[],"simulate":true,)"
      R"("seed":5,"gpus":0,"plugin":"","compute_load_pct":0,"timeout_s":60})";
  auto time_of = [&](const std::string& env) {
    auto r = run_fabscope("tune --env-worker " + quote(spec), env, false);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    auto at = r.out.find("fabscope-tune-worker: ");
    EXPECT_NE(at, std::string::npos) << r.out;
    if (at == std::string::npos) return 0.0;
    return fabscope::json::parse(r.out.substr(at + 22))["time_us"][0].get<double>();
  };
  const double plain = time_of("");
  const double small_buffers = time_of("NCCL_BUFFSIZE=1048576");
  EXPECT_GT(small_buffers, plain * 1.1);  // the model's 1 MiB buffers: 15% slower from 16 MiB on
  auto r = run_fabscope("tune --env-worker '{\"points\": 3}'");
  EXPECT_EQ(r.exit_code, 3) << r.out;
}

TEST_F(TuneCli, LaunchRunsTheTableJobThenEveryProcessBehindTheLaunchCommand) {
  // `env` stands in for mpirun: it runs the command after it, as a launcher does.
  auto r = run_fabscope("tune --simulate 3 --sizes 1M,256M --launch env -o " + quote(dir_.string()));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* f : {"nccl_tuner.csv", "tune.env", "tune-report.txt", "tune.json", "measurements.csv"})
    EXPECT_TRUE(fs::exists(dir_ / f)) << f;
  EXPECT_NE(r.out.find("tune: searching the per-call table in one job of: env"), std::string::npos) << r.out;
  EXPECT_LT(r.out.find("tune: all_reduce 256 MiB"), r.out.find("tune: environment-only settings")) << r.out;
  auto j = fabscope::json::parse(slurp(dir_ / "tune.json"));
  EXPECT_EQ(j["env_search"]["launch"], "each a new job of: env");
  EXPECT_EQ(j["env_search"]["table"], fs::absolute(dir_ / "nccl_tuner.csv").lexically_normal().string());
  EXPECT_NE(r.out.find("each a new job of:"), std::string::npos) << r.out;
  // The table job's result reaches the final files whole: the same sizes and trials as a run
  // without --launch on the same seed (the table search is deterministic in the model).
  const fs::path local = dir_ / "local";
  auto l = run_fabscope("tune --simulate 3 --no-progress --sizes 1M,256M -o " + quote(local.string()));
  ASSERT_EQ(l.exit_code, 0) << l.out;
  auto lj = fabscope::json::parse(slurp(local / "tune.json"));
  EXPECT_EQ(j["collectives"], lj["collectives"]);
  EXPECT_EQ(j["table"], lj["table"]);
  EXPECT_EQ(j["measurements"], lj["measurements"]);
}

TEST_F(TuneCli, EnvSearchUsageErrors) {
  auto r = run_fabscope("tune --simulate 1 --launch env --no-env-search");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("--no-env-search"), std::string::npos) << r.out;
  r = run_fabscope("tune --simulate 1 --env-settings buffsize,warp");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("'warp'"), std::string::npos) << r.out;
  r = run_fabscope("tune --simulate 1 --launch \"mpirun 'x\"");
  EXPECT_EQ(r.exit_code, 3);
  r = run_fabscope("tune --simulate 1 --compute-load 0");
  EXPECT_EQ(r.exit_code, 3);
  // The table job fails: its exit code, no output (the out dir is the test's own: the tests run
  // as an unprivileged user from a directory it cannot write).
  r = run_fabscope("tune --simulate 1 --launch false -o " + quote((dir_ / "failed").string()));
  EXPECT_EQ(r.exit_code, 1) << r.out;
}

TEST_F(TuneCli, ComputeLoadIsStatedInTheReport) {
  auto r = run_fabscope("tune --simulate 2 --no-progress --no-env-search --sizes 1M,1G --compute-load 50 -o " +
                        quote(dir_.string()));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("measured under a compute load: 50% of the SMs"), std::string::npos) << r.out;
  auto j = fabscope::json::parse(slurp(dir_ / "tune.json"));
  EXPECT_EQ(j["compute_load"]["sm_percent"], 50.0);
  EXPECT_TRUE(j["env_search"].is_null());
  // The written choices are verified idle as well, and both are reported.
  bool idle_reported = false;
  for (const auto& s : j["collectives"][0]["sizes"]) {
    EXPECT_EQ(s["idle"].is_object(), s["written"]["label"] != "NCCL default") << s.dump();
    idle_reported |= s["idle"].is_object();
  }
  EXPECT_TRUE(idle_reported);
  EXPECT_NE(r.out.find("idle (no load)"), std::string::npos) << r.out;
}

}  // namespace
