#include "bench/adaptive.hpp"

#include <algorithm>
#include <cmath>

namespace fabscope::bench {

int batch_iterations(const StopRule& rule, double est_iter_us) {
  if (!rule.adaptive) return std::max(1, rule.fixed_iters);
  double lo = std::max(1, std::min(rule.min_batch_iters, rule.max_batch_iters));
  if (!(est_iter_us > 0)) return static_cast<int>(lo);
  if (rule.long_batch_s > 0 && lo > 2)
    lo = std::min(lo, std::max(2.0, std::ceil(rule.long_batch_s * 1e6 / est_iter_us)));
  double n = std::ceil(rule.batch_time_s * 1e6 / est_iter_us);
  return static_cast<int>(std::clamp(n, lo, static_cast<double>(rule.max_batch_iters)));
}

int warmup_iterations(const StopRule& rule, double first_iter_us) {
  if (!rule.adaptive) return std::max(0, rule.fixed_warmup - 1);  // the first one counts
  if (!(first_iter_us > 0)) return 1;
  double n = std::ceil(rule.warmup_time_s * 1e6 / first_iter_us);
  return static_cast<int>(std::clamp(n, 1.0, 5.0));
}

double student_t975(int df) {
  static const double t[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                             2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                             2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1) return INFINITY;
  if (df <= 30) return t[df - 1];
  if (df <= 60) return 2.000;
  if (df <= 120) return 1.980;
  return 1.960;
}

void Estimator::add_batch(double mean_iter_us, int iters) {
  samples_.push_back(mean_iter_us);
  iters_ += iters;
  timed_us_ += mean_iter_us * iters;
}

double Estimator::mean_us() const {
  if (samples_.empty()) return 0;
  double s = 0;
  for (double v : samples_) s += v;
  return s / static_cast<double>(samples_.size());
}

double Estimator::rel_ci() const {
  std::size_t n = samples_.size();
  if (n < 2) return -1;
  double m = mean_us();
  if (!(m > 0)) return -1;
  double ss = 0;
  for (double v : samples_) ss += (v - m) * (v - m);
  double sd = std::sqrt(ss / static_cast<double>(n - 1));
  return student_t975(static_cast<int>(n - 1)) * sd / std::sqrt(static_cast<double>(n)) / m;
}

bool Estimator::done() const {
  if (!rule_.adaptive) return !samples_.empty();
  int n = batches();
  if (n >= rule_.max_batches) return true;
  if (n < rule_.min_batches) return false;
  double ci = rel_ci();
  if (ci >= 0 && ci <= rule_.rel_precision) return true;
  return timed_s() >= rule_.max_time_s;
}

}  // namespace fabscope::bench
