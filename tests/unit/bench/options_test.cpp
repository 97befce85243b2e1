// Flags: nccl-tests' letters, defaults, and a UsageError naming the flag for every bad value.
#include <gtest/gtest.h>

#include "bench/options.hpp"
#include "core/error.hpp"

using namespace fabscope::bench;
using fabscope::UsageError;

namespace {
std::string usage_error(const std::vector<std::string>& args) {
  try {
    parse_options(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(Options, DefaultsAreAllReduceFloatSumAdaptive8BTo128M) {
  Options o = parse_options({});
  EXPECT_EQ(o.collective, Collective::AllReduce);
  EXPECT_EQ(o.type, DataType::Float);
  EXPECT_EQ(o.op, RedOp::Sum);
  EXPECT_TRUE(o.stop.adaptive);
  EXPECT_TRUE(o.check);
  EXPECT_FALSE(o.graphs);
  EXPECT_EQ(o.sweep.min_bytes, 8u);
  EXPECT_EQ(o.sweep.max_bytes, 128u << 20);
  EXPECT_EQ(o.format, Format::Text);
}

TEST(Options, NcclTestsLettersWork) {
  Options o = parse_options({"all_gather", "-b", "1M", "-e", "4G", "-f", "4", "-d", "bfloat16", "-n", "20", "-w",
                             "5", "-c", "0", "-G", "1", "-g", "2"});
  EXPECT_EQ(o.collective, Collective::AllGather);
  EXPECT_EQ(o.sweep.min_bytes, 1u << 20);
  EXPECT_EQ(o.sweep.max_bytes, 4ull << 30);
  EXPECT_EQ(o.sweep.step_factor, 4);
  EXPECT_EQ(o.type, DataType::Bfloat16);
  EXPECT_FALSE(o.stop.adaptive);
  EXPECT_EQ(o.stop.fixed_iters, 20);
  EXPECT_EQ(o.stop.fixed_warmup, 5);
  EXPECT_FALSE(o.check);
  EXPECT_TRUE(o.graphs);
  EXPECT_EQ(o.gpus, 2);
}

TEST(Options, GraphLaunchCountOfNcclTestsTurnsGraphsOn) {
  EXPECT_TRUE(parse_options({"-G", "10"}).graphs);
}

TEST(Options, PrecisionIsPercent) {
  Options o = parse_options({"--precision", "0.5", "--max-time", "2"});
  EXPECT_DOUBLE_EQ(o.stop.rel_precision, 0.005);
  EXPECT_DOUBLE_EQ(o.stop.max_time_s, 2);
}

TEST(Options, ExplicitSizeList) {
  Options o = parse_options({"--sizes", "8,1M,1G"});
  EXPECT_EQ(sweep_sizes(o.sweep), (std::vector<std::uint64_t>{8, 1 << 20, 1 << 30}));
}

TEST(Options, BadValuesNameTheFlag) {
  EXPECT_NE(usage_error({"-b", "lots"}).find("--minbytes"), std::string::npos);
  EXPECT_NE(usage_error({"-d", "float8"}).find("--datatype"), std::string::npos);
  EXPECT_NE(usage_error({"-o", "xor"}).find("--op"), std::string::npos);
  EXPECT_NE(usage_error({"-c", "maybe"}).find("--check"), std::string::npos);
  EXPECT_NE(usage_error({"-n", "0"}).find("iters"), std::string::npos);
  EXPECT_NE(usage_error({"--launcher", "slurm"}).find("--launcher"), std::string::npos);
  EXPECT_NE(usage_error({"-f", "1"}).find("stepfactor"), std::string::npos);
  EXPECT_NE(usage_error({"--nccl-port", "70000"}).find("nccl-port"), std::string::npos);
}

TEST(Options, UnknownCollectiveListsTheKnownOnes) {
  auto e = usage_error({"allreduce_v"});
  EXPECT_NE(e.find("unknown collective 'allreduce_v'"), std::string::npos) << e;
  EXPECT_NE(e.find("sendrecv"), std::string::npos) << e;
}

TEST(Options, OneCollectivePerRun) { EXPECT_NE(usage_error({"all_reduce", "all_gather"}), ""); }

TEST(Options, OperatorOnlyForReducingCollectives) {
  EXPECT_NE(usage_error({"all_gather", "-o", "max"}).find("takes no reduction operator"), std::string::npos);
  EXPECT_NO_THROW(parse_options({"reduce_scatter", "-o", "max"}));
}

TEST(Options, RootOnlyForBroadcastAndReduce) {
  EXPECT_NE(usage_error({"all_reduce", "-r", "1"}).find("has no root"), std::string::npos);
  EXPECT_EQ(parse_options({"broadcast", "-r", "1"}).root, 1);
}

TEST(Options, SizeListExcludesMinMax) {
  EXPECT_NE(usage_error({"--sizes", "8,1M", "-b", "8"}).find("--sizes replaces"), std::string::npos);
}

TEST(Options, FactorAndStepBytesExcludeEachOther) {
  EXPECT_NE(usage_error({"-f", "2", "-i", "1M"}), "");
}

TEST(Options, MinAboveMaxIsRefusedBeforeAnyGpuWork) {
  EXPECT_NE(usage_error({"-b", "1G", "-e", "1M"}).find("larger than the maximum"), std::string::npos);
}

TEST(Options, JsonAndCsvBothOnStdoutIsRefused) {
  EXPECT_NE(usage_error({"--json", "--csv"}), "");
  EXPECT_EQ(parse_options({"--json", "--csv-file", "x.csv"}).format, Format::Json);
}

TEST(Options, FingerprintChangesWithEverySharedSetting) {
  auto base = settings_fingerprint(parse_options({}));
  EXPECT_EQ(base, settings_fingerprint(parse_options({})));
  EXPECT_NE(base, settings_fingerprint(parse_options({"-e", "64M"})));
  EXPECT_NE(base, settings_fingerprint(parse_options({"-d", "half"})));
  EXPECT_NE(base, settings_fingerprint(parse_options({"-o", "max"})));
  EXPECT_NE(base, settings_fingerprint(parse_options({"-n", "20"})));
  EXPECT_NE(base, settings_fingerprint(parse_options({"-G", "1"})));
  // Output choices are per rank and do not matter.
  EXPECT_EQ(base, settings_fingerprint(parse_options({"--json", "--no-progress"})));
}

TEST(Options, DefaultTimerIsNcclTestsWallClockMeanOverRanks) {
  Options o = parse_options({});
  EXPECT_EQ(o.timer, Timer::Wall);
  EXPECT_EQ(o.average, Average::Mean);
  EXPECT_FALSE(o.report_cputime);
  EXPECT_EQ(o.cycles, 1);
  EXPECT_EQ(o.registration, Registration::None);
  EXPECT_FALSE(o.per_iter);
  EXPECT_TRUE(o.nccl_tests_json.empty());
}

TEST(Options, GpuTimerIsExplicit) {
  EXPECT_EQ(parse_options({"--timer", "gpu"}).timer, Timer::Gpu);
  EXPECT_EQ(parse_options({"--timer", "wall"}).timer, Timer::Wall);
  EXPECT_NE(usage_error({"--timer", "cuda"}).find("--timer 'cuda'"), std::string::npos);
}

TEST(Options, NcclTestsLettersOfTheRestOfItsFlags) {
  Options o = parse_options({"-a", "3", "-C", "1", "-N", "4", "-R", "2", "-I", "1", "-K", "2", "-n", "50", "-J",
                             "out.json"});
  EXPECT_EQ(o.average, Average::Max);
  EXPECT_TRUE(o.report_cputime);
  EXPECT_EQ(o.cycles, 4);
  EXPECT_EQ(o.registration, Registration::Symmetric);
  EXPECT_TRUE(o.per_iter);
  EXPECT_EQ(o.per_iter_skip, 2);
  EXPECT_EQ(o.nccl_tests_json, "out.json");
  EXPECT_EQ(parse_options({"--average", "0"}).average, Average::Rank0);
  EXPECT_EQ(parse_options({"--local_register", "1"}).registration, Registration::Local);
}

TEST(Options, BadValuesOfTheNewFlagsNameTheFlag) {
  EXPECT_NE(usage_error({"-a", "4"}).find("average"), std::string::npos);
  EXPECT_NE(usage_error({"-R", "3"}).find("local_register"), std::string::npos);
  EXPECT_NE(usage_error({"-N", "0"}).find("run_cycles"), std::string::npos);
  EXPECT_NE(usage_error({"-I", "2"}).find("per_iter_timing"), std::string::npos);
  EXPECT_NE(usage_error({"-C", "yes please"}).find("report_cputime"), std::string::npos);
}

TEST(Options, PerIterationTimingConflicts) {
  EXPECT_NE(usage_error({"-I", "1", "-G", "1"}).find("-G"), std::string::npos);
  EXPECT_NE(usage_error({"-K", "3"}).find("-I 1"), std::string::npos);
  EXPECT_NE(usage_error({"-I", "1", "-n", "5", "-K", "5"}).find("leaves none"), std::string::npos);
  EXPECT_NE(usage_error({"-C", "1", "--timer", "gpu"}).find("--timer gpu"), std::string::npos);
}

TEST(Options, NewCollectivesTakeARootWhereNcclTestsGivesThemOne) {
  EXPECT_EQ(parse_options({"gather", "-r", "1"}).root, 1);
  EXPECT_EQ(parse_options({"scatter", "--root", "2"}).root, 2);
  EXPECT_NE(usage_error({"alltoallv", "-r", "1"}).find("has no root"), std::string::npos);
  EXPECT_NE(usage_error({"hypercube", "-o", "max"}).find("no reduction operator"), std::string::npos);
}

TEST(Options, TimerAndRegistrationChangeTheSettingsFingerprint) {
  auto base = settings_fingerprint(parse_options({}));
  EXPECT_NE(base, settings_fingerprint(parse_options({"--timer", "gpu"})));
  EXPECT_NE(base, settings_fingerprint(parse_options({"-R", "1"})));
  EXPECT_NE(base, settings_fingerprint(parse_options({"-N", "2"})));
}
