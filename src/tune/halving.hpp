#pragma once
// Successive halving (Jamieson & Talwalkar 2016; the rung rule of Hyperband): measure every
// candidate briefly, keep the best 1/eta, measure those eta times longer, and so on until one is
// left or the rungs run out. Short measurements are noisy but cheap; the noise only has to be
// smaller than the gaps between far-apart candidates, and the close ones get the long
// measurements. NCCL's default is measured at every rung (never eliminated) so the verification
// pass starts from a well-measured baseline.
#include <cstdint>
#include <vector>

#include "tune/measure.hpp"

namespace fabscope::tune {

struct HalvingRule {
  double eta = 3;               // keep ceil(n / eta) per rung
  double first_budget_s = 2e-3; // timed work per candidate in rung 0
  int max_rungs = 4;
};

struct Trial {
  Choice choice;
  int rung = 0;            // the rung this measurement belongs to
  Measurement m;
};

struct HalvingResult {
  Choice best;                  // fastest at the last rung (may be NCCL's default)
  Measurement best_m;
  Measurement default_m;        // NCCL's default at the last rung
  std::vector<Trial> trials;    // every measurement, in order
  std::vector<Choice> unavailable;  // choices NCCL could not run at this size
  int rungs = 0;
};

// candidates[0] must be NCCL's default. Throws fabscope::Error when it is not.
HalvingResult successive_halving(Measurer& m, bench::Collective c, std::uint64_t bytes,
                                 const std::vector<Choice>& candidates, const HalvingRule& rule);

}  // namespace fabscope::tune
