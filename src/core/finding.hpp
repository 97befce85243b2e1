#pragma once
// Finding: one verdict of a check or a diagnosis, with the evidence read and the remedy.
// Ids are stable ("link.port_down"); each is documented in docs/checks.md under an anchor
// equal to the id with '.' replaced by '-'.
#include <string>
#include <vector>

#include "core/json.hpp"

namespace fabscope {

enum class Severity { Ok = 0, Info = 1, Warn = 2, Fail = 3 };

const char* to_string(Severity s);
Severity severity_from_string(const std::string& s);  // throws Error on unknown text

struct Finding {
  std::string id;        // "link.port_down"
  Severity severity = Severity::Info;
  std::string subject;   // "mlx5_0:1", "gpu 0000:17:00.0", "node"
  std::string message;   // one line, what is wrong
  std::string evidence;  // the values read: "state=DOWN phys_state=Disabled"
  std::string remedy;    // the command or setting that fixes it
  std::string docs;      // "docs/checks.md#link-port_down"
};

void to_json(json& j, const Finding& f);
void from_json(const json& j, Finding& f);

// How many findings of each severity above ok, for summary lines ("2 fail, 1 warn, 0 info").
struct SeverityCounts {
  int fail = 0, warn = 0, info = 0;
};
SeverityCounts count_severities(const std::vector<Finding>& findings);

// Highest severity among findings (Ok when empty).
Severity worst(const std::vector<Finding>& findings);

// Exit codes shared by every command that judges: 0 nothing above info, 1 warn, 2 fail.
// 3 is usage or internal error (cli/).
int exit_code_for(const std::vector<Finding>& findings);
constexpr int kExitUsage = 3;

std::string docs_anchor(const std::string& id, const std::string& page = "docs/checks.md");

// A finding with its docs anchor filled in: docs_anchor(id, docs_page). Every module builds its
// findings with this; the page is the one that documents the module's ids.
Finding make_finding(std::string id, Severity severity, std::string subject, std::string message,
                     std::string evidence, std::string remedy,
                     const std::string& docs_page = "docs/checks.md");

}  // namespace fabscope
