// fabscope.tune (docs/formats.md) read back through core::Fields: every error names the file and
// the field. The keys of the first layout of version 1 are required (every file fabscope wrote
// has them); the ones added later read as "not done" when absent.
#include "tune/saved_result.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>

#include "core/error.hpp"

namespace fabscope::tune {

namespace {

using core::Fields;

int int_field(const Fields& f, const std::string& key, std::int64_t lo) {
  const std::int64_t v = f.integer(key);
  if (v < lo || v > std::numeric_limits<int>::max())
    f.fail(key, "expected an integer from " + std::to_string(lo) + ", got " + std::to_string(v));
  return static_cast<int>(v);
}

double positive(const Fields& f, const std::string& key) {
  const double v = f.num(key);
  if (v <= 0) f.fail(key, "expected a positive number");
  return v;
}

// `[low, high]`; nullopt when absent or null.
std::optional<std::pair<double, double>> interval(const Fields& f, const std::string& key) {
  if (!f.has(key)) return std::nullopt;
  const json& v = f.raw()[key];
  if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number())
    f.fail(key, "expected [low, high], got " + core::describe(v));
  return std::make_pair(v[0].get<double>(), v[1].get<double>());
}

std::pair<double, double> required_interval(const Fields& f, const std::string& key) {
  auto v = interval(f, key);
  if (!v) f.fail(key, f.raw().contains(key) ? "expected [low, high], got null" : "missing");
  return *v;
}

// A choice's label (what label() writes) as given at `key` of `f`; an error there otherwise.
Choice label_at(const Fields& f, const std::string& key, const std::string& text) {
  try {
    return choice_from_label(text);
  } catch (const Error& e) {
    f.fail(key, e.what());
  }
}

Choice label_field(const Fields& f, const std::string& key) { return label_at(f, key, f.str(key)); }

Choice choice_field(const Fields& f, const std::string& key) { return label_field(f.object(key), "label"); }

bench::Collective collective_field(const Fields& f, const std::string& key) {
  const std::string name = f.str(key);
  auto c = bench::parse_collective(name);
  if (!c) f.fail(key, "unknown collective '" + name + "'");
  return *c;
}

// An array of {"name": "NCCL_...", "value": "..."}.
EnvAssignment assignment_of(const std::vector<Fields>& entries) {
  EnvAssignment a;
  for (const auto& x : entries) {
    const std::string name = x.str("name");
    if (name.rfind("NCCL_", 0) != 0) x.fail("name", "'" + name + "' is not an NCCL_ variable");
    a.vars.emplace_back(name, x.str("value"));
  }
  return a;
}

EnvAssignment assignment_field(const Fields& f, const std::string& key) { return assignment_of(f.array(key)); }

// An environment verification: base = NCCL's defaults (or the values kept before), candidate =
// the values searched.
Verdict env_verdict(const Fields& v) {
  Verdict x;
  x.speedup = v.num("speedup");
  std::tie(x.speedup_lo, x.speedup_hi) = required_interval(v, "speedup_ci95");
  x.default_us = v.num("base_time_us");
  x.tuned_us = v.num("candidate_time_us");
  x.pairs = int_field(v, "pairs", 0);
  x.reason = v.str("reason");
  return x;
}

std::vector<Verdict> env_verdicts(const Fields& f, const std::string& key) {
  std::vector<Verdict> out;
  for (const auto& v : f.array(key)) out.push_back(env_verdict(v));
  return out;
}

// The verification of one size against NCCL's default: `pairs` > 0 when it ran.
void size_verdict(const Fields& x, Verdict& v) {
  v.default_us = x.num("default_time_us");
  v.pairs = int_field(x, "pairs", 0);
  v.reason = x.str("reason");
  if (v.pairs > 0) {
    v.speedup = positive(x, "speedup");
    std::tie(v.speedup_lo, v.speedup_hi) = required_interval(x, "speedup_ci95");
    v.tuned_us = x.num("tuned_time_us");
  } else {
    (void)interval(x, "speedup_ci95");  // its form is checked wherever it is given
  }
}

SizeOutcome size_from(const Fields& x) {
  SizeOutcome s;
  s.bytes = x.uint("bytes");
  size_verdict(x, s.verdict);
  // Not verified: the search kept NCCL's default, whose time stands for both (run_tune).
  if (s.verdict.pairs == 0) s.verdict.tuned_us = s.verdict.default_us;
  const bool verified = x.boolean("verified");
  if (verified != (s.verdict.pairs > 0))
    x.fail("verified", std::string(verified ? "true" : "false") + " with " + std::to_string(s.verdict.pairs) +
                           " pairs measured");
  s.verdict.keep_tuned = x.boolean("kept_tuned");
  s.default_busbw = x.num("default_busbw_gbytes_per_s");
  s.search.best = choice_field(x, "best_searched");
  s.written = choice_field(x, "written");
  s.written_busbw = x.num("written_busbw_gbytes_per_s");
  if (auto idle = x.optional_object("idle")) {
    Verdict v;
    size_verdict(*idle, v);
    s.idle = v;
  }
  s.search.rungs = int_field(x, "rungs", 0);
  for (const auto& t : x.array("trials")) {
    Trial tr;
    tr.choice = label_field(t, "choice");
    tr.rung = int_field(t, "rung", 0);
    tr.m.time_us = t.num("time_us");
    tr.m.rel_ci = t.num("rel_ci");
    tr.m.applied = t.boolean("applied");
    if (!tr.m.applied && std::find(s.search.unavailable.begin(), s.search.unavailable.end(), tr.choice) ==
                             s.search.unavailable.end())
      s.search.unavailable.push_back(tr.choice);
    s.search.trials.push_back(tr);
  }
  return s;
}

TableRow row_from(const Fields& r) {
  TableRow row;
  const std::string name = r.str("collective");
  auto c = collective_from_table_name(name);
  if (!c) r.fail("collective", "'" + name + "' is not a collective of the tuner table");
  row.collective = *c;
  row.min_bytes = r.uint("min_bytes");
  row.max_bytes = r.uint("max_bytes");
  if (row.max_bytes < row.min_bytes)
    r.fail("max_bytes", std::to_string(row.max_bytes) + " is below min_bytes " + std::to_string(row.min_bytes));
  row.choice = choice_field(r, "choice");
  row.nnodes = int_field(r, "nnodes", -1);
  row.nranks = int_field(r, "nranks", -1);
  return row;
}

BucketAdvice advice_from(const Fields& a) {
  BucketAdvice x;
  x.collective = collective_field(a, "collective");
  x.knee_bytes = a.uint("knee_bytes");
  x.knee_busbw = a.num("knee_busbw_gbytes_per_s");
  x.peak_busbw = a.num("peak_busbw_gbytes_per_s");
  x.peak_bytes = a.uint("peak_bytes");
  x.still_rising = a.boolean("still_rising");
  if (a.has("bucket_cap_mb")) x.bucket_cap_mb = int_field(a, "bucket_cap_mb", 0);
  x.advice = a.str("advice");
  return x;
}

}  // namespace

