#pragma once
// How many iterations to run per size. Fixed mode is nccl-tests' (-w warm-ups, then -n
// iterations timed as one batch). Adaptive mode (the default) times batches of about
// batch_time_s each and stops as soon as the 95% confidence interval of the mean is within
// rel_precision of it (at least min_batches batches), or when max_time_s of timed work is spent.
// Small sizes get hundreds of iterations in a few milliseconds; large, steady sizes stop after
// two batches of nccl-tests' 20. Every rank feeds the same (all-reduced)
// batch times, so every rank takes the same decision without talking.
#include <cstdint>
#include <vector>

namespace fabscope::bench {

struct StopRule {
  bool adaptive = true;
  int fixed_iters = 20;   // -n
  int fixed_warmup = 5;   // -w
  double rel_precision = 0.01;   // half-width of the 95% CI over the mean
  double max_time_s = 0.005;     // timed work per size and placement, then stop (after min_batches)
  double batch_time_s = 5e-4;    // aim of one batch
  double warmup_time_s = 1e-3;   // adaptive warm-up: about this long, 1 to 5 iterations
  // A batch is never shorter than nccl-tests' default batch (-n 20): the time of a batch
  // includes launching its first call and seeing its last one end, and nccl-tests' number
  // spreads that over 20 calls. With fewer, large sizes read about 1% slow (1 GiB on an H100).
  int min_batch_iters = 20;
  // ... unless 20 would take longer than this: then as many as fill it, at least 2. At 25 ms per
  // iteration (4 GiB over NVLink) it is still 20; a 1 GiB all-reduce over sockets (about 0.3 s)
  // gets 2, where the launch-and-wait cost of a batch (tens of microseconds) is far below 0.1%.
  double long_batch_s = 0.5;
  int min_batches = 2;
  int max_batches = 1000;
  int max_batch_iters = 4096;
};

// Iterations per batch for an estimated iteration time (adaptive), or fixed_iters.
int batch_iterations(const StopRule& rule, double est_iter_us);
// Warm-up iterations after the first (timed) one.
int warmup_iterations(const StopRule& rule, double first_iter_us);

// Two-sided 97.5% quantile of Student's t for df degrees of freedom (df >= 1).
double student_t975(int df);

class Estimator {
 public:
  explicit Estimator(const StopRule& rule) : rule_(rule) {}
  void add_batch(double mean_iter_us, int iters);
  bool done() const;
  double mean_us() const;
  // Half-width of the 95% confidence interval divided by the mean; < 0 when unknown (one batch).
  double rel_ci() const;
  int batches() const { return static_cast<int>(samples_.size()); }
  std::int64_t iterations() const { return iters_; }
  double timed_s() const { return timed_us_ * 1e-6; }

 private:
  StopRule rule_;
  std::vector<double> samples_;  // per-iteration mean of each batch, microseconds
  std::int64_t iters_ = 0;
  double timed_us_ = 0;
};

}  // namespace fabscope::bench
