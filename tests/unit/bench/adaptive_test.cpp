// Adaptive stopping: batches sized from the iteration time, stop on precision or time.
#include <gtest/gtest.h>

#include "bench/adaptive.hpp"

using namespace fabscope::bench;

TEST(Adaptive, BatchLastsAboutTheTargetTime) {
  StopRule r;  // 0.5 ms batches
  EXPECT_EQ(batch_iterations(r, 10.0), 50);       // 10 us per iteration
  EXPECT_EQ(batch_iterations(r, 0.01), r.max_batch_iters);
}

TEST(Adaptive, BatchesAreNeverShorterThanNcclTestsTwentyIterations) {
  StopRule r;
  EXPECT_EQ(batch_iterations(r, 25000.0), 20);  // a 4 GB all-reduce
  EXPECT_EQ(batch_iterations(r, 30.0), 20);     // 0.5 ms would be 17
  EXPECT_EQ(batch_iterations(r, 0), 20);
}

TEST(Adaptive, LongIterationsNeedFewerThanTwentyPerBatch) {
  StopRule r;
  EXPECT_EQ(batch_iterations(r, 25000.0), 20);   // 0.5 s: still nccl-tests' twenty
  EXPECT_EQ(batch_iterations(r, 70000.0), 8);    // 256 MiB over sockets: about 0.56 s
  EXPECT_EQ(batch_iterations(r, 270000.0), 2);   // 1 GiB over sockets: never fewer than 2
  EXPECT_EQ(batch_iterations(r, 5e6), 2);
  r.long_batch_s = 0;                            // off: twenty whatever the time
  EXPECT_EQ(batch_iterations(r, 270000.0), 20);
  r.long_batch_s = 0.5;
  r.min_batch_iters = 1;                         // a smaller floor stays smaller
  EXPECT_EQ(batch_iterations(r, 270000.0), 1);
}

TEST(Adaptive, FixedModeUsesTheIterationCount) {
  StopRule r;
  r.adaptive = false;
  r.fixed_iters = 20;
  EXPECT_EQ(batch_iterations(r, 10.0), 20);
  EXPECT_EQ(warmup_iterations(r, 10.0), 4);  // 5 with the first
}

TEST(Adaptive, WarmupIsOneToFive) {
  StopRule r;
  EXPECT_EQ(warmup_iterations(r, 10.0), 5);
  EXPECT_EQ(warmup_iterations(r, 400.0), 3);
  EXPECT_EQ(warmup_iterations(r, 30000.0), 1);
}

TEST(Adaptive, SteadyBatchesStopAtTheMinimum) {
  StopRule r;
  Estimator e(r);
  e.add_batch(100.0, 20);
  EXPECT_FALSE(e.done());
  e.add_batch(100.0, 20);
  EXPECT_TRUE(e.done());
  EXPECT_DOUBLE_EQ(e.mean_us(), 100.0);
  EXPECT_DOUBLE_EQ(e.rel_ci(), 0.0);
  EXPECT_EQ(e.iterations(), 40);
}

TEST(Adaptive, NoisyBatchesContinueUntilPrecise) {
  StopRule r;
  r.rel_precision = 0.01;
  r.max_time_s = 100;
  Estimator e(r);
  e.add_batch(90, 10);
  e.add_batch(110, 10);
  e.add_batch(100, 10);
  EXPECT_FALSE(e.done());  // +-10% noise: CI far above 1%
  int added = 0;
  while (!e.done() && added < 10000) {
    e.add_batch(added % 2 ? 99.5 : 100.5, 10);
    ++added;
  }
  EXPECT_TRUE(e.done());
  EXPECT_LE(e.rel_ci(), 0.01);
  EXPECT_GT(added, 3);
}

TEST(Adaptive, TimeLimitStopsANoisyMeasurement) {
  StopRule r;
  r.rel_precision = 0.0001;
  r.max_time_s = 0.01;  // 10 ms
  Estimator e(r);
  int batches = 0;
  while (!e.done()) {
    e.add_batch(batches % 2 ? 800 : 1200, 2);  // 2 ms per batch, 20% noise
    ++batches;
  }
  EXPECT_EQ(batches, 5);
  EXPECT_GE(e.timed_s(), 0.01);
}

TEST(Adaptive, FixedModeStopsAfterOneBatch) {
  StopRule r;
  r.adaptive = false;
  Estimator e(r);
  EXPECT_FALSE(e.done());
  e.add_batch(5, 20);
  EXPECT_TRUE(e.done());
  EXPECT_LT(e.rel_ci(), 0);  // unknown from one batch
}

TEST(Adaptive, BatchCapStopsEvenWithoutPrecision) {
  StopRule r;
  r.rel_precision = 0;
  r.max_time_s = 1e9;
  r.max_batches = 10;
  Estimator e(r);
  for (int i = 0; i < 10; ++i) e.add_batch(i % 2 ? 1 : 2, 1);
  EXPECT_TRUE(e.done());
}

TEST(Adaptive, StudentT) {
  EXPECT_NEAR(student_t975(1), 12.706, 1e-3);
  EXPECT_NEAR(student_t975(2), 4.303, 1e-3);
  EXPECT_NEAR(student_t975(1000), 1.96, 1e-3);
}

// The saving the adaptive rule is for: a steady 8 B..4 GB all-reduce on 2x H200 (iteration
// times of bench/RESULTS.md's fixed sweep) needs far fewer timed iterations than nccl-tests'
// 5 warm-up + 20 timed, most of the time being in the largest sizes.
TEST(Adaptive, SteadyLargeSizesStopAfterTwoBatchesOfTwenty) {
  StopRule r;
  Estimator e(r);
  double t = 3000;  // a steady 4 GiB all-reduce: 3 ms
  int k = batch_iterations(r, t);
  while (!e.done()) e.add_batch(t, k);
  EXPECT_EQ(e.batches(), 2);
  EXPECT_EQ(e.iterations(), 40);
}
