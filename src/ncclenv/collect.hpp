#pragma once
// Collecting (I/O) for env planning and linting: the default route from proc/net/route, the
// process environment, NCCL's configuration files and user-given env-files. Everything it reads
// becomes plain values (EnvEntry, names) for the pure plan() and lint().
#include <string>
#include <vector>

#include "core/finding.hpp"
#include "core/node_info.hpp"
#include "core/root.hpp"
#include "ncclenv/envfile.hpp"

namespace fabscope::ncclenv {

// Interfaces with a default route (destination and mask 0, RTF_UP) in <root>/proc/net/route;
// empty when the file is missing or unreadable.
std::vector<std::string> default_route_interfaces(const core::Root& root);
// The same over the file's text (tested on values).
std::vector<std::string> parse_default_routes(const std::string& route_text);

struct Collected {
  std::vector<EnvEntry> entries;   // in precedence order: the first setting of a key wins
  std::vector<Finding> findings;   // env.syntax from the files
  std::vector<std::string> read;   // the sources that were read ("environment", "/etc/nccl.conf")
};

// What NCCL would see: the process environment (envp, NCCL_* only), then $NCCL_CONF_FILE or,
// when it is unset, ~/.nccl.conf ($HOME from envp), then /etc/nccl.conf. NCCL sets a
// variable from a file only when it is not set yet, and reads the files in that order, so an
// earlier source wins, and within a file the first line wins. Files are read through root.
Collected collect_nccl_environment(const core::Root& root, char** envp);

// Env-files as docker (--env-file, repeatable) and systemd read them: the last setting wins,
// within a file and across files. Paths are the user's, read from the filesystem; a file that
// cannot be read throws fabscope::Error naming it.
Collected collect_env_files(const std::vector<std::string>& paths);

// What `fabscope env lint` reports: the settings read and the findings about them.
struct LintReport {
  std::vector<EnvEntry> entries;     // as collected, in precedence order
  std::vector<std::string> sources;  // Collected::read
  std::vector<Finding> findings;     // file syntax and lint rules, most severe first (stable)
  // Entries whose key starts with NCCL_ (the ones lint judges).
  std::size_t nccl_settings() const;
};

// Judges collected settings against a node (pure): the files' syntax findings, then lint().
LintReport lint_collected(const NodeInfo& node, Collected collected);

// `fabscope env lint`: the env-files when any are given, else the process environment envp and
// NCCL's configuration files read through root; judged against the node probed under root.
// Throws fabscope::Error naming an env-file that cannot be read.
LintReport lint_settings(const core::Root& root, const std::vector<std::string>& env_files, char** envp);

}  // namespace fabscope::ncclenv
