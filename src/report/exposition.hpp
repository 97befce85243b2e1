#pragma once
// A reader of the Prometheus text exposition format 0.0.4, as `curl node:9417/metrics` saves
// it: `# HELP` / `# TYPE` lines and other comments, then one sample a line,
// `name{label="value",...} value [timestamp]`. Every line's syntax is checked (a file that is
// not exposition text is refused at its first bad line); only the samples whose name `keep`
// accepts are returned, so a node's thousands of port series cost no memory. Pure: no I/O.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fabscope::report {

struct ExpoSample {
  std::string name;                                         // "fabscope_mesh_rtt_seconds_bucket"
  std::vector<std::pair<std::string, std::string>> labels;  // as written, values unescaped
  double value = 0;                                         // +Inf, -Inf and NaN as doubles
  std::size_t line = 0;                                     // 1-based
  const std::string* label(std::string_view key) const;     // nullptr when absent
};

struct ExpoLimits {
  std::size_t max_line_bytes = 1u << 20;    // one line (a label value may be long, not endless)
  std::size_t max_labels = 64;              // per sample
  std::size_t max_kept = 200000;            // samples returned
};

// Throws fabscope::Error "FILE:LINE: what" (the label or token at fault named) on the first
// line that is not exposition text, or when more than max_kept samples are kept.
std::vector<ExpoSample> parse_exposition(const std::string& file, std::string_view text,
                                         const std::function<bool(std::string_view name)>& keep,
                                         const ExpoLimits& limits = {});

// A sample value as the format writes it: a decimal float ("1.5e-06", "12", "-3"), or "+Inf",
// "-Inf", "Inf", "NaN" in any case. False for anything else.
bool parse_expo_value(std::string_view s, double& out);

}  // namespace fabscope::report
