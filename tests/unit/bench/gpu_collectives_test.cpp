// Real collectives on the GPUs of this machine (local launcher, every visible GPU), each size
// checked element by element against the reference. Skipped, with the reason, where the build
// has no CUDA/NCCL or no GPU is visible (CI); run for real on the device node.
#include <gtest/gtest.h>

#include <memory>

#include "bench/run.hpp"
#include "core/error.hpp"

using namespace fabscope::bench;

namespace {

// One session (communicators) for the whole suite: creating them costs about a second.
Session* session() {
  static std::unique_ptr<Session> s;
  static std::string why;
  static bool tried = false;
  if (!tried) {
    tried = true;
    if (!gpu_support().built) {
      why = "built without CUDA/NCCL";
    } else if (visible_gpus(&why) == 0) {
      // why set
    } else {
      try {
        s = Session::open(parse_options({"--launcher", "local", "--no-progress"}));
      } catch (const std::exception& e) {
        why = e.what();
      }
    }
  }
  if (!s) std::cerr << "GPU tests skipped: " << why << "\n";
  return s.get();
}

#define NEED_GPUS()                                                               \
  Session* S = session();                                                         \
  if (!S) GTEST_SKIP() << "no GPU session (built without CUDA/NCCL or no GPU)";  \
  (void)S

Report run_case(Session* s, std::vector<std::string> args) {
  args.insert(args.end(), {"--launcher", "local", "--no-progress", "-n", "2", "-w", "1"});
  return s->run(parse_options(args), nullptr);
}

void expect_all_correct(const Report& r, const std::string& what) {
  ASSERT_FALSE(r.results.empty()) << what;
  for (const auto& s : r.results) {
    ASSERT_TRUE(s.out_of_place.wrong.has_value()) << what;
    EXPECT_EQ(*s.out_of_place.wrong, 0) << what << " out-of-place " << s.bytes << " B";
    EXPECT_GT(s.out_of_place.time_us, 0) << what;
    ASSERT_TRUE(s.in_place.has_value()) << what << ": nccl-tests times in place for every collective";
    EXPECT_GT(s.in_place->time_us, 0) << what;
    if (s.in_place->wrong) EXPECT_EQ(*s.in_place->wrong, 0) << what << " in-place " << s.bytes << " B";
    else EXPECT_FALSE(describe(r.options.collective).in_place_checked) << what << " in-place not checked";
  }
  EXPECT_EQ(r.summary.wrong_total, 0) << what;
}

// Odd sizes too: counts that do not divide by the rank count, and a partial vector.
const char* kSizes = "8,100,4100,1M,3M";

}  // namespace

TEST(GpuCollectives, EveryCollectiveFloatSum) {
  NEED_GPUS();
  for (const auto& d : all_collectives()) {
    if (d.runs_on && !d.runs_on(S->nranks())) continue;
    auto r = run_case(S, {std::string(d.name), "--sizes", kSizes});
    expect_all_correct(r, std::string(d.name));
  }
}

TEST(GpuCollectives, EveryTypeAndOperatorOfAllReduce) {
  NEED_GPUS();
  for (const char* t : {"float", "half", "bfloat16", "int32", "int8", "double", "uint8", "int64"})
    for (const char* op : {"sum", "prod", "min", "max", "avg"}) {
      auto r = run_case(S, {"all_reduce", "-d", t, "-o", op, "--sizes", "8,4100,1M"});
      expect_all_correct(r, std::string("all_reduce ") + t + " " + op);
    }
}

TEST(GpuCollectives, ReduceScatterAndReduceWithEveryOperator) {
  NEED_GPUS();
  for (const char* c : {"reduce_scatter", "reduce"})
    for (const char* op : {"sum", "prod", "min", "max", "avg"}) {
      auto r = run_case(S, {c, "-d", "bfloat16", "-o", op, "--sizes", "64,1M"});
      expect_all_correct(r, std::string(c) + " bfloat16 " + op);
    }
}

