#include "capture/capture.hpp"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "capture/redact.hpp"
#include "capture/tar.hpp"
#include "checks/checks.hpp"
#include "core/error.hpp"
#include "core/sha256.hpp"
#include "exporter/gzip.hpp"
#include "exporter/port_reader.hpp"
#include "probe/probe.hpp"
#include "probe/replay.hpp"

namespace fabscope::capture {

namespace {

struct Command {
  std::vector<std::string> argv;
  probe::ToolResult result;
  long long duration_ms = 0;
};

std::string iso_utc(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string random_key() {
  std::random_device rd;
  std::string key;
  for (int i = 0; i < 8; ++i) {
    const auto v = rd();
    key.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  return key;
}

bool is_pci_config(const std::string& rel) {
  return rel.size() > 7 && rel.compare(rel.size() - 7, 7, "/config") == 0 && rel.rfind("sys/devices/", 0) == 0;
}

// A file whose whole content is a serial number (sys/class/dmi/id/product_serial, board_serial,
// chassis_serial; a device's serial attribute).
bool is_serial_file(const std::string& rel) {
  const auto slash = rel.find_last_of('/');
  const std::string name = slash == std::string::npos ? rel : rel.substr(slash + 1);
  return name == "serial" || name == "serial_number" ||
         (name.size() > 7 && name.compare(name.size() - 7, 7, "_serial") == 0);
}

}  // namespace

std::string top_dir_for(const std::string& output_path) {
  std::string name = std::filesystem::path(output_path).filename().string();
  for (const char* ext : {".tar.gz", ".tgz", ".gz", ".tar"}) {
    const std::string e = ext;
    if (name.size() >= e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0) {
      name.resize(name.size() - e.size());
      break;
    }
  }
  for (auto& c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '_';
  if (name.empty() || name == "." || name == "..") name = "fabscope-capture";
  return name;
}

Result run(const core::Root& root, const Options& opts) {
  if (!exporter::gzip_available())
    throw Error("capture: zlib (libz.so.1) cannot be loaded, so no .tar.gz can be written; install zlib1g");
  const auto t0 = std::chrono::steady_clock::now();
  const std::time_t now = std::time(nullptr);

  // 1. The readers, over a Root that records: the probe (with the tools it runs on a live node),
  //    the checks over its result, and the exporter's port reader.
  auto log = std::make_shared<core::AccessLog>();
  // Paths asked about: a bound on the log's memory, well above what the entry cap keeps (the walk
  // goes through them sorted, so proc/ is kept before sys/ fills the cap).
  const std::size_t max_paths =
      opts.limits.max_entries > (std::size_t(-1) >> 6) ? std::size_t(-1) : opts.limits.max_entries * 50;
  log->set_limit(max_paths);
  core::Root recorded = root;
  recorded.record_into(log);
  std::vector<Command> commands;
  probe::Options po;
  po.live = root.is_live();
  po.run_tool = [&](const std::vector<std::string>& argv, int timeout_ms, std::size_t max_bytes) {
    const auto c0 = std::chrono::steady_clock::now();
    Command c{argv, probe::run_tool(argv, std::min(timeout_ms, opts.command_timeout_ms), max_bytes)};
    c.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - c0).count();
    commands.push_back(c);
    return c.result;
  };
  NodeInfo node = probe::collect(recorded, po);
  (void)checks::run(node);  // pure today; run so a check that starts reading is captured too
  {
    exporter::PortReader reader(recorded);
    std::vector<probe::Note> notes;
    reader.read(notes);
  }
  recorded.record_into(nullptr);

  // 2. The files behind every path asked about. A capture's own files under a captured root
  //    are written anew, not copied.
  Tree tree = collect_tree(root.dir(), *log, opts.limits);
  if (log->dropped() > 0)
    tree.skipped.push_back({"", std::to_string(log->dropped()) + " more paths were asked about than the entry cap allows (" +
                                    std::to_string(opts.limits.max_entries) + " entries, " +
                                    std::to_string(max_paths) + " paths); left out"});
  for (auto it = tree.entries.begin(); it != tree.entries.end();) {
    if (it->first == probe::kCaptureDir || it->first.rfind(std::string(probe::kCaptureDir) + "/", 0) == 0)
      it = tree.entries.erase(it);
    else
      ++it;
  }

  // 3. What the capture adds: the probe as JSON and each command's output.
  std::map<std::string, std::string> added;  // path -> content
  if (root.is_live()) node.root = "/";
  added[probe::kCaptureProbe] = dump_json(json(node)) + "\n";
  json cmds = json::array();
  for (std::size_t i = 0; i < commands.size(); ++i) {
    const auto& c = commands[i];
    const std::string base = std::string(probe::kCaptureCommands) + "/" + c.argv[0];
    json j{{"argv", c.argv},
           {"status", probe::tool_status_name(c.result.status)},
           {"exit_code", c.result.status == probe::ToolResult::Status::Ran ? json(c.result.exit_code) : json(nullptr)},
           {"error", c.result.error},
           {"duration_ms", c.duration_ms}};
    if (c.result.status == probe::ToolResult::Status::Ran) {
      added[base + ".stdout"] = c.result.out;
      added[base + ".stderr"] = c.result.err;
      j["stdout"] = base + ".stdout";
      j["stderr"] = base + ".stderr";
    }
    cmds.push_back(std::move(j));
  }

  // 4. Redaction, one mapping for the whole tree.
  std::optional<Redactor> red;
  std::string host = node.hostname;
  if (opts.redact) {
    red.emplace(random_key());
    red->add_host_name(node.hostname);
    for (const auto& n : node.netdevs)
      for (const auto& nb : n.lldp_neighbors) red->add_host_name(nb.chassis_name);
    if (auto it = tree.entries.find("proc/cmdline"); it != tree.entries.end()) red->learn_cmdline(it->second.content);
    // Every text of the archive once to learn the values (a MAC read under sys/class/net is also
    // the one proc/cmdline spells 01-aa-bb-...), then again to write them in all their forms.
    for (int pass = 0; pass < 2; ++pass) {
      const bool write = pass == 1;
      for (auto& [path, e] : tree.entries) {
        if (e.type != Entry::Type::File || e.content.empty()) continue;
        std::string r = is_pci_config(path) ? red->pci_config(e.content)
                        : is_serial_file(path) ? red->serial_file(e.content)
                                               : red->text(e.content);
        if (write) e.content = std::move(r);
      }
      for (auto& [path, content] : added) {
        std::string r = red->text(content);
        if (write) content = std::move(r);
      }
      for (auto& c : cmds) {
        std::string r = red->text(c["error"].get<std::string>());
        if (write) c["error"] = std::move(r);
      }
    }
    if (!host.empty()) host = red->host_name(host);
  }

  // 5. The manifest and the archive.
  json files = json::array();
  std::size_t n_files = 0, n_links = 0, n_dirs = 0, bytes = 0;
  TarWriter tar(static_cast<std::int64_t>(now));
  const std::string top = opts.top_dir;
  tar.add_dir(top);
  auto add_parents = [&](const std::string& path, std::set<std::string>& made) {
    std::size_t pos = 0;
    while ((pos = path.find('/', pos)) != std::string::npos) {
      const std::string dir = path.substr(0, pos++);
      if (made.insert(dir).second) tar.add_dir(top + "/" + dir);
    }
  };
  std::set<std::string> made;
  for (const auto& [path, e] : tree.entries) {
    add_parents(path, made);
    json f{{"path", path}};
    switch (e.type) {
      case Entry::Type::Dir:
        if (made.insert(path).second) tar.add_dir(top + "/" + path);
        f["type"] = "dir";
        ++n_dirs;
        break;
      case Entry::Type::Symlink:
        tar.add_symlink(top + "/" + path, e.target);
        f["type"] = "symlink";
        f["target"] = e.target;
        ++n_links;
        break;
      case Entry::Type::File:
        tar.add_file(top + "/" + path, e.content);
        f["type"] = "file";
        f["size"] = e.content.size();
        f["sha256"] = core::sha256_hex(e.content);
        if (e.truncated) f["truncated"] = true;
        if (e.listed_only) f["listed_only"] = true;
        ++n_files;
        bytes += e.content.size();
        break;
    }
    files.push_back(std::move(f));
  }
  for (const auto& [path, content] : added) {
    add_parents(path, made);
    tar.add_file(top + "/" + path, content);
    files.push_back({{"path", path}, {"type", "file"}, {"size", content.size()}, {"sha256", core::sha256_hex(content)}});
    ++n_files;
    bytes += content.size();
  }
  json skipped = json::array();
  for (const auto& s : tree.skipped) skipped.push_back({{"path", s.path}, {"reason", s.reason}});

  Result r;
  r.manifest = json{{"schema", "fabscope.capture"},
                    {"schema_version", 1},
                    {"fabscope_version", FABSCOPE_VERSION},
                    {"time", iso_utc(now)},
                    {"host", host},
                    {"live", root.is_live()},
                    {"redacted", opts.redact},
                    {"limits",
                     {{"max_total_bytes", opts.limits.max_total_bytes},
                      {"max_file_bytes", opts.limits.max_file_bytes},
                      {"max_entries", opts.limits.max_entries},
                      {"command_timeout_ms", opts.command_timeout_ms}}},
                    {"files", files},
                    {"skipped", skipped},
                    {"commands", cmds}};
  if (red) r.manifest["redactions"] = red->counts();
  tar.add_file(top + "/" + probe::kCaptureManifest, dump_json(r.manifest) + "\n");
  const std::string raw = tar.finish();
  auto gz = exporter::gzip_member(raw);
  if (!gz) throw Error("capture: compressing the archive with zlib failed");
  r.archive = std::move(*gz);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  json cmd_summary = json::array();
  for (const auto& c : cmds) cmd_summary.push_back({{"argv", c["argv"]}, {"status", c["status"]}, {"exit_code", c["exit_code"]}});
  r.summary = json{{"schema", "fabscope.capture.summary"},
                   {"schema_version", 1},
                   {"top_dir", top},
                   {"archive_bytes", r.archive.size()},
                   {"tar_bytes", raw.size()},
                   {"files", n_files},
                   {"symlinks", n_links},
                   {"dirs", n_dirs},
                   {"content_bytes", bytes},
                   {"skipped", skipped.size()},
                   {"commands", cmd_summary},
                   {"live", root.is_live()},
                   {"redacted", opts.redact},
                   {"duration_ms", ms}};
  return r;
}

}  // namespace fabscope::capture
