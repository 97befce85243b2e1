#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "capture/capture.hpp"
#include "cli/commands.hpp"
#include "core/args.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json.hpp"
#include "core/root.hpp"
#include "core/strings.hpp"

namespace fabscope::cli {

namespace {
// The output is checked before anything is read: a capture that cannot be written is said at
// once, naming the path, not after the probe ran.
void check_output(const std::string& path, bool force) {
  if (path.empty()) throw UsageError("capture: --output must name a file (e.g. -o node.tar.gz)");
  if (const int fd = core::named_descriptor(path); fd >= 0) {  // -o /dev/stdout: written through it
    struct stat fst{};
    if (::fstat(fd, &fst) != 0) throw Error(path + ": descriptor " + std::to_string(fd) + " is not open");
    return;
  }
  struct stat st{};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw Error(path + ": is a directory; name the .tar.gz file to write");
    if (S_ISREG(st.st_mode) && !force) throw Error(path + ": exists; give --force to replace it");
  }
  std::string dir = path.substr(0, path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/'));
  if (path.find('/') != std::string::npos && dir.empty()) dir = "/";
  if (dir.empty()) dir = ".";
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Error(path + ": directory '" + dir + "' does not exist");
  if (::access(dir.c_str(), W_OK) != 0)
    throw Error(path + ": directory '" + dir + "' is not writable (" + std::strerror(errno) + ")");
}

std::string mib(std::size_t bytes) {
  if (bytes < (1u << 20)) return core::format_double("%.1f KiB", static_cast<double>(bytes) / 1024);
  return core::format_double("%.1f MiB", static_cast<double>(bytes) / (1 << 20));
}
}  // namespace

int cmd_capture(int argc, char** argv) {
  core::ArgParser args("capture",
                       "Pack what fabscope reads on this node into one .tar.gz to attach to a problem report:\n"
                       "the sysfs/procfs files the probe, the checks and the exporter read (the layout --root\n"
                       "takes, symlinks kept), the outputs of the tools the probe runs (nft, lldpcli),\n"
                       "`fabscope probe --json` and a manifest (sizes, SHA-256, what was skipped and why).\n"
                       "`fabscope doctor --root DIR` on the unpacked archive judges what doctor judged here.");
  args.option("-o,--output", "FILE", "the .tar.gz to write (its name, without .tar.gz, is the top directory)")
      .flag("--force", "replace FILE when it exists")
      .flag("--redact",
            "replace host names, IP/MAC addresses, GUIDs, GIDs, UUIDs, serial numbers (same form)")
      .option("--root", "DIR", "capture sys/ and proc/ under DIR instead of / (env FABSCOPE_ROOT)")
      .option("--max-mib", "N", "at most N MiB of file content in all", "64")
      .option("--max-file-mib", "N", "at most N MiB of any one file (the rest is cut, and said so)", "8")
      .option("--max-entries", "N", "at most N files, links and directories in all (the rest is left out, and said so)",
              "20000")
      .option("--timeout", "SECONDS", "longest wait for each tool (nft, lldpcli)", "5")
      .flag("--json", "print a summary as JSON (schema fabscope.capture.summary, docs/formats.md)")
      .example("fabscope capture -o node.tar.gz --redact", "a capture to attach to an issue")
      .example("tar xzf node.tar.gz && fabscope doctor --root node", "judge the capture elsewhere")
      .example("fabscope capture --root /srv/fixture -o fixture.tar.gz", "pack a tree already captured")
      .footer("Exit codes: 0 the archive was written (files left out are listed in its manifest and\n"
              "counted here), 3 usage or error (an output that exists without --force, a directory\n"
              "that does not exist or is not writable, --root not a directory); the message names it.");
  if (!args.parse(argc, argv, std::cout)) return 0;
  if (!args.positionals().empty()) throw UsageError("capture: unexpected argument '" + args.positionals()[0] + "'");
  const std::string output = args.get("output");
  check_output(output, args.has("force"));
  auto root = core::Root::from_option(args.get("root"));
  capture::Options opts;
  opts.redact = args.has("redact");
  opts.limits.max_total_bytes = static_cast<std::size_t>(args.get_int("max-mib", 1, 4096)) << 20;
  opts.limits.max_file_bytes = static_cast<std::size_t>(args.get_int("max-file-mib", 1, 4096)) << 20;
  opts.limits.max_entries = static_cast<std::size_t>(args.get_int("max-entries", 1, 10000000));
  opts.command_timeout_ms = static_cast<int>(args.get_int("timeout", 1, 600) * 1000);
  opts.top_dir = capture::top_dir_for(output);
  capture::Result r = capture::run(root, opts);
  core::write_output(output, r.archive);
  json s = r.summary;
  s["output"] = output;
  // The archive went to standard output (-o /dev/stdout into a pipe or a file): the summary goes to
  // standard error, never after the archive's bytes.
  std::ostream& out = core::names_stdout(output) ? std::cerr : std::cout;
  if (args.has("json")) {
    out << dump_json(s) << "\n";
    return 0;
  }
  out << "wrote " << output << " (" << mib(s["archive_bytes"].get<std::size_t>()) << "): "
            << s["files"].get<std::size_t>() << " files, " << s["symlinks"].get<std::size_t>() << " symlinks, "
            << mib(s["content_bytes"].get<std::size_t>()) << " of content"
            << (opts.redact ? ", redacted" : "") << "\n";
  for (const auto& c : s["commands"]) {
    std::string argv_text;
    for (const auto& a : c["argv"]) argv_text += (argv_text.empty() ? "" : " ") + a.get<std::string>();
    out << "  " << argv_text.substr(0, 60) << ": " << c["status"].get<std::string>();
    if (c["exit_code"].is_number()) out << ", exit " << c["exit_code"].get<int>();
    out << "\n";
  }
  if (s["skipped"].get<std::size_t>() > 0)
    out << "  " << s["skipped"].get<std::size_t>()
              << " paths left out or cut: see \"skipped\" in " << s["top_dir"].get<std::string>()
              << "/fabscope/manifest.json\n";
  out << "Unpack: tar xzf " << output << "   then: fabscope doctor --root "
            << s["top_dir"].get<std::string>() << "\n";
  return 0;
}

}  // namespace fabscope::cli
