#pragma once
// The host side of one sweep: which sizes and placements run in which order, the size and
// count columns, the streamed rows, the summary and verdict. The GPU side supplies two steps
// (set the ranks' buffer plans for a size; time one placement), so the order and the report's
// assembly are tested without a GPU.
#include <cstdint>
#include <functional>
#include <vector>

#include "bench/collectives.hpp"
#include "bench/options.hpp"
#include "bench/results.hpp"

namespace fabscope::bench {

// Throws UsageError when the job cannot run the settings: a root outside the ranks, or a
// collective whose rank count it does not run on (hypercube: powers of two).
void check_job(const Options& o, int nranks);

struct SweepSteps {
  // Plans every local rank's buffers for a size in bytes; returns the first local rank's plan
  // (its total and param_count are the size and count columns, the same on every rank).
  std::function<BufferPlan(std::uint64_t bytes)> plan;
  // Times one placement of the planned size (out-of-place when in_place is false).
  std::function<Timing(const SizeResult& res, bool in_place)> measure;
  // Called after each size on the printing rank (streamed output); may be empty.
  std::function<void(const Report&, const SizeResult&)> row;
  // Called once after the last size, before the sweep time is taken (stops what ran beside the
  // sweep, such as a compute load, and records it); may be empty.
  std::function<void(Report&)> finish;
};

// Runs o.cycles passes over sizes (ascending), out-of-place then in-place (unless o.in_place is
// false) for each, appending to rep.results; then sweep time, summary and verdict. A progress
// line is drawn where `prints` and o.progress say so and stderr is a terminal.
Report run_sweep(const Options& o, const std::vector<std::uint64_t>& sizes, Report rep, bool prints,
                 const SweepSteps& steps);

}  // namespace fabscope::bench
