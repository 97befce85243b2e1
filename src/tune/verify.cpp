#include "tune/verify.hpp"

#include <cmath>
#include <cstdio>

#include "bench/adaptive.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"

namespace fabscope::tune {

namespace {
std::string pct(double x) { return core::format_double("%+.1f%%", (x - 1) * 100); }
}  // namespace

Verdict judge_pairs(const std::vector<double>& d, const std::vector<double>& t, const VerifyRule& rule) {
  if (d.size() != t.size() || d.size() < 2) throw Error("tune: verification needs at least 2 pairs");
  Verdict v;
  v.pairs = static_cast<int>(d.size());
  double sum = 0, sum_d = 0, sum_t = 0;
  std::vector<double> ratio;
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (!(d[i] > 0) || !(t[i] > 0)) throw Error("tune: a verification time is not positive");
    ratio.push_back(d[i] / t[i]);
    sum += ratio.back();
    sum_d += d[i];
    sum_t += t[i];
  }
  const double n = static_cast<double>(ratio.size());
  v.speedup = sum / n;
  v.default_us = sum_d / n;
  v.tuned_us = sum_t / n;
  double var = 0;
  for (double x : ratio) var += (x - v.speedup) * (x - v.speedup);
  var /= n - 1;
  const double half = bench::student_t975(v.pairs - 1) * std::sqrt(var / n);
  v.speedup_lo = v.speedup - half;
  v.speedup_hi = v.speedup + half;
  const std::string ci = "speedup " + pct(v.speedup) + " [" + pct(v.speedup_lo) + ", " +
                         pct(v.speedup_hi) + "] over " + std::to_string(v.pairs) + " pairs";
  if (v.speedup < 1 / (1 + rule.max_slowdown)) {
    v.reason = "slower than NCCL's default (" + ci + "): default kept";
  } else if (v.speedup_lo > 1 + rule.min_gain) {
    v.keep_tuned = true;
    v.reason = "faster beyond the noise (" + ci + ")";
  } else {
    v.reason = "not faster beyond the noise (" + ci + "): default kept";
  }
  return v;
}

Verdict verify(Measurer& m, bench::Collective c, std::uint64_t bytes, const Choice& tuned,
               const VerifyRule& rule) {
  std::vector<double> d, t;
  for (int i = 0; i < rule.pairs; ++i) {
    // ABBA order: default first on even pairs, tuned first on odd ones.
    Measurement a, b;
    if (i % 2 == 0) {
      a = m.measure(c, bytes, kNcclDefault, rule.budget_s);
      b = m.measure(c, bytes, tuned, rule.budget_s);
    } else {
      b = m.measure(c, bytes, tuned, rule.budget_s);
      a = m.measure(c, bytes, kNcclDefault, rule.budget_s);
    }
    if (!b.applied) {
      Verdict v;
      v.default_us = v.tuned_us = a.time_us;
      v.reason = "NCCL could not run " + label(tuned) + " during verification: default kept";
      return v;
    }
    d.push_back(a.time_us);
    t.push_back(b.time_us);
  }
  return judge_pairs(d, t, rule);
}

}  // namespace fabscope::tune
