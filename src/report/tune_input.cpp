// fabscope.tune (docs/formats.md, docs/tune.md) -> TuneDoc.
#include "core/fields.hpp"
#include "report/load.hpp"

namespace fabscope::report {

namespace {

bool boolean(const core::Fields& f, const std::string& key) {
  if (!f.has(key)) return false;
  const json& v = f.raw()[key];
  if (!v.is_boolean()) f.fail(key, "expected a boolean, got " + core::describe(v));
  return v.get<bool>();
}

std::string choice_label(const core::Fields& f, const std::string& key) {
  if (!f.has(key)) return "";
  return f.object(key).str("label");
}

}  // namespace

TuneDoc tune_from_json(const std::string& file, const json& doc) {
  core::Fields top(file, doc);
  TuneDoc t;
  t.simulated = boolean(top, "simulated");
  t.source = top.str_or("source", "");
  if (auto n = top.opt_int("nranks")) t.nranks = static_cast<int>(*n);
  if (auto n = top.opt_int("nnodes")) t.nnodes = static_cast<int>(*n);
  for (const auto& c : top.array("collectives")) {
    TuneCollective x;
    x.collective = c.str("collective");
    auto cand = c.strings("candidates");
    x.candidates = cand.empty() ? 0 : cand.size() - 1;
    for (const auto& s : c.array("sizes")) {
      TuneSize z;
      z.bytes = s.uint("bytes");
      z.default_busbw_gbytes_per_s = s.opt_num("default_busbw_gbytes_per_s");
      z.written_busbw_gbytes_per_s = s.opt_num("written_busbw_gbytes_per_s");
      z.written = choice_label(s, "written");
      z.verified = boolean(s, "verified");
      z.kept_tuned = boolean(s, "kept_tuned");
      z.speedup = s.opt_num("speedup");
      if (z.speedup && *z.speedup <= 0) s.fail("speedup", "expected a positive number");
      if (s.has("speedup_ci95")) {
        const json& ci = s.raw()["speedup_ci95"];
        if (!ci.is_array() || ci.size() != 2 || !ci[0].is_number() || !ci[1].is_number())
          s.fail("speedup_ci95", "expected [low, high], got " + core::describe(ci));
        z.speedup_ci95 = {{ci[0].get<double>(), ci[1].get<double>()}};
      }
      z.reason = s.str_or("reason", "");
      x.sizes.push_back(std::move(z));
    }
    t.collectives.push_back(std::move(x));
  }
  if (top.has("table"))
    for (const auto& r : top.array("table")) {
      TuneRow row;
      row.collective = r.str("collective");
      row.min_bytes = r.uint("min_bytes");
      row.max_bytes = r.uint("max_bytes");
      row.choice = choice_label(r, "choice");
      t.table.push_back(std::move(row));
    }
  if (top.has("advice"))
    for (const auto& a : top.array("advice")) t.advice.push_back(a.str_or("advice", ""));
  return t;
}

}  // namespace fabscope::report
