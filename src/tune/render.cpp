#include "tune/render.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "bench/sizes.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"

namespace fabscope::tune {

namespace {

std::string gain_text(const SizeOutcome& s) {
  if (s.search.best.is_default()) return "-";
  const Verdict& v = s.verdict;
  if (v.pairs == 0) return "not run";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%+.1f%% [%+.1f,%+.1f]", (v.speedup - 1) * 100, (v.speedup_lo - 1) * 100,
                (v.speedup_hi - 1) * 100);
  return buf;
}

json choice_json(const Choice& c) {
  return json{{"algorithm", c.algo < 0 ? json(nullptr) : json(algo_name(c.algo))},
              {"protocol", c.proto < 0 ? json(nullptr) : json(proto_name(c.proto))},
              {"channels", c.channels < 0 ? json(nullptr) : json(c.channels)},
              {"label", label(c)}};
}

std::string load_text(const TuneResult& r) {
  std::string t = core::format_double("%.0f", r.compute_load_pct) + "% of the SMs of every GPU run a 1024-thread FMA block, "
                  "relaunched back to back on a stream of its own (docs/tune.md)";
  if (r.compute_load_busy_share >= 0)
    t += "; the load ran " + core::format_double("%.0f", r.compute_load_busy_share * 100) + "% of the measured time";
  return t;
}

void wrap(std::ostringstream& o, const std::string& text, std::size_t width, const std::string& indent);

void render_env(std::ostringstream& o, const EnvSearchResult& e, std::size_t width) {
  o << "#\n";
  wrap(o, "# environment-only settings: one fresh process per measurement (" + std::to_string(e.processes) +
              " processes, " + e.launch + "), network path " + e.net_path + ", " + std::to_string(e.points.size()) +
              " sizes x collectives per process",
       width, "#   ");
  if (!e.table.empty())
    wrap(o, "# every process loaded the table searched first (" + e.table +
                "): each value is judged on top of it",
         width, "#   ");
  for (const auto& g : e.groups) {
    std::string head = "#  " + g.group.name + ": ";
    if (!g.group.skipped.empty()) head += "skipped: " + g.group.skipped;
    else if (g.kept) head += "set " + g.best.label() + " (" + g.reason + ")";
    else head += "NCCL's default kept (" + g.reason + ")";
    wrap(o, head, width, "#     ");
  }
  if (e.combined && e.combined->verified) wrap(o, "# both together: " + e.combined->reason, width, "#   ");
  wrap(o, "# chosen: " + (e.chosen.is_default() ? std::string("nothing (NCCL's defaults)") : e.chosen.label()),
       width, "#   ");
}

void wrap(std::ostringstream& o, const std::string& text, std::size_t width, const std::string& indent) {
  std::istringstream words(text);
  std::string w, line;
  while (words >> w) {
    if (!line.empty() && line.size() + 1 + w.size() > width) {
      o << line << "\n";
      line = indent;
    }
    line += (line.empty() || line == indent ? "" : " ") + w;
  }
  if (!line.empty() && line != indent) o << line << "\n";
}
}  // namespace

namespace {
// The job runs with the kept environment values, which can move the knee a long way (one socket
// thread still rises at 1 GiB where two reach their peak at 64 MiB): the curve measured with them,
// from the check of table and values together, or else the verification of the last value kept
// (its candidate carried every value kept before it). Empty when nothing was kept.
std::vector<Verdict> env_times(const TuneResult& r) {
  if (!r.env || r.env->chosen.is_default()) return {};
  const auto& e = *r.env;
  if (e.combined && e.combined->verified && e.combined->kept) return e.combined->per_point;
  for (auto g = e.groups.rbegin(); g != e.groups.rend(); ++g)
    if (g->kept && g->verified) return g->per_point;
  return {};
}
}  // namespace

