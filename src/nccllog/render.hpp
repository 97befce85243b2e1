#pragma once
// Rendering a diagnosis: human text (verdict first, details after, 100 columns) and the
// versioned JSON document ("fabscope.nccllog", schema_version 1).
#include <string>

#include "core/json.hpp"
#include "nccllog/diagnose.hpp"
#include "nccllog/summary.hpp"

namespace fabscope::nccllog {

constexpr int kSchemaVersion = 1;

struct ReportOptions {
  bool hosts = false;  // per-rank table, env overrides and peer pairs
  std::size_t width = 100;
};

std::string render_text(const LogSummary& s, const Diagnosis& d, const ReportOptions& opt = {});
json report_json(const LogSummary& s, const Diagnosis& d);

}  // namespace fabscope::nccllog
