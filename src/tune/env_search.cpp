#include "tune/env_search.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace fabscope::tune {

namespace {

double geomean_ratio(const std::vector<double>& base, const std::vector<double>& cand) {
  double s = 0;
  for (std::size_t i = 0; i < base.size(); ++i) s += std::log(base[i] / cand[i]);
  return std::exp(s / static_cast<double>(base.size()));
}

double geomean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += std::log(x);
  return std::exp(s / static_cast<double>(v.size()));
}

std::vector<double> checked(ProcessResult p, std::size_t n, const EnvAssignment& env) {
  if (p.time_us.size() != n)
    throw Error("tune: the process with " + env.label() + " returned " + std::to_string(p.time_us.size()) +
                " times for " + std::to_string(n) + " points");
  for (double t : p.time_us)
    if (!(t > 0)) throw Error("tune: the process with " + env.label() + " returned a time that is not positive");
  return std::move(p.time_us);
}

std::string pct(double x) { return core::format_double("%+.1f%%", (x - 1) * 100); }

void search_group(EnvMeasurer& m, std::size_t n, EnvGroupOutcome& g, const EnvSearchRule& rule) {
  std::vector<EnvAssignment> alive(g.group.candidates.begin() + 1, g.group.candidates.end());
  double budget = rule.first_budget_s;
  for (int rung = 0; rung < std::max(1, rule.max_rungs); ++rung, budget *= rule.eta) {
    std::vector<double> base = checked(m.run_process(g.base, budget), n, g.base);
    g.trials.push_back({g.base, rung, base, 1.0});
    std::vector<std::pair<double, EnvAssignment>> ranked;
    for (const auto& c : alive) {
      EnvAssignment env = merged(g.base, c);
      std::vector<double> t = checked(m.run_process(env, budget), n, env);
      const double score = geomean_ratio(base, t);
      g.trials.push_back({env, rung, t, score});
      ranked.emplace_back(score, c);
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    const bool last = ranked.size() <= 1 || rung + 1 == std::max(1, rule.max_rungs);
    if (last) {
      if (!ranked.empty() && ranked.front().first > 1) g.best = ranked.front().second;
      return;
    }
    const auto keep = static_cast<std::size_t>(std::ceil(static_cast<double>(ranked.size()) / rule.eta));
    alive.clear();
    for (std::size_t i = 0; i < keep; ++i) alive.push_back(ranked[i].second);
  }
}

json assignment_json(const EnvAssignment& a) {
  json j = json::array();
  for (const auto& [k, v] : a.vars) j.push_back({{"name", k}, {"value", v}});
  return j;
}

json verdict_json(const Verdict& v) {
  return {{"speedup", v.speedup}, {"speedup_ci95", {v.speedup_lo, v.speedup_hi}}, {"base_time_us", v.default_us},
          {"candidate_time_us", v.tuned_us}, {"pairs", v.pairs}, {"reason", v.reason}};
}

// ABBA pairs of processes: base first on even pairs, candidate first on odd ones.
void measure_pairs(std::size_t n, int pairs, const std::function<ProcessResult()>& base,
                   const std::function<ProcessResult()>& cand, const EnvAssignment& base_env,
                   const EnvAssignment& cand_env, std::vector<std::vector<double>>& b,
                   std::vector<std::vector<double>>& c) {
  for (int p = 0; p < pairs; ++p) {
    if (p % 2 == 0) {
      b.push_back(checked(base(), n, base_env));
      c.push_back(checked(cand(), n, cand_env));
    } else {
      c.push_back(checked(cand(), n, cand_env));
      b.push_back(checked(base(), n, base_env));
    }
  }
}

json combined_json(const CombinedCheck& c) {
  json per = json::array();
  for (const auto& v : c.per_point) per.push_back(verdict_json(v));
  return {{"env", assignment_json(c.env)}, {"verified", c.verified}, {"kept", c.kept},
          {"overall", c.verified ? verdict_json(c.overall) : json(nullptr)}, {"per_point", per}, {"reason", c.reason}};
}

}  // namespace