std::vector<BucketAdvice> advise(const TuneResult& r) {
  std::vector<BucketAdvice> out;
  const std::vector<Verdict> with_env = env_times(r);
  const bool use_env = !with_env.empty() && with_env.size() == r.env->points.size();
  for (const auto& co : r.collectives) {
    if (co.collective != bench::Collective::AllReduce && co.collective != bench::Collective::AllGather &&
        co.collective != bench::Collective::ReduceScatter)
      continue;
    std::vector<CurvePoint> curve;
    if (use_env) {
      for (std::size_t i = 0; i < with_env.size(); ++i) {
        const auto& p = r.env->points[i];
        if (p.collective != co.collective || !(with_env[i].tuned_us > 0)) continue;
        curve.push_back({p.bytes, bench::busbw_gbytes_per_s(co.collective, static_cast<double>(p.bytes) /
                                                                               (with_env[i].tuned_us * 1e3),
                                                            r.nranks)});
      }
    }
    const bool env_curve = !curve.empty();
    if (!env_curve)
      for (const auto& s : co.sizes) curve.push_back({s.bytes, s.written_busbw});
    if (auto a = bucket_advice(co.collective, curve)) {
      if (env_curve) a->advice += " (measured with " + r.env->chosen.label() + ")";
      out.push_back(*a);
    }
  }
  return out;
}

std::string render_report(const TuneResult& r, const std::vector<TableRow>& rows,
                          const std::vector<BucketAdvice>& advice, std::size_t width) {
  std::ostringstream o;
  wrap(o, "# fabscope tune: " + r.source + (r.simulated ? " (SIMULATED: no GPU was measured)" : ""),
       width, "#   ");
  if (r.compute_load_pct > 0)
    wrap(o, "# measured under a compute load: " + load_text(r), width, "#   ");
  for (const auto& co : r.collectives) {
    o << "#\n# " << bench::describe(co.collective).name << ": " << co.candidates.size() - 1
      << " candidates besides NCCL's default per size\n";
    char head[160];
    std::snprintf(head, sizeof head, "%12s %10s %8s  %-22s %10s %8s  %s\n", "size", "default", "busbw",
                  "written", "tuned", "busbw", "speedup [95% CI]");
    o << head;
    std::snprintf(head, sizeof head, "%12s %10s %8s  %-22s %10s %8s\n", "(B)", "(us)", "(GB/s)", "", "(us)",
                  "(GB/s)");
    o << head;
    for (const auto& s : co.sizes) {
      char line[200];
      const double tuned_us = s.written.is_default() ? s.verdict.default_us : s.verdict.tuned_us;
      std::snprintf(line, sizeof line, "%12llu %10.2f %8.2f  %-22s %10.2f %8.2f  %s\n",
                    static_cast<unsigned long long>(s.bytes), s.verdict.default_us, s.default_busbw,
                    label(s.written).c_str(), tuned_us, s.written_busbw, gain_text(s).c_str());
      o << line;
    }
    for (const auto& s : co.sizes) {
      if (s.search.best.is_default() && s.search.unavailable.empty()) continue;
      std::string why = bench::size_label(s.bytes) + ": best searched " + label(s.search.best) + "; " +
                        s.verdict.reason;
      if (!s.search.unavailable.empty())
        why += "; " + std::to_string(s.search.unavailable.size()) + " choices NCCL could not run here";
      wrap(o, "#  " + why, width, "#     ");
    }
    for (const auto& s : co.sizes) {
      if (!s.idle) continue;
      const Verdict& v = *s.idle;
      std::string line = bench::size_label(s.bytes) + " idle (no load): " + label(s.written) + " against NCCL's default";
      if (v.pairs == 0) line += ": " + v.reason;
      else
        line += ": speedup " + core::format_double("%+.1f%%", (v.speedup - 1) * 100) + " [" + core::format_double("%+.1f", (v.speedup_lo - 1) * 100) +
                "," + core::format_double("%+.1f", (v.speedup_hi - 1) * 100) + "]" +
                (v.speedup < 1 / 1.02 ? " (slower idle: use this table only for the loaded case)" : "");
      wrap(o, "#  " + line, width, "#     ");
    }
  }
  if (r.env) render_env(o, *r.env, width);  // searched after the table, on top of it
  o << "#\n";
  wrap(o, "# table: " + std::to_string(rows.size()) + " rows; sizes without a row keep NCCL's choice; " +
              std::to_string(r.measurements) + " measurements",
       width, "#   ");
  for (const auto& a : advice) wrap(o, "# " + a.advice, width, "#   ");
  return o.str();
}

