#pragma once
// Running an external tool where it is the only source of a fact (nft for the firewall
// ruleset): no shell, argv as given (PATH lookup), a timeout, bounded output. Absence or failure
// is a result, never an exception.
#include <string>
#include <vector>

namespace fabscope::probe {

struct ToolResult {
  enum class Status { Ran, NotFound, TimedOut, Failed };
  Status status = Status::Failed;
  int exit_code = -1;  // when Ran
  std::string out;     // stdout, at most max_bytes
  std::string err;     // stderr, at most 4 KiB
  std::string error;   // for NotFound/Failed: what went wrong
};

ToolResult run_tool(const std::vector<std::string>& argv, int timeout_ms, std::size_t max_bytes = 16u << 20);

}  // namespace fabscope::probe