void judge_combined(CombinedCheck& c, const std::vector<std::vector<double>>& base_us,
                    const std::vector<std::vector<double>>& cand_us, const EnvSearchRule& rule) {
  EnvGroupOutcome g;  // the same statistics as a setting's verification
  g.best = c.env;
  judge_env(g, base_us, cand_us, rule);
  c.verified = true;
  c.overall = g.overall;
  c.per_point = g.per_point;
  std::size_t worst_i = 0;
  for (std::size_t i = 1; i < c.per_point.size(); ++i)
    if (c.per_point[i].speedup < c.per_point[worst_i].speedup) worst_i = i;
  const double worst = c.per_point.empty() ? 1 : c.per_point[worst_i].speedup;
  const std::string what = "the table with " + c.env.label() + " against NCCL's defaults: geometric-mean speedup " +
                           pct(c.overall.speedup) + " [" + pct(c.overall.speedup_lo) + ", " +
                           pct(c.overall.speedup_hi) + "] over " + std::to_string(c.overall.pairs) + " process pairs";
  c.kept = !(worst < 1 / (1 + rule.max_slowdown));
  c.reason = c.kept ? what + ", worst point " + pct(worst) + ": kept"
                    : what + "; point " + std::to_string(worst_i + 1) + " is " + pct(worst) +
                          " (slower than NCCL's defaults by more than " + pct(1 + rule.max_slowdown).substr(1) +
                          "): the values are dropped, the table alone stays";
}

void judge_env(EnvGroupOutcome& g, const std::vector<std::vector<double>>& base_us,
               const std::vector<std::vector<double>>& cand_us, const EnvSearchRule& rule) {
  // base_us[pair][point]
  if (base_us.size() != cand_us.size() || base_us.size() < 2) throw Error("tune: env verification needs at least 2 pairs");
  const std::size_t n = base_us.front().size();
  VerifyRule vr;
  vr.max_slowdown = rule.max_slowdown;
  vr.min_gain = rule.min_gain;
  std::vector<double> gb, gc;
  for (std::size_t p = 0; p < base_us.size(); ++p) {
    gb.push_back(geomean(base_us[p]));
    gc.push_back(geomean(cand_us[p]));
  }
  g.overall = judge_pairs(gb, gc, vr);
  g.per_point.clear();
  double worst = 1e300;
  std::size_t worst_i = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> b, c;
    for (std::size_t p = 0; p < base_us.size(); ++p) {
      b.push_back(base_us[p][i]);
      c.push_back(cand_us[p][i]);
    }
    g.per_point.push_back(judge_pairs(b, c, vr));
    if (g.per_point.back().speedup < worst) {
      worst = g.per_point.back().speedup;
      worst_i = i;
    }
  }
  g.verified = true;
  const std::string what = g.best.label() + ": geometric-mean speedup " + pct(g.overall.speedup) + " [" +
                           pct(g.overall.speedup_lo) + ", " + pct(g.overall.speedup_hi) + "] over " +
                           std::to_string(g.overall.pairs) + " process pairs";
  if (worst < 1 / (1 + rule.max_slowdown)) {
    g.kept = false;
    g.reason = what + "; point " + std::to_string(worst_i + 1) + " is " + pct(worst) +
               " (slower than the base by more than " + pct(1 + rule.max_slowdown).substr(1) + "): not kept";
  } else if (g.overall.keep_tuned) {
    g.kept = true;
    g.reason = what + "; faster beyond the noise, worst point " + pct(worst) + ": kept";
  } else {
    g.kept = false;
    g.reason = what + "; not faster beyond the noise: not kept";
  }
}

