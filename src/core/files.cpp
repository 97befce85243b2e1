#include "core/files.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"

namespace fabscope::core {

std::string read_input(const std::string& path, std::size_t max_bytes) {
  std::error_code ec;
  if (path != "-" && std::filesystem::is_directory(path, ec)) throw Error(path + ": is a directory, not a file");
  std::FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) throw Error(path + ": cannot open: " + std::strerror(errno));
  std::string text;
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    if (text.size() + n > max_bytes) {
      if (f != stdin) std::fclose(f);
      throw Error(path + ": larger than " + std::to_string(max_bytes >> 20) + " MiB; not read");
    }
    text.append(buf, n);
  }
  const bool err = std::ferror(f);
  if (f != stdin) std::fclose(f);
  if (err) throw Error(path + ": read error");
  return text;
}

void write_output(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw Error(path + ": cannot write: " + std::strerror(errno));
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    throw Error(path + ": cannot write: " + std::strerror(e));
  }
}

}  // namespace fabscope::core
