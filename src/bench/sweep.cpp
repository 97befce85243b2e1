#include "bench/sweep.hpp"

#include <chrono>
#include <string>

#include "bench/efficiency.hpp"
#include "bench/progress.hpp"
#include "core/error.hpp"

namespace fabscope::bench {

void check_job(const Options& o, int nranks) {
  const auto& d = describe(o.collective);
  if (d.has_root && o.root >= nranks)
    throw UsageError("bench: --root " + std::to_string(o.root) + " but the job has " + std::to_string(nranks) +
                     " ranks (0.." + std::to_string(nranks - 1) + ")");
  if (d.runs_on && !d.runs_on(nranks))
    throw UsageError("bench: " + std::string(d.name) + " needs a power-of-two number of ranks (recursive "
                     "doubling); this job has " + std::to_string(nranks));
}

Report run_sweep(const Options& o, const std::vector<std::uint64_t>& sizes, Report rep, bool prints,
                 const SweepSteps& steps) {
  const auto& d = describe(o.collective);
  const std::size_t ts = type_size(o.type);
  Progress progress(prints && o.progress, sizes.size() * static_cast<std::size_t>(o.cycles));
  auto t0 = std::chrono::steady_clock::now();
  for (int cycle = 0; cycle < o.cycles; ++cycle) {
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      BufferPlan plan = steps.plan(sizes[i]);
      SizeResult res;
      res.cycle = cycle;
      // nccl-tests' columns: size = the larger buffer, count = the count argument of the call.
      res.count = plan.param_count;
      res.bytes = static_cast<std::uint64_t>(plan.total) * ts;
      progress.update(cycle * sizes.size() + i, std::string(d.name) + " " + size_label(res.bytes));
      res.out_of_place = steps.measure(res, false);
      if (o.in_place) res.in_place = steps.measure(res, true);
      rep.results.push_back(res);
      if (prints && steps.row) {
        progress.clear();
        steps.row(rep, res);
      }
    }
  }
  progress.clear();
  if (steps.finish) steps.finish(rep);
  rep.summary.sweep_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  summarise(rep);
  judge(rep);
  return rep;
}

}  // namespace fabscope::bench