EnvSearchResult run_env_search(EnvMeasurer& m, const std::vector<EnvPoint>& points,
                               const std::vector<EnvGroup>& groups, const EnvSearchRule& rule,
                               const EnvProgress& progress) {
  if (points.empty()) throw UsageError("no sizes to tune");
  EnvSearchResult r;
  r.points = points;
  const std::size_t n = points.size();
  const std::int64_t before = m.processes();
  for (const auto& group : groups) {
    EnvGroupOutcome g;
    g.group = group;
    g.base = r.chosen;
    if (!group.skipped.empty() || group.candidates.size() < 2) {
      g.reason = group.skipped.empty() ? "no value to try" : "skipped: " + group.skipped;
      r.groups.push_back(std::move(g));
      continue;
    }
    if (group.candidates.front().vars.size() != 0)
      throw Error("tune: the values of " + group.name + " must start with NCCL's default");
    if (progress)
      progress(group.name + ": " + std::to_string(group.candidates.size() - 1) + " values, one process each" +
               (g.base.is_default() ? "" : " on top of " + g.base.label()));
    search_group(m, n, g, rule);
    if (g.best.is_default()) {
      g.reason = "NCCL's default was the fastest in the search";
      r.groups.push_back(std::move(g));
      continue;
    }
    const EnvAssignment cand = merged(g.base, g.best);
    if (progress)
      progress(group.name + ": verifying " + g.best.label() + " against the base, " + std::to_string(rule.pairs) +
               " process pairs");
    std::vector<std::vector<double>> b, c;
    measure_pairs(
        n, rule.pairs, [&] { return m.run_process(g.base, rule.verify_budget_s); },
        [&] { return m.run_process(cand, rule.verify_budget_s); }, g.base, cand, b, c);
    judge_env(g, b, c, rule);
    if (g.kept) r.chosen = cand;
    r.groups.push_back(std::move(g));
  }
  r.processes = m.processes() - before;
  return r;
}

EnvSearchResult run_env_search_on_table(EnvMeasurer& m, const std::vector<EnvPoint>& points,
                                        const std::vector<EnvGroup>& groups, const EnvSearchRule& rule,
                                        const std::string& table_path, const EnvProgress& progress) {
  const std::int64_t before = m.processes();
  m.load_table(table_path);
  EnvSearchResult r = run_env_search(m, points, groups, rule, progress);
  r.table = table_path;
  if (table_path.empty()) {
    m.load_table("");
    return r;
  }
  CombinedCheck c;
  c.env = r.chosen;
  if (r.chosen.is_default()) {
    c.reason = "nothing kept: the table alone is the result";
  } else {
    if (progress)
      progress("the table with " + r.chosen.label() + " against NCCL's defaults (no table, no variable), " +
               std::to_string(rule.pairs) + " process pairs");
    const std::size_t n = points.size();
    std::vector<std::vector<double>> b, t;
    const EnvAssignment none;
    measure_pairs(
        n, rule.pairs,
        [&] {
          m.load_table("");
          return m.run_process(none, rule.verify_budget_s);
        },
        [&] {
          m.load_table(table_path);
          return m.run_process(r.chosen, rule.verify_budget_s);
        },
        none, r.chosen, b, t);
    judge_combined(c, b, t, rule);
    if (!c.kept) r.chosen = {};
  }
  m.load_table("");
  r.combined = std::move(c);
  r.processes = m.processes() - before;
  return r;
}

json env_search_json(const EnvSearchResult& r) {
  json j;
  j["schema_version"] = EnvSearchResult::kSchemaVersion;
  j["net_path"] = r.net_path;
  j["launch"] = r.launch;
  j["processes"] = r.processes;
  j["points"] = json::array();
  for (const auto& p : r.points)
    j["points"].push_back({{"collective", std::string(bench::describe(p.collective).name)}, {"bytes", p.bytes}});
  j["table"] = r.table.empty() ? json(nullptr) : json(r.table);
  j["chosen"] = assignment_json(r.chosen);
  j["combined"] = r.combined ? combined_json(*r.combined) : json(nullptr);
  j["settings"] = json::array();
  for (const auto& g : r.groups) {
    json x;
    x["name"] = g.group.name;
    x["meaning"] = g.group.meaning;
    x["skipped"] = g.group.skipped.empty() ? json(nullptr) : json(g.group.skipped);
    x["candidates"] = json::array();
    for (const auto& c : g.group.candidates) x["candidates"].push_back(assignment_json(c));
    x["base"] = assignment_json(g.base);
    x["best_searched"] = assignment_json(g.best);
    x["verified"] = g.verified;
    x["kept"] = g.kept;
    x["reason"] = g.reason;
    x["overall"] = g.verified ? verdict_json(g.overall) : json(nullptr);
    x["per_point"] = json::array();
    for (const auto& v : g.per_point) x["per_point"].push_back(verdict_json(v));
    x["trials"] = json::array();
    for (const auto& t : g.trials)
      x["trials"].push_back({{"env", assignment_json(t.env)}, {"rung", t.rung}, {"time_us", t.time_us}, {"score", t.score}});
    j["settings"].push_back(std::move(x));
  }
  return j;
}

}  // namespace fabscope::tune
