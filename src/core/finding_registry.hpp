#pragma once
// The one shape of a finding id's declaration. Every module that reports findings declares its
// ids in tables of FindingInfo (checks::registry(), fabric::fabric_checks() and
// fabric::topology_checks(), cluster::registry(), ncclenv::lint_rules(), nccllog::finding_infos(),
// rdma::finding_infos(), job::registry()); a FindingRegistry joins tables where more than one
// module's ids meet (every id at once: cli/findings.hpp; the exporter's check verdicts). Each id is documented in its
// docs page under a "### <id>" heading; the finding's link is docs_anchor(id, docs).
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/finding.hpp"

namespace fabscope {

struct FindingInfo {
  std::string id;      // "link.port_down"
  std::string family;  // "link": the id up to its first '.'
  Severity severity;   // the highest severity the id is reported with
  std::string title;   // one line, what it judges
  std::string docs;    // the page that documents it: "docs/checks.md"
};

// A module's table: rows written without their page get `docs`.
std::vector<FindingInfo> finding_table(const std::string& docs, std::vector<FindingInfo> rows);

// The entry of id in a table, or nullptr.
const FindingInfo* find_finding(std::span<const FindingInfo> table, std::string_view id);

// The position of id in a table (table.size() when absent): findings of one severity are
// listed in the order their table declares them.
std::size_t finding_rank(std::span<const FindingInfo> table, std::string_view id);

// make_finding for an id of the table, linked to its docs page. Throws Error for an id that is
// not in the table: an unregistered id would link to no documentation.
Finding registered_finding(std::span<const FindingInfo> table, const std::string& id, Severity severity,
                           std::string subject, std::string message, std::string evidence, std::string remedy);

// Tables of several modules joined, in the order they were added.
class FindingRegistry {
 public:
  // Throws Error when an id of the table is already registered: an id is declared once.
  FindingRegistry& add(std::span<const FindingInfo> table);
  const std::vector<FindingInfo>& all() const { return infos_; }
  const FindingInfo* find(std::string_view id) const { return find_finding(infos_, id); }
  std::vector<std::string> ids() const;

 private:
  std::vector<FindingInfo> infos_;
};

}  // namespace fabscope
