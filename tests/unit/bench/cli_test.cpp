// `fabscope bench` as a user runs it, on a machine without a GPU (CI): help, flag errors, and a
// clear "what is missing" with exit 3.
#include <gtest/gtest.h>

#include <string>

#include "bench/run.hpp"
#include "support/cli_run.hpp"

namespace {
using fabscope::testing::CliResult;

CliResult run(const std::string& args, const std::string& env = "") { return fabscope::testing::run_fabscope(args, env); }
}  // namespace

TEST(BenchCli, HelpListsNcclTestsFlagsAndExitCodes) {
  auto r = run("bench --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* flag : {"-b, --minbytes", "-e, --maxbytes", "-f, --stepfactor", "-n, --iters", "-G, --cudagraph",
                           "--launcher", "torchrun", "Exit codes"})
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
}

TEST(BenchCli, BadFlagExitsThreeNamingIt) {
  auto r = run("bench -d float8");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("float8"), std::string::npos) << r.out;
  EXPECT_EQ(run("bench --no-such-flag").exit_code, 3);
  EXPECT_EQ(run("bench all_gather -o max").exit_code, 3);
}

TEST(BenchCli, WithoutAGpuItSaysWhatIsMissingAndExitsThree) {
  if (fabscope::bench::gpu_support().built && fabscope::bench::visible_gpus() > 0)
    GTEST_SKIP() << "a GPU is visible: the GPU tests cover this machine";
  auto r = run("bench -b 8 -e 8 --no-progress");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  bool says = r.out.find("built without the GPU benchmark") != std::string::npos ||
              r.out.find("no GPU") != std::string::npos || r.out.find("NCCL") != std::string::npos;
  EXPECT_TRUE(says) << r.out;
}

TEST(BenchCli, TorchrunEnvironmentErrorsBeforeAnyGpuWork) {
  // Only checked where the GPU side is built: otherwise the missing build is the message.
  if (!fabscope::bench::gpu_support().built) GTEST_SKIP() << "built without CUDA/NCCL";
  if (fabscope::bench::visible_gpus() == 0) GTEST_SKIP() << "no GPU: the GPU check comes first";
  auto r = run("bench --launcher torchrun --no-progress", "RANK=0 WORLD_SIZE=2");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("LOCAL_RANK"), std::string::npos) << r.out;
}