json report_json(const TuneResult& r, const std::vector<TableRow>& rows, const std::vector<BucketAdvice>& advice) {
  json j;
  j["schema"] = "fabscope.tune";
  j["schema_version"] = TuneResult::kSchemaVersion;
  j["simulated"] = r.simulated;
  j["source"] = r.source;
  j["nranks"] = r.nranks;
  j["nnodes"] = r.nnodes;
  j["measurements"] = r.measurements;
  j["compute_load"] = r.compute_load_pct > 0
                          ? json{{"sm_percent", r.compute_load_pct},
                                 {"busy_share", r.compute_load_busy_share >= 0 ? json(r.compute_load_busy_share) : json(nullptr)}}
                          : json(nullptr);
  j["env_search"] = r.env ? env_search_json(*r.env) : json(nullptr);
  j["collectives"] = json::array();
  for (const auto& co : r.collectives) {
    json c;
    c["collective"] = std::string(bench::describe(co.collective).name);
    c["candidates"] = json::array();
    for (const auto& ch : co.candidates) c["candidates"].push_back(label(ch));
    c["sizes"] = json::array();
    for (const auto& s : co.sizes) {
      json x;
      x["bytes"] = s.bytes;
      x["default_time_us"] = s.verdict.default_us;
      x["default_busbw_gbytes_per_s"] = s.default_busbw;
      x["best_searched"] = choice_json(s.search.best);
      x["written"] = choice_json(s.written);
      x["written_busbw_gbytes_per_s"] = s.written_busbw;
      x["verified"] = s.verdict.pairs > 0;
      x["kept_tuned"] = s.verdict.keep_tuned;
      x["speedup"] = s.verdict.pairs > 0 ? json(s.verdict.speedup) : json(nullptr);
      x["speedup_ci95"] = s.verdict.pairs > 0 ? json::array({s.verdict.speedup_lo, s.verdict.speedup_hi}) : json(nullptr);
      x["tuned_time_us"] = s.verdict.pairs > 0 ? json(s.verdict.tuned_us) : json(nullptr);
      x["pairs"] = s.verdict.pairs;
      x["reason"] = s.verdict.reason;
      x["idle"] = s.idle ? json{{"speedup", s.idle->pairs > 0 ? json(s.idle->speedup) : json(nullptr)},
                                 {"speedup_ci95", s.idle->pairs > 0 ? json::array({s.idle->speedup_lo, s.idle->speedup_hi}) : json(nullptr)},
                                 {"default_time_us", s.idle->default_us},
                                 {"tuned_time_us", s.idle->pairs > 0 ? json(s.idle->tuned_us) : json(nullptr)},
                                 {"pairs", s.idle->pairs}, {"reason", s.idle->reason}}
                           : json(nullptr);
      x["rungs"] = s.search.rungs;
      x["trials"] = json::array();
      for (const auto& t : s.search.trials)
        x["trials"].push_back({{"choice", label(t.choice)}, {"rung", t.rung}, {"time_us", t.m.time_us},
                               {"rel_ci", t.m.rel_ci}, {"applied", t.m.applied}});
      c["sizes"].push_back(std::move(x));
    }
    j["collectives"].push_back(std::move(c));
  }
  j["table"] = json::array();
  for (const auto& row : rows)
    j["table"].push_back({{"collective", table_name(row.collective)}, {"min_bytes", row.min_bytes},
                          {"max_bytes", row.max_bytes}, {"choice", choice_json(row.choice)},
                          {"nnodes", row.nnodes}, {"nranks", row.nranks}});
  j["advice"] = json::array();
  for (const auto& a : advice)
    j["advice"].push_back({{"collective", std::string(bench::describe(a.collective).name)},
                           {"knee_bytes", a.knee_bytes}, {"knee_busbw_gbytes_per_s", a.knee_busbw},
                           {"peak_busbw_gbytes_per_s", a.peak_busbw}, {"peak_bytes", a.peak_bytes},
                           {"still_rising", a.still_rising},
                           {"bucket_cap_mb", a.collective == bench::Collective::AllReduce ? json(a.bucket_cap_mb) : json(nullptr)},
                           {"advice", a.advice}});
  return j;
}

