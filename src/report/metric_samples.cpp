#include "report/metric_samples.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "report/exposition.hpp"
#include "core/fields.hpp"

namespace fabscope::report {

const std::string* MetricSample::label(std::string_view key) const {
  for (const auto& [k, v] : labels)
    if (k == key) return &v;
  return nullptr;
}

void sample_fail(const MetricSample& s, const std::string& what) { throw Error(s.where + ": " + s.name + ": " + what); }

const std::string& need_label(const MetricSample& s, std::string_view key) {
  const std::string* v = s.label(key);
  if (!v) sample_fail(s, "label '" + std::string(key) + "' is missing");
  if (v->empty()) sample_fail(s, "label '" + std::string(key) + "' is empty");
  if (v->size() > 256) sample_fail(s, "label '" + std::string(key) + "' is longer than 256 characters");
  return *v;
}

double count_value(const MetricSample& s) {
  if (!std::isfinite(s.value) || s.value < 0) {
    sample_fail(s, "value " + core::format_double("%g", s.value) + " is not a count (a finite number >= 0)");
  }
  return s.value;
}

std::vector<MetricSample> samples_from_exposition(const std::string& file, std::string_view text,
                                                  const std::function<bool(std::string_view)>& keep,
                                                  std::size_t max_samples) {
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i == text.size()) throw Error(file + ": empty file (no metrics)");
  ExpoLimits lim;
  lim.max_kept = max_samples;
  auto samples = parse_exposition(file, text, keep, lim);
  std::vector<MetricSample> out;
  out.reserve(samples.size());
  for (auto& s : samples)
    out.push_back(MetricSample{std::move(s.name), std::move(s.labels), s.value, file + ":" + std::to_string(s.line)});
  return out;
}

std::vector<MetricSample> samples_from_metrics_json(const std::string& file, const json& doc,
                                                    const std::function<bool(std::string_view)>& keep,
                                                    std::size_t max_samples, const std::string& what) {
  core::Fields top(file, doc);
  std::vector<MetricSample> out;
  auto fams = top.array("families");
  for (std::size_t i = 0; i < fams.size(); ++i) {
    const core::Fields& f = fams[i];
    if (!f.raw().is_object()) top.fail("families[" + std::to_string(i) + "]", "expected an object, got " + core::describe(f.raw()));
    const std::string name = f.str("name");
    if (!keep(name)) continue;
    auto samples = f.array("samples");
    for (std::size_t k = 0; k < samples.size(); ++k) {
      const core::Fields& s = samples[k];
      const std::string at = "families[" + std::to_string(i) + "].samples[" + std::to_string(k) + "]";
      if (!s.raw().is_object()) top.fail(at, "expected an object, got " + core::describe(s.raw()));
      if (out.size() >= max_samples) top.fail(at, "more than " + std::to_string(max_samples) + " " + what + " samples");
      MetricSample r;
      r.name = name + s.str_or("suffix", "");
      r.where = file + ": field '" + at + "'";
      core::Fields labels = s.object("labels");
      for (const auto& [k2, v] : labels.raw().items()) {
        if (!v.is_string()) labels.fail(k2, "expected a string, got " + core::describe(v));
        r.labels.emplace_back(k2, v.get<std::string>());
      }
      auto v = s.raw().find("value");
      if (v == s.raw().end()) s.fail("value", "missing");
      if (v->is_null()) r.value = NAN;  // nlohmann writes a NaN or an infinity as null
      else if (v->is_number()) r.value = v->get<double>();
      else s.fail("value", "expected a number, got " + core::describe(*v));
      out.push_back(std::move(r));
    }
  }
  return out;
}

bool metrics_json_has(const json& doc, std::string_view prefix) {
  if (!doc.is_object()) return false;
  auto fams = doc.find("families");
  if (fams == doc.end() || !fams->is_array()) return false;
  for (const auto& f : *fams) {
    if (!f.is_object()) continue;
    auto n = f.find("name");
    if (n != f.end() && n->is_string() && n->get_ref<const std::string&>().starts_with(prefix)) return true;
  }
  return false;
}

std::string checked_node_name(const std::string& file, const std::string& node) {
  if (node.empty() || node.size() > 256 ||
      std::any_of(node.begin(), node.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
    throw Error(file + ": node name \"" + core::printable(node.substr(0, 60)) +
                "\" is not 1 to 256 printable characters");
  return node;
}

}  // namespace fabscope::report
