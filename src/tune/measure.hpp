#pragma once
// The one thing the search needs from the machine: the time of one call of a collective at a
// size with a choice forced, measured with about a given budget of timed work (the bench's
// adaptive rule: stop when the 95% CI is within the precision, or when the budget is spent).
// The GPU implementation forces the choice through the tuner plugin in one communicator
// (tune/gpu_measurer.cpp); tests use a simulated cost model (tune/sim.hpp).
#include <cstdint>
#include <string>

#include "bench/collectives.hpp"
#include "tune/space.hpp"

namespace fabscope::tune {

struct Measurement {
  double time_us = 0;   // mean time of one call (every rank sees the same value)
  double rel_ci = -1;   // half-width of the 95% CI over the mean; < 0 unknown
  std::int64_t iterations = 0;
  bool applied = true;  // false: NCCL could not run this choice here (it ran its own instead)
};

class Measurer {
 public:
  virtual ~Measurer() = default;
  virtual Measurement measure(bench::Collective c, std::uint64_t bytes, const Choice& choice,
                              double budget_s) = 0;
  virtual int nranks() const = 0;
  virtual int nnodes() const = 0;
  // The compute load of the following measurements (% of the SMs; 0: idle). The measurer must
  // have been built able to apply one (GpuMeasurer: any; SimMeasurer: the model's factor).
  virtual void set_compute_load(double pct) = 0;
  // Bus bandwidth (GB/s) of a size and a time, with the collective's factor (docs/bench.md).
  double busbw_gbytes_per_s(bench::Collective c, std::uint64_t bytes, double time_us) const;
};

}  // namespace fabscope::tune
