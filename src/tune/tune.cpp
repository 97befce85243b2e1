#include "tune/tune.hpp"

#include "core/error.hpp"

namespace fabscope::tune {

TuneResult run_tune(Measurer& m, const TuneOptions& o, const Progress& progress) {
  if (o.sizes.empty()) throw UsageError("no sizes to tune");
  TuneResult r;
  m.set_compute_load(o.compute_load_pct);
  r.compute_load_pct = o.compute_load_pct;
  r.nranks = m.nranks();
  r.nnodes = m.nnodes();
  for (bench::Collective c : o.collectives) {
    CollectiveOutcome co;
    co.collective = c;
    co.candidates = candidates(c, o.space, r.nnodes, r.nranks);
    for (std::uint64_t bytes : o.sizes) {
      SizeOutcome s;
      s.bytes = bytes;
      s.search = successive_halving(m, c, bytes, co.candidates, o.halving);
      r.measurements += static_cast<std::int64_t>(s.search.trials.size());
      if (!s.search.best.is_default()) {
        s.verdict = verify(m, c, bytes, s.search.best, o.verify);
        r.measurements += 2 * o.verify.pairs;
        if (s.verdict.keep_tuned) s.written = s.search.best;
        s.default_busbw = m.busbw_gbytes_per_s(c, bytes, s.verdict.default_us);
        s.written_busbw = s.verdict.keep_tuned ? m.busbw_gbytes_per_s(c, bytes, s.verdict.tuned_us)
                                               : s.default_busbw;
      } else {
        s.verdict.reason = "NCCL's default was the fastest in the search";
        s.verdict.default_us = s.verdict.tuned_us = s.search.default_m.time_us;
        s.default_busbw = s.written_busbw = m.busbw_gbytes_per_s(c, bytes, s.search.default_m.time_us);
      }
      if (o.compute_load_pct > 0 && !s.written.is_default()) {
        // The same pairs without the load: does the choice made for the loaded GPU hold idle?
        m.set_compute_load(0);
        s.idle = verify(m, c, bytes, s.written, o.verify);
        m.set_compute_load(o.compute_load_pct);
        r.measurements += 2 * o.verify.pairs;
      }
      if (progress) progress(c, s);
      co.sizes.push_back(std::move(s));
    }
    r.collectives.push_back(std::move(co));
  }
  return r;
}

}  // namespace fabscope::tune
