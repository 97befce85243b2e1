#include "ncclenv/collect.hpp"

#include <algorithm>
#include <map>

#include "core/error.hpp"
#include "core/files.hpp"
#include "ncclenv/lint.hpp"
#include "probe/probe.hpp"

extern char** environ;

namespace fabscope::ncclenv {

namespace {

constexpr std::size_t kMaxFileBytes = 1024 * 1024;  // nccl.conf and env-files are a few lines

std::map<std::string, std::string> env_map(char** envp) {
  std::map<std::string, std::string> m;
  for (char** p = envp; p && *p; ++p) {
    std::string_view kv(*p);
    auto eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    m.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  return m;
}

void add_file(Collected& c, const std::string& source, const std::string& text, Dialect dialect) {
  ParsedFile f = parse_env_text(text, source, dialect);
  c.read.push_back(source);
  c.findings.insert(c.findings.end(), f.findings.begin(), f.findings.end());
  if (dialect == Dialect::EnvFile) std::reverse(f.entries.begin(), f.entries.end());  // last wins
  c.entries.insert(c.entries.end(), f.entries.begin(), f.entries.end());
}

}  // namespace

std::vector<std::string> parse_default_routes(const std::string& route_text) {
  std::vector<std::string> out;
  bool header = true;
  for (const auto& line : core::split(route_text, '\n')) {
    if (header) {
      header = false;
      if (core::starts_with(line, "Iface")) continue;
    }
    const auto f = core::split_ws(line);
    if (f.size() < 8) continue;
    auto flags = core::parse_u64("0x" + f[3]);
    if (f[1] != "00000000" || f[7] != "00000000" || !flags || !(*flags & 0x1)) continue;
    if (std::find(out.begin(), out.end(), f[0]) == out.end()) out.push_back(f[0]);
  }
  return out;
}

std::vector<std::string> default_route_interfaces(const core::Root& root) {
  auto text = root.read("proc/net/route", kMaxFileBytes);
  return text ? parse_default_routes(*text) : std::vector<std::string>{};
}

Collected collect_nccl_environment(const core::Root& root, char** envp) {
  Collected c;
  const auto env = env_map(envp);
  c.read.push_back("environment");
  for (const auto& [k, v] : env)
    if (core::starts_with(k, "NCCL_")) c.entries.push_back({"environment", 0, k, v});
  std::vector<std::string> files;
  if (auto it = env.find("NCCL_CONF_FILE"); it != env.end() && !it->second.empty()) {
    files.push_back(it->second);
  } else if (auto home = env.find("HOME"); home != env.end() && !home->second.empty()) {
    files.push_back(home->second + "/.nccl.conf");
  }
  files.push_back("/etc/nccl.conf");
  for (const auto& path : files) {
    auto text = root.read(path, kMaxFileBytes);
    if (!text) continue;
    add_file(c, path, *text, Dialect::NcclConf);
  }
  return c;
}

Collected collect_env_files(const std::vector<std::string>& paths) {
  Collected c;
  // docker applies --env-file options in order, a later file overriding an earlier one.
  for (auto it = paths.rbegin(); it != paths.rend(); ++it) {
    // core::read_input refuses a directory (an ifstream opens one and reads nothing: "no findings").
    add_file(c, *it, core::read_input(*it, kMaxFileBytes), Dialect::EnvFile);
  }
  return c;
}

std::size_t LintReport::nccl_settings() const {
  return static_cast<std::size_t>(
      std::count_if(entries.begin(), entries.end(), [](const EnvEntry& e) { return core::starts_with(e.key, "NCCL_"); }));
}

LintReport lint_collected(const NodeInfo& node, Collected collected) {
  LintReport r;
  r.findings = std::move(collected.findings);
  auto more = lint(node, collected.entries);
  r.findings.insert(r.findings.end(), more.begin(), more.end());
  std::stable_sort(r.findings.begin(), r.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.severity > b.severity; });
  r.entries = std::move(collected.entries);
  r.sources = std::move(collected.read);
  return r;
}

LintReport lint_settings(const core::Root& root, const std::vector<std::string>& env_files, char** envp) {
  Collected c = env_files.empty() ? collect_nccl_environment(root, envp) : collect_env_files(env_files);
  return lint_collected(probe::collect(root), std::move(c));
}

std::vector<Finding> lint_process_environment(const NodeInfo& node) {
  std::error_code ec;
  const bool rooted = !node.root.empty() && std::filesystem::is_directory(node.root, ec);
  const core::Root root(rooted ? std::filesystem::path(node.root) : std::filesystem::path("/"));
  return lint_collected(node, collect_nccl_environment(root, environ)).findings;
}

}  // namespace fabscope::ncclenv
