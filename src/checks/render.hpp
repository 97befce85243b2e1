#pragma once
// Findings as people and programs read them: the table and summary of `fabscope check` (also
// used by `fabscope doctor`) and the fabscope.check JSON object (docs/formats.md).
#include <string>
#include <vector>

#include "core/finding.hpp"
#include "core/json.hpp"
#include "core/node_info.hpp"

namespace fabscope::checks {

constexpr int kCheckSchemaVersion = 1;

// Splits text into lines of at most width columns at blanks; a word longer than width is cut.
std::vector<std::string> wrap_lines(const std::string& text, std::size_t width);

// The findings in the one layout every judging command uses (core/finding_text.hpp): a block per
// finding; remedy and docs anchor only with_remedy. Every line fits width (at least 60).
std::string render_findings(const std::vector<Finding>& findings, std::size_t width = 100,
                            bool with_remedy = true);

// "0 fail, 2 warn, 0 info"
std::string counts_text(const SeverityCounts& s);

// The whole `fabscope check` text: the table (or "no findings") and a summary line.
std::string render_check_text(const NodeInfo& node, const std::vector<Finding>& findings,
                              std::size_t width = 100);

// {"schema":"fabscope.check","schema_version":1,"hostname","checks","findings","summary",
//  "probe_notes","exit_code"}
json check_json(const NodeInfo& node, const std::vector<Finding>& findings);

}  // namespace fabscope::checks
