#pragma once
// The verification pass: the tuned choice against NCCL's default, alternating in the same
// process (default, tuned, tuned, default, ... so a slow drift of clocks or temperature falls on
// both), pairs of measurements at one size. The tuned choice is kept only when it is faster
// beyond the noise: the lower end of the 95% confidence interval of the speedup (default time /
// tuned time, one ratio per pair, Student's t) is above 1 + min_gain. Otherwise NCCL's default
// stays, so nothing written is slower than the default by more than the noise; and a written
// choice whose mean is slower than max_slowdown is refused whatever its interval says.
#include <cstdint>
#include <string>
#include <vector>

#include "tune/measure.hpp"

namespace fabscope::tune {

struct VerifyRule {
  int pairs = 6;
  double budget_s = 0.02;     // timed work per measurement
  double min_gain = 0.0;      // the CI's lower end must clear 1 + min_gain
  double max_slowdown = 0.02; // never written when the mean speedup is below 1 / (1 + this)
};

struct Verdict {
  bool keep_tuned = false;
  double default_us = 0;     // mean over the pairs
  double tuned_us = 0;
  double speedup = 1;        // mean of default/tuned over the pairs
  double speedup_lo = 1;     // 95% CI of the speedup
  double speedup_hi = 1;
  int pairs = 0;
  std::string reason;
};

Verdict verify(Measurer& m, bench::Collective c, std::uint64_t bytes, const Choice& tuned,
               const VerifyRule& rule);

// The rule itself on the measured pairs (pure; verify() measures and calls it).
Verdict judge_pairs(const std::vector<double>& default_us, const std::vector<double>& tuned_us,
                    const VerifyRule& rule);

}  // namespace fabscope::tune
