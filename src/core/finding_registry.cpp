#include "core/finding_registry.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace fabscope {

std::vector<FindingInfo> finding_table(const std::string& docs, std::vector<FindingInfo> rows) {
  for (auto& f : rows)
    if (f.docs.empty()) f.docs = docs;
  return rows;
}

const FindingInfo* find_finding(std::span<const FindingInfo> table, std::string_view id) {
  auto it = std::find_if(table.begin(), table.end(), [&](const FindingInfo& f) { return f.id == id; });
  return it == table.end() ? nullptr : &*it;
}

std::size_t finding_rank(std::span<const FindingInfo> table, std::string_view id) {
  auto it = std::find_if(table.begin(), table.end(), [&](const FindingInfo& f) { return f.id == id; });
  return static_cast<std::size_t>(it - table.begin());
}

Finding registered_finding(std::span<const FindingInfo> table, const std::string& id, Severity severity,
                           std::string subject, std::string message, std::string evidence, std::string remedy) {
  const FindingInfo* info = find_finding(table, id);
  if (!info) throw Error("finding id '" + id + "' is not registered");
  return make_finding(id, severity, std::move(subject), std::move(message), std::move(evidence), std::move(remedy),
                      info->docs);
}

FindingRegistry& FindingRegistry::add(std::span<const FindingInfo> table) {
  for (const auto& f : table) {
    if (find(f.id)) throw Error("finding id '" + f.id + "' is registered twice");
    infos_.push_back(f);
  }
  return *this;
}

std::vector<std::string> FindingRegistry::ids() const {
  std::vector<std::string> out;
  out.reserve(infos_.size());
  for (const auto& f : infos_) out.push_back(f.id);
  return out;
}

}  // namespace fabscope