EnvSearchResult env_search_from_fields(const Fields& f) {
  EnvSearchResult r;
  const std::int64_t version = f.integer("schema_version");
  if (version != EnvSearchResult::kSchemaVersion)
    f.fail("schema_version", "this fabscope reads version " + std::to_string(EnvSearchResult::kSchemaVersion) +
                                 ", got " + std::to_string(version));
  r.net_path = f.str("net_path");
  r.launch = f.str("launch");
  r.processes = f.integer("processes");
  for (const auto& p : f.array("points")) r.points.push_back({collective_field(p, "collective"), p.uint("bytes")});
  r.chosen = assignment_field(f, "chosen");
  // table and combined were added to version 1: absent in files of the first layout.
  r.table = f.str_or("table", "");
  if (auto c = f.optional_object("combined")) {
    CombinedCheck x;
    x.env = assignment_field(*c, "env");
    x.verified = c->boolean("verified");
    x.kept = c->boolean("kept");
    if (x.verified) x.overall = env_verdict(c->object("overall"));
    x.per_point = env_verdicts(*c, "per_point");
    x.reason = c->str("reason");
    r.combined = std::move(x);
  }
  for (const auto& x : f.array("settings")) {
    EnvGroupOutcome g;
    g.group.name = x.str("name");
    g.group.meaning = x.str("meaning");
    if (!x.raw().contains("skipped")) x.fail("skipped", "missing");
    g.group.skipped = x.str_or("skipped", "");
    for (const auto& c : x.array("candidates")) g.group.candidates.push_back(assignment_of(c.elements()));
    g.base = assignment_field(x, "base");
    g.best = assignment_field(x, "best_searched");
    g.verified = x.boolean("verified");
    g.kept = x.boolean("kept");
    g.reason = x.str("reason");
    if (g.verified) g.overall = env_verdict(x.object("overall"));
    g.per_point = env_verdicts(x, "per_point");
    for (const auto& t : x.array("trials"))
      g.trials.push_back({assignment_field(t, "env"), int_field(t, "rung", 0), t.numbers("time_us"), t.num("score")});
    r.groups.push_back(std::move(g));
  }
  return r;
}

SavedResult saved_result_from_json(const std::string& file, const json& doc) {
  const Fields top(file, doc);
  if (top.str_or("schema", "") != "fabscope.tune")
    top.fail("schema", "not fabscope.tune (a `fabscope tune --json` result)");
  const std::int64_t version = top.integer("schema_version");
  if (version != TuneResult::kSchemaVersion)
    top.fail("schema_version", "this fabscope reads version " + std::to_string(TuneResult::kSchemaVersion) +
                                   ", got " + std::to_string(version));
  SavedResult out;
  TuneResult& r = out.run;
  r.simulated = top.boolean("simulated");
  r.source = top.str("source");
  r.nranks = int_field(top, "nranks", 0);
  r.nnodes = int_field(top, "nnodes", 0);
  r.measurements = top.integer("measurements");
  if (auto load = top.optional_object("compute_load")) {
    r.compute_load_pct = load->num("sm_percent");
    r.compute_load_busy_share = load->opt_num("busy_share").value_or(-1);
  }
  if (auto env = top.optional_object("env_search")) r.env = env_search_from_fields(*env);
  for (const auto& c : top.array("collectives")) {
    CollectiveOutcome co;
    co.collective = collective_field(c, "collective");
    if (!c.has("candidates")) c.fail("candidates", "missing");
    const auto labels = c.strings("candidates");
    for (std::size_t i = 0; i < labels.size(); ++i)
      co.candidates.push_back(label_at(c, "candidates[" + std::to_string(i) + "]", labels[i]));
    for (const auto& x : c.array("sizes")) co.sizes.push_back(size_from(x));
    r.collectives.push_back(std::move(co));
  }
  for (const auto& row : top.array("table")) out.table.push_back(row_from(row));
  for (const auto& a : top.array("advice")) out.advice.push_back(advice_from(a));
  return out;
}

}  // namespace fabscope::tune
