#pragma once
// The files a capture holds, found from the paths the readers asked about (core::AccessLog):
// each path is walked component by component under the root, so every symlink on the way
// (sys/class/infiniband/mlx5_0 -> ../../devices/...) is kept as a symlink and its target walked
// in turn, within the root. A link that leads out of the root is kept unfollowed and told in
// `skipped`. A listed directory gets its entries (links as links, directories empty, files as
// empty placeholders marked listed_only) so listing the capture gives the same names.
// Only regular files are read, without waiting (O_NONBLOCK), at most max_file_bytes each and
// max_total_bytes in all; nothing under proc/kcore, proc/kmsg, sys/kernel/debug and the like.
#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/root.hpp"

namespace fabscope::capture {

struct Entry {
  enum class Type { Dir, File, Symlink };
  Type type = Type::File;
  std::string content;  // File
  std::string target;   // Symlink, as written
  bool truncated = false;    // File cut at max_file_bytes
  bool listed_only = false;  // File seen in a listed directory, never read: kept empty
};

struct Skipped {
  std::string path;
  std::string reason;
};

struct TreeLimits {
  std::size_t max_file_bytes = 8u << 20;
  std::size_t max_total_bytes = 64u << 20;
  std::size_t max_entries = 20000;  // files, links and directories in all
};

struct Tree {
  std::map<std::string, Entry> entries;  // by path relative to the root, sorted (parents first)
  std::vector<Skipped> skipped;
  std::size_t content_bytes = 0;
};

Tree collect_tree(const std::filesystem::path& root_dir, const core::AccessLog& log, const TreeLimits& limits);

// Whether a path (relative to the root) is never read into a capture: kernel memory, logs that
// block, debug file systems, other processes' memory and environment.
bool is_refused_path(const std::string& rel);

}  // namespace fabscope::capture
