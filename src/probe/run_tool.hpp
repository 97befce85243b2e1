#pragma once
// Running an external tool where it is the only source of a fact (nft for the firewall
// ruleset): no shell, argv as given (PATH lookup), a timeout, bounded output. Absence or failure
// is a result, never an exception.
//
// The program is looked up on PATH here, not by posix_spawnp: execvp reports EACCES when any
// PATH entry could not be searched and no executable was found, so a service account or
// `sudo -u` whose PATH starts with an unsearchable directory (one under /root) would see
// "Permission denied" for a tool that is simply not installed.
#include <functional>
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

// Where argv[0] of run_tool resolves: an absolute path to an executable file, or why not.
// NotFound: no file of that name on PATH (unsearchable entries skipped); NotExecutable: a file of
// that name exists but this user may not execute it (path names the first one found).
struct ToolPath {
  enum class Status { Found, NotFound, NotExecutable };
  Status status = Status::NotFound;
  std::string path;
};
// A name with a '/' is taken as a path. path_env is PATH's value (nullptr: unset, then
// "/bin:/usr/bin" as the C library does); an empty entry is the current directory (POSIX).
ToolPath resolve_tool(const std::string& name, const char* path_env);

ToolResult run_tool(const std::vector<std::string>& argv, int timeout_ms, std::size_t max_bytes = 16u << 20);

// How a collector runs its tool: run_tool on a live node; `fabscope capture` wraps it to keep each
// command's output, and a captured tree replays what was kept (probe/replay.hpp).
using ToolRunner =
    std::function<ToolResult(const std::vector<std::string>& argv, int timeout_ms, std::size_t max_bytes)>;

}  // namespace fabscope::probe
