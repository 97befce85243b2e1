#pragma once
// core::Root: every sysfs/procfs read goes through one root directory (default "/"),
// so tests point it at fixture trees, as prometheus/procfs does with sysfs.NewFS().
//
// Reads never throw for a missing or unreadable file: they return std::nullopt and the
// caller records the field as unknown. Reads are bounded (sysfs attributes are < 4 KiB;
// we allow up to max_bytes) so a garbage or huge file cannot blow up memory.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/strings.hpp"

namespace fabscope::core {

// Every path a Root was asked about (read, tested, listed, resolved), relative to the root:
// `fabscope capture` runs the probe and the exporter's reader over a Root that records, and
// packs exactly those paths, so the captured set is what the readers read, not a second list.
class AccessLog {
 public:
  void add(std::string_view rel, bool listed);
  std::set<std::string> paths() const;   // every path asked about
  std::set<std::string> listed() const;  // directories whose entries were listed
  // At most n distinct paths are kept (a tree of 100,000 directories asks about millions); the
  // rest are counted as dropped.
  void set_limit(std::size_t n);
  std::size_t dropped() const;

 private:
  mutable std::mutex mutex_;
  std::set<std::string> paths_, listed_;
  std::size_t limit_ = static_cast<std::size_t>(-1), dropped_ = 0;
};

// Opens rel under the directory dir_fd without leaving it: no "..", absolute link or procfs
// magic link out of it, and, with follow_links false, no symbolic link at all (every component
// is what it is when opened, not what a check saw earlier). openat2(2) with RESOLVE_BENEATH
// (| RESOLVE_NO_SYMLINKS) where the kernel has it (5.6), else a walk one component at a time
// with O_NOFOLLOW, reading each link and walking its target within dir_fd. flags as open(2)
// (O_CLOEXEC is added). Returns the descriptor, or -1 with errno set (EXDEV: it leads out).
int open_beneath(int dir_fd, std::string_view rel, int flags, bool follow_links);
// The walk open_beneath falls back to (tested on its own: the kernels tests run on have openat2).
int open_beneath_by_walk(int dir_fd, std::string_view rel, int flags, bool follow_links);

class Root {
 public:
  // Throws fabscope::Error when dir does not exist or is not a directory.
  explicit Root(std::filesystem::path dir = "/");

  // Root from --root when given, else $FABSCOPE_ROOT, else "/".
  static Root from_option(const std::string& flag_value);

  const std::filesystem::path& dir() const { return dir_; }
  bool is_live() const { return dir_ == "/"; }

  // Maps a path like "sys/class/net" (leading '/' optional) under the root.
  std::filesystem::path path(std::string_view rel) const;

  bool exists(std::string_view rel) const;
  bool is_dir(std::string_view rel) const;

  // Whole file, at most max_bytes (the rest is dropped). nullopt if unreadable, if not a regular
  // file (a FIFO or a device is never opened for a wait), or, under a root other than "/", if its
  // links lead out of the root.
  std::optional<std::string> read(std::string_view rel, std::size_t max_bytes = 64 * 1024) const;
  // First line without trailing whitespace; nullopt if unreadable or empty.
  std::optional<std::string> read_line(std::string_view rel) const;
  // read_line parsed as an integer (decimal, or hex with 0x); nullopt if unreadable or not a number.
  std::optional<std::int64_t> read_int(std::string_view rel) const;
  std::optional<std::uint64_t> read_u64(std::string_view rel) const;
  // Binary read of up to max_bytes (e.g. PCI config space).
  std::optional<std::vector<std::uint8_t>> read_bytes(std::string_view rel, std::size_t max_bytes) const;

  // Entry names in a directory, sorted; empty if it does not exist.
  std::vector<std::string> list(std::string_view rel) const;
  // Target of a symlink as written (e.g. "../../devices/pci0000:00/..."); nullopt if not a link.
  std::optional<std::string> link_target(std::string_view rel) const;
  // The path relative to the root after resolving links (e.g. "sys/devices/pci0000:00/0000:00:01.0");
  // nullopt if it does not resolve inside the root.
  std::optional<std::string> resolve(std::string_view rel) const;

  // Records every later query of this Root and of its copies into log (nullptr: stop).
  void record_into(std::shared_ptr<AccessLog> log) { log_ = std::move(log); }

 private:
  void note(std::string_view rel, bool listed = false) const {
    if (log_) log_->add(rel, listed);
  }
  std::filesystem::path dir_;
  std::shared_ptr<AccessLog> log_;
};

}  // namespace fabscope::core
