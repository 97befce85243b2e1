#pragma once
// Runs the built fabscope binary as a user would: exit code and output (stdout, and stderr
// unless separated).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fabscope::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;
};

// A shell command's standard output; its exit code in *rc when given.
inline std::string run_shell(const std::string& cmd, int* rc = nullptr) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = pclose(p);
  if (rc) *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// args are passed to a shell: quote paths with quote().
inline CliResult run_fabscope(const std::string& args, const std::string& env = "", bool with_stderr = true) {
  std::string cmd = env + (env.empty() ? "" : " ") + "'" FABSCOPE_BINARY "' " + args +
                    (with_stderr ? " 2>&1" : " 2>/dev/null");
  CliResult r;
  r.out = run_shell(cmd, &r.exit_code);
  return r;
}

inline std::string quote(const std::string& s) { return "'" + s + "'"; }

// A whole file ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every line of a command's human output fits 100 columns.
inline void expect_fits_100_columns(const std::string& out) {
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) EXPECT_LE(line.size(), 100u) << line;
}

}  // namespace fabscope::testing
