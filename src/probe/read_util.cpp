#include "probe/read_util.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace fabscope::probe {

std::string refused_reason(const core::Root& root, const std::string& rel) {
  struct stat st{};
  if (::stat(root.path(rel).c_str(), &st) != 0) return "";
  if (!S_ISREG(st.st_mode)) {
    const char* kind = S_ISFIFO(st.st_mode)  ? "a FIFO"
                       : S_ISCHR(st.st_mode) ? "a character device"
                       : S_ISBLK(st.st_mode) ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                       : S_ISDIR(st.st_mode)  ? "a directory"
                                              : "not a file";
    return std::string(kind) + ", not a regular file; not read";
  }
  if (!root.is_live() && !root.resolve(rel)) return "a link that leads out of the root; not read";
  return "";
}

std::string unreadable_reason(const core::Root& root, const std::string& rel) {
  if (auto why = refused_reason(root, rel); !why.empty()) return why;
  if (::access(root.path(rel).c_str(), R_OK) != 0 && errno == EACCES) return "not readable as this user";
  return "unreadable";
}

void NotedReader::unknown(const std::string& rel, bool required) {
  if (root_.exists(rel)) {
    if (auto why = refused_reason(root_, rel); !why.empty()) {
      notes_.add(rel, NoteKind::Unreadable, why);
      return;
    }
    auto raw = root_.read(rel, 64);
    if (raw && core::trim(*raw).empty()) notes_.add(rel, NoteKind::Empty, "empty");
    else
      notes_.add(rel, NoteKind::Unreadable,
                 "unreadable or not a text value" + (raw ? " (" + quote(*raw) + ")" : std::string()));
  } else if (required) {
    notes_.add(rel, NoteKind::Missing, "missing");
  }
}

std::optional<std::string> NotedReader::text(const std::string& rel, bool required) {
  auto v = root_.read_line(rel);
  if (!v) {
    unknown(rel, required);
  } else if (!is_valid_utf8(*v)) {
    notes_.add(rel, NoteKind::NotText, "not text: " + quote(*v));
    v.reset();
  }
  return v;
}

std::optional<std::int64_t> NotedReader::integer(const std::string& rel, bool required) {
  auto line = root_.read_line(rel);
  if (!line) {
    unknown(rel, required);
    return std::nullopt;
  }
  auto v = core::parse_int(*line);
  if (!v) notes_.add(rel, NoteKind::BadValue, "not a number: " + quote(*line));
  return v;
}

bool is_valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    if (len == 2 && c < 0xc2) return false;  // overlong
    for (std::size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return false;
    i += len;
  }
  return true;
}

bool is_pci_address(std::string_view s) {
  // dddd:bb:dd.f
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i == 4 || i == 7 || i == 10) continue;
    char c = s[i];
    bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!hex) return false;
  }
  return true;
}

std::string last_pci_component(std::string_view path) {
  std::string_view found;
  std::size_t start = 0;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    auto part = path.substr(start, end - start);
    if (is_pci_address(part)) found = part;
    start = end + 1;
  }
  return std::string(found);
}

std::string quote(std::string_view v) {
  // core::printable, except that a newline shows as a backslash and n (a value that spans lines).
  const std::string_view shown = v.substr(0, 40);
  std::string out = "'";
  std::size_t start = 0;
  while (true) {
    const auto nl = shown.find('\n', start);
    out += core::printable(shown.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start));
    if (nl == std::string_view::npos) break;
    out += "\\n";
    start = nl + 1;
  }
  if (v.size() > 40) out += "...";
  return out + "'";
}

}  // namespace fabscope::probe