TEST(GpuCollectives, RootSelection) {
  NEED_GPUS();
  for (int root = 0; root < S->nranks(); ++root)
    for (const char* c : {"broadcast", "reduce", "gather", "scatter"}) {
      auto r = run_case(S, {c, "-r", std::to_string(root), "--sizes", "4100,1M", "-d", "half"});
      expect_all_correct(r, std::string(c) + " root " + std::to_string(root));
    }
}

TEST(GpuCollectives, GraphsAndAdaptiveIterations) {
  NEED_GPUS();
  auto r = S->run(parse_options({"all_reduce", "--sizes", "8,1M", "-G", "1", "--no-progress", "--launcher", "local"}),
                  nullptr);
  expect_all_correct(r, "graphs");
  for (const auto& s : r.results) {
    EXPECT_GE(s.out_of_place.batches, 3);
    EXPECT_GT(s.out_of_place.iterations, 1);
  }
}

TEST(GpuCollectives, RootOutsideTheJobIsAUsageError) {
  NEED_GPUS();
  EXPECT_THROW(run_case(S, {"broadcast", "-r", std::to_string(S->nranks()), "--sizes", "8"}), fabscope::UsageError);
}

TEST(GpuCollectives, NcclTestsBusBandwidthAtOneMegabyteIsPositive) {
  NEED_GPUS();
  auto r = run_case(S, {"all_reduce", "--sizes", "1M"});
  if (S->nranks() > 1) {
    EXPECT_GT(r.results[0].out_of_place.busbw_gbytes_per_s, 0.1);
  }
}

TEST(GpuCollectives, BufferRegistrationLocalAndSymmetric) {
  NEED_GPUS();
  for (const char* reg : {"1", "2"})
    for (const char* c : {"all_reduce", "all_gather", "sendrecv"}) {
      Report r;
      try {
        r = run_case(S, {c, "-R", reg, "--sizes", "8,4100,1M,16M"});
      } catch (const fabscope::Error& e) {
        // An NCCL without the call says which version it needs; anything else is a failure.
        EXPECT_NE(std::string(e.what()).find("needs NCCL"), std::string::npos) << e.what();
        continue;
      }
      expect_all_correct(r, std::string(c) + " -R " + reg);
    }
  // Back to unregistered buffers on the same session.
  expect_all_correct(run_case(S, {"all_reduce", "--sizes", "1M"}), "after -R");
}

TEST(GpuCollectives, PerIterationTimesAndCycles) {
  NEED_GPUS();
  auto r = S->run(parse_options({"all_reduce", "--sizes", "8,1M", "-n", "10", "-w", "2", "-I", "1", "-K", "1", "-N",
                                 "2", "--no-progress", "--launcher", "local"}),
                  nullptr);
  expect_all_correct(r, "-I 1 -N 2");
  ASSERT_EQ(r.results.size(), 4u);
  EXPECT_EQ(r.results[2].cycle, 1);
  for (const auto& s : r.results) {
    ASSERT_TRUE(s.out_of_place.per_iter.has_value());
    const auto& st = *s.out_of_place.per_iter;
    EXPECT_EQ(st.times_us.size(), 10u);
    EXPECT_EQ(st.skipped, 1);
    EXPECT_GT(st.min_us, 0);
    EXPECT_LE(st.min_us, st.p50_us);
    EXPECT_LE(st.p99_us, st.max_us);
    EXPECT_GE(s.out_of_place.cpu_time_us, 0);
  }
}

TEST(GpuCollectives, BothTimersAndEveryAverageMode) {
  NEED_GPUS();
  for (const char* timer : {"wall", "gpu"})
    for (const char* a : {"0", "1", "2", "3"}) {
      auto r = run_case(S, {"all_reduce", "--sizes", "64K", "--timer", timer, "-a", a});
      expect_all_correct(r, std::string("--timer ") + timer + " -a " + a);
      EXPECT_EQ(r.results[0].out_of_place.cpu_time_us >= 0, std::string(timer) == "wall");
    }
}
