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

// Highest severity among findings (Ok when empty).
Severity worst(const std::vector<Finding>& findings);

// Exit codes shared by every command that judges: 0 nothing above info, 1 warn, 2 fail.
// 3 is usage or internal error (cli/).
int exit_code_for(const std::vector<Finding>& findings);
constexpr int kExitUsage = 3;

std::string docs_anchor(const std::string& id, const std::string& page = "docs/checks.md");

}  // namespace fabscope
