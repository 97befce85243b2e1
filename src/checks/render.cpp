#include "checks/render.hpp"

#include <algorithm>
#include <sstream>

#include "checks/checks.hpp"
#include "core/finding_text.hpp"
#include "core/strings.hpp"
#include "core/table.hpp"

namespace fabscope::checks {


std::vector<std::string> wrap_lines(const std::string& text, std::size_t width) {
  std::vector<std::string> lines;
  if (width == 0) width = 1;
  std::istringstream words(text);
  std::string word, cur;
  while (words >> word) {
    word = core::printable(word);  // text from a saved probe or another node: no terminal escapes
    while (word.size() > width) {  // a path or GID longer than the column: cut it
      if (!cur.empty()) lines.push_back(std::move(cur)), cur.clear();
      lines.push_back(word.substr(0, width));
      word.erase(0, width);
    }
    if (!cur.empty() && cur.size() + 1 + word.size() > width) lines.push_back(std::move(cur)), cur.clear();
    if (!cur.empty()) cur += ' ';
    cur += word;
  }
  if (!cur.empty()) lines.push_back(std::move(cur));
  return lines;
}

std::string render_findings(const std::vector<Finding>& findings, std::size_t width, bool with_remedy) {
  return core::render_finding_blocks(findings, width, with_remedy);
}

std::string counts_text(const SeverityCounts& s) {
  return std::to_string(s.fail) + " fail, " + std::to_string(s.warn) + " warn, " + std::to_string(s.info) + " info";
}

std::string render_check_text(const NodeInfo& node, const std::vector<Finding>& findings, std::size_t width) {
  std::ostringstream os;
  if (findings.empty()) os << "no findings\n";
  else os << render_findings(findings, width);
  const SeverityCounts s = count_severities(findings);
  std::string line = "\n" + std::to_string(findings.size()) + " finding(s): " + counts_text(s) + "; " +
                     std::to_string(registry().size()) + " checks on host " +
                     (node.hostname.empty() ? std::string("(unknown)") : node.hostname) + "; exit code " +
                     std::to_string(exit_code_for(findings));
  os << line << "\n";
  if (!node.probe_notes.empty())
    for (const auto& l : wrap_lines(std::to_string(node.probe_notes.size()) +
                                        " value(s) could not be read and were not judged (fabscope probe lists them)",
                                    width))
      os << l << "\n";
  return core::printable_lines(os.str());
}

json check_json(const NodeInfo& node, const std::vector<Finding>& findings) {
  const SeverityCounts s = count_severities(findings);
  json checks = json::array();
  for (const auto& c : registry())
    checks.push_back({{"id", c.id}, {"family", c.family}, {"severity", to_string(c.severity)}, {"title", c.title}});
  return json{{"schema", "fabscope.check"},
              {"schema_version", kCheckSchemaVersion},
              {"hostname", node.hostname},
              {"checks", checks},
              {"findings", findings},
              {"summary",
               {{"fail", s.fail}, {"warn", s.warn}, {"info", s.info}, {"worst", to_string(worst(findings))}}},
              {"probe_notes", node.probe_notes},
              {"exit_code", exit_code_for(findings)}};
}

}  // namespace fabscope::checks
