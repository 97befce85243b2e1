#pragma once
// A POSIX tar archive (pax interchange format, POSIX.1-2008 `pax`), written into memory: the
// capture is bounded (64 MiB by default), so it is built whole, then compressed once. Names or
// link targets longer than the ustar fields carry a pax extended header ('x'), which GNU tar,
// bsdtar and Python's tarfile read. Owner is 0/0 and every entry has the capture's time.
#include <cstdint>
#include <string>
#include <string_view>

namespace fabscope::capture {

class TarWriter {
 public:
  explicit TarWriter(std::int64_t mtime) : mtime_(mtime) {}
  void add_dir(const std::string& path);
  void add_file(const std::string& path, std::string_view content);
  void add_symlink(const std::string& path, const std::string& target);
  // The two zero blocks that end the archive; returns the whole archive.
  std::string finish();

 private:
  void entry(const std::string& path, char type, std::size_t size, unsigned mode, const std::string& link);
  void header(const std::string& name, char type, std::size_t size, unsigned mode, const std::string& link);
  std::int64_t mtime_;
  std::string data_;
};

}  // namespace fabscope::capture
