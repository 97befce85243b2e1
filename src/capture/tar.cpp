#include "capture/tar.hpp"

#include <cstdio>
#include <cstring>

#include "core/error.hpp"

namespace fabscope::capture {

namespace {
constexpr std::size_t kBlock = 512;

void octal(char* field, std::size_t width, std::uint64_t value) {
  // width - 1 octal digits and a NUL, as ustar writes numbers (sizes past 8 GiB never occur:
  // the capture is capped far below).
  for (std::size_t i = width - 1; i-- > 0; value >>= 3) field[i] = static_cast<char>('0' + (value & 7));
  field[width - 1] = '\0';
}

// One pax record: "LEN key=value\n", LEN counting itself.
std::string pax_record(const std::string& key, const std::string& value) {
  const std::size_t body = key.size() + value.size() + 3;  // ' ', '=', '\n'
  std::size_t len = body + 1;
  while (std::to_string(len).size() + body != len) ++len;
  return std::to_string(len) + " " + key + "=" + value + "\n";
}
}  // namespace

void TarWriter::header(const std::string& name, char type, std::size_t size, unsigned mode, const std::string& link) {
  char h[kBlock] = {};
  std::memcpy(h, name.data(), std::min<std::size_t>(name.size(), 100));
  octal(h + 100, 8, mode);
  octal(h + 108, 8, 0);
  octal(h + 116, 8, 0);
  octal(h + 124, 12, size);
  octal(h + 136, 12, static_cast<std::uint64_t>(mtime_ < 0 ? 0 : mtime_));
  std::memset(h + 148, ' ', 8);
  h[156] = type;
  std::memcpy(h + 157, link.data(), std::min<std::size_t>(link.size(), 100));
  std::memcpy(h + 257, "ustar", 6);  // magic with its NUL
  std::memcpy(h + 263, "00", 2);
  std::memcpy(h + 265, "root", 4);
  std::memcpy(h + 297, "root", 4);
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  std::snprintf(h + 148, 7, "%06o", sum);
  h[155] = ' ';
  data_.append(h, kBlock);
}

void TarWriter::entry(const std::string& path, char type, std::size_t size, unsigned mode, const std::string& link) {
  if (path.empty() || path.find('\0') != std::string::npos || link.find('\0') != std::string::npos)
    throw Error("tar: entry name '" + path + "' cannot be written");
  if (path.size() > 100 || link.size() > 100) {
    std::string pax;
    if (path.size() > 100) pax += pax_record("path", path);
    if (link.size() > 100) pax += pax_record("linkpath", link);
    header("PaxHeaders/" + path.substr(path.size() > 80 ? path.size() - 80 : 0), 'x', pax.size(), 0644, "");
    data_ += pax;
    data_.append((kBlock - pax.size() % kBlock) % kBlock, '\0');
  }
  header(path, type, size, mode, link);
}

void TarWriter::add_dir(const std::string& path) { entry(path + "/", '5', 0, 0755, ""); }

void TarWriter::add_file(const std::string& path, std::string_view content) {
  entry(path, '0', content.size(), 0644, "");
  data_.append(content);
  data_.append((kBlock - content.size() % kBlock) % kBlock, '\0');
}

void TarWriter::add_symlink(const std::string& path, const std::string& target) {
  entry(path, '2', 0, 0777, target);
}

std::string TarWriter::finish() {
  data_.append(2 * kBlock, '\0');
  return std::move(data_);
}

}  // namespace fabscope::capture
