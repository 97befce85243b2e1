#pragma once
// The samples of a node's saved /metrics that one section of the report reads (the mesh's
// fabscope_mesh_*, the job's fabscope_job_*), from either layout: the text exposition (through
// exposition.hpp, every line checked) or the same series as a fabscope.metrics JSON document
// (`fabscope exporter --once --json`: families, histogram samples named by family + "suffix").
// Each sample keeps where it was read, so an error names the file and the line or field. Pure.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/json.hpp"

namespace fabscope::report {

struct MetricSample {
  std::string name;  // with a histogram's suffix: "fabscope_job_operation_seconds_bucket"
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
  std::string where;  // "FILE:LINE" or "FILE: field 'families[2].samples[5]'"
  const std::string* label(std::string_view key) const;  // nullptr when absent
};

// Throws fabscope::Error "WHERE: NAME: what".
[[noreturn]] void sample_fail(const MetricSample& s, const std::string& what);
// A label that must be there: present, not empty, at most 256 characters.
const std::string& need_label(const MetricSample& s, std::string_view key);
// The value as a count: finite and >= 0.
double count_value(const MetricSample& s);

// The samples whose name `keep` accepts; every line of the text is checked (exposition.hpp).
// An empty or blank text is "FILE: empty file (no metrics)"; more than max_samples kept is an
// error naming the line.
std::vector<MetricSample> samples_from_exposition(const std::string& file, std::string_view text,
                                                  const std::function<bool(std::string_view)>& keep,
                                                  std::size_t max_samples);
// The same from a fabscope.metrics document (schema already checked by the caller); `what` names
// the kind in the bound's message ("more than 200000 mesh samples").
std::vector<MetricSample> samples_from_metrics_json(const std::string& file, const json& doc,
                                                    const std::function<bool(std::string_view)>& keep,
                                                    std::size_t max_samples, const std::string& what);
// Whether a fabscope.metrics document has a family whose name starts with `prefix` (nothing
// else checked: the readers above do that).
bool metrics_json_has(const json& doc, std::string_view prefix);

// A node's name as given (NAME=FILE or the file's label): 1 to 256 printable characters, else
// an Error naming the file.
std::string checked_node_name(const std::string& file, const std::string& node);

}  // namespace fabscope::report
