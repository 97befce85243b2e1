#include "tune/halving.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace fabscope::tune {

double Measurer::busbw_gbytes_per_s(bench::Collective c, std::uint64_t bytes, double time_us) const {
  if (time_us <= 0) return 0;
  return bench::busbw_gbytes_per_s(c, static_cast<double>(bytes) / (time_us * 1e3), nranks());
}

HalvingResult successive_halving(Measurer& m, bench::Collective c, std::uint64_t bytes,
                                 const std::vector<Choice>& candidates, const HalvingRule& rule) {
  if (candidates.empty() || !candidates.front().is_default())
    throw Error("tune: the candidate list must start with NCCL's default");
  HalvingResult r;
  std::vector<Choice> alive(candidates.begin() + 1, candidates.end());
  double budget = rule.first_budget_s;
  for (int rung = 0; rung < std::max(1, rule.max_rungs); ++rung, budget *= rule.eta) {
    r.rungs = rung + 1;
    r.default_m = m.measure(c, bytes, kNcclDefault, budget);
    r.trials.push_back({kNcclDefault, rung, r.default_m});
    std::vector<std::pair<double, Choice>> ranked;
    for (const Choice& ch : alive) {
      Measurement x = m.measure(c, bytes, ch, budget);
      r.trials.push_back({ch, rung, x});
      if (!x.applied) {
        r.unavailable.push_back(ch);
        continue;
      }
      ranked.emplace_back(x.time_us, ch);
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    const bool last = ranked.size() <= 1 || rung + 1 == std::max(1, rule.max_rungs);
    std::size_t keep = last ? ranked.size()
                            : static_cast<std::size_t>(std::ceil(ranked.size() / rule.eta));
    alive.clear();
    for (std::size_t i = 0; i < keep; ++i) alive.push_back(ranked[i].second);
    if (last) {
      r.best = kNcclDefault;
      r.best_m = r.default_m;
      if (!ranked.empty() && ranked.front().first < r.default_m.time_us) {
        r.best = ranked.front().second;
        for (auto it = r.trials.rbegin(); it != r.trials.rend(); ++it)
          if (it->choice == r.best) { r.best_m = it->m; break; }
      }
      break;
    }
  }
  return r;
}

}  // namespace fabscope::tune
