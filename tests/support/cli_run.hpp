#pragma once
// Runs the built fabscope binary as a user would: exit code and output (stdout, and stderr
// unless separated).
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace fabscope::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;
};

// args are passed to a shell: quote paths with quote().
inline CliResult run_fabscope(const std::string& args, const std::string& env = "", bool with_stderr = true) {
  std::string cmd = env + (env.empty() ? "" : " ") + "'" FABSCOPE_BINARY "' " + args +
                    (with_stderr ? " 2>&1" : " 2>/dev/null");
  CliResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline std::string quote(const std::string& s) { return "'" + s + "'"; }

}  // namespace fabscope::testing
