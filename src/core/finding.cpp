#include "core/finding.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace fabscope {

const char* to_string(Severity s) {
  switch (s) {
    case Severity::Ok: return "ok";
    case Severity::Info: return "info";
    case Severity::Warn: return "warn";
    case Severity::Fail: return "fail";
  }
  return "?";
}

Severity severity_from_string(const std::string& s) {
  if (s == "ok") return Severity::Ok;
  if (s == "info") return Severity::Info;
  if (s == "warn") return Severity::Warn;
  if (s == "fail") return Severity::Fail;
  throw Error("unknown severity '" + s + "' (expected ok, info, warn or fail)");
}

void to_json(json& j, const Finding& f) {
  j = json{{"id", f.id},           {"severity", to_string(f.severity)},
           {"subject", f.subject}, {"message", f.message},
           {"evidence", f.evidence}, {"remedy", f.remedy},
           {"docs", f.docs}};
}

void from_json(const json& j, Finding& f) {
  f.id = j.at("id").get<std::string>();
  f.severity = severity_from_string(j.at("severity").get<std::string>());
  f.subject = j.value("subject", "");
  f.message = j.value("message", "");
  f.evidence = j.value("evidence", "");
  f.remedy = j.value("remedy", "");
  f.docs = j.value("docs", "");
}

SeverityCounts count_severities(const std::vector<Finding>& findings) {
  SeverityCounts c;
  for (const auto& f : findings) {
    if (f.severity == Severity::Fail) ++c.fail;
    else if (f.severity == Severity::Warn) ++c.warn;
    else if (f.severity == Severity::Info) ++c.info;
  }
  return c;
}

Severity worst(const std::vector<Finding>& findings) {
  Severity w = Severity::Ok;
  for (const auto& f : findings) w = std::max(w, f.severity);
  return w;
}

int exit_code_for(const std::vector<Finding>& findings) {
  switch (worst(findings)) {
    case Severity::Fail: return 2;
    case Severity::Warn: return 1;
    default: return 0;
  }
}

std::string docs_anchor(const std::string& id, const std::string& page) {
  std::string anchor = id;
  std::replace(anchor.begin(), anchor.end(), '.', '-');
  return page + "#" + anchor;
}

Finding make_finding(std::string id, Severity severity, std::string subject, std::string message,
                     std::string evidence, std::string remedy, const std::string& docs_page) {
  Finding f;
  f.docs = docs_anchor(id, docs_page);
  f.id = std::move(id);
  f.severity = severity;
  f.subject = std::move(subject);
  f.message = std::move(message);
  f.evidence = std::move(evidence);
  f.remedy = std::move(remedy);
  return f;
}

}  // namespace fabscope