std::string optimize_config_csv(const TuneResult& r) {
  std::ostringstream o;
  o << "collective,size_bytes,algorithm,protocol,channels,nodes,ranks,pipeOps,regBuff,bandwidth_gbps,latency_us\n";
  for (const auto& co : r.collectives) {
    for (const auto& s : co.sizes)
      for (const auto& t : s.search.trials) {
        if (t.choice.algo < 0 || !t.m.applied || t.m.time_us <= 0) continue;
        const double algbw = static_cast<double>(s.bytes) / (t.m.time_us * 1e3);
        const double busbw = bench::busbw_gbytes_per_s(co.collective, algbw, r.nranks);
        o << table_name(co.collective) << ',' << s.bytes << ',' << algo_name(t.choice.algo) << ','
          << proto_name(t.choice.proto) << ',' << t.choice.channels << ',' << r.nnodes << ',' << r.nranks
          << ",-1,-1," << core::format_double("%.3f", busbw) << ',' << core::format_double("%.3f", t.m.time_us) << "\n";
      }
  }
  return o.str();
}

ncclenv::EnvPlan tuned_env(const TuneResult& r, const std::vector<TableRow>& rows,
                           const std::string& plugin_path, const std::string& table_path) {
  ncclenv::EnvPlan p;
  p.notes.push_back("tuned for " + std::to_string(r.nranks) + " ranks on " + std::to_string(r.nnodes) +
                    " node(s): rows match only communicators of that shape");
  if (rows.empty()) {
    p.warnings.push_back("no size was faster than NCCL's default beyond the noise: the table is "
                         "empty and loading it changes nothing");
  }
  p.vars.push_back({"NCCL_TUNER_PLUGIN", plugin_path,
                    "fabscope's tuner plugin (NCCL 2.19-2.28) applies the table per collective call; "
                    "NVIDIA's example plugin reads the same table",
                    "the table has " + std::to_string(rows.size()) + " rows"});
  p.vars.push_back({"NCCL_TUNER_CONFIG_FILE", table_path,
                    "the table written by fabscope tune: verified faster than NCCL's default at each "
                    "measured size it covers",
                    r.source});
  if (r.env) {
    const bool dropped = r.env->combined && !r.env->combined->kept;
    const std::string base_of = r.env->table.empty() ? "" : "the table with ";
    for (const auto& g : r.env->groups) {
      if (g.kept && dropped) {
        p.notes.push_back(g.group.name + ": " + g.best.label() + " was faster on top of the table, but " +
                          r.env->combined->reason);
        continue;
      }
      if (!g.kept) {
        p.notes.push_back(g.group.name + ": NCCL's default kept (" +
                          (g.group.skipped.empty() ? g.reason : "skipped: " + g.group.skipped) + ")");
        continue;
      }
      for (const auto& [k, v] : g.best.vars)
        p.vars.push_back({k, v, g.group.meaning + "; measured in fresh processes against " + base_of +
                                    (g.base.is_default() ? std::string("NCCL's defaults") : g.base.label()),
                          g.reason + (r.env->combined && r.env->combined->verified
                                          ? "; " + r.env->combined->reason : std::string())});
    }
  }
  if (r.compute_load_pct > 0)
    p.notes.push_back("measured under a compute load: " + load_text(r));
  if (r.simulated) p.warnings.push_back("SIMULATED run: the table comes from a model, not this machine");
  return p;
}

}  // namespace fabscope::tune
