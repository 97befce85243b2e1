#pragma once
// Test support: fixture locations, a ttar unpacker (prometheus/procfs' text archive format)
// and temporary directories that clean up after themselves.
#include <filesystem>
#include <string>

namespace fabscope::testing {

// tests/fixtures/<name>
std::filesystem::path fixture(const std::string& name);

// A fresh temporary directory, removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Unpacks a ttar archive into dest, dropping the first path component
// ("fixtures/sys/class/..." -> dest/sys/class/...). Throws std::runtime_error naming the
// archive line on malformed input.
void unpack_ttar(const std::filesystem::path& archive, const std::filesystem::path& dest);

// Copies a fixture tree (or unpacks a .ttar) into a fresh TempDir, so a test can change one
// value (a derived variant) without touching the committed fixture.
void copy_tree(const std::filesystem::path& from, const std::filesystem::path& to);

// Writes text to dest/rel, creating parent directories.
void write_file(const std::filesystem::path& dest, const std::string& rel, const std::string& text);

}  // namespace fabscope::testing
