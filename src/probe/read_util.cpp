#include "probe/read_util.hpp"

#include <unistd.h>

#include <cerrno>

namespace fabscope::probe {

std::string unreadable_reason(const core::Root& root, const std::string& rel) {
  if (::access(root.path(rel).c_str(), R_OK) != 0 && errno == EACCES) return "not readable as this user";
  return "unreadable";
}

void NotedReader::unknown(const std::string& rel, bool required) {
  if (root_.exists(rel)) {
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
  std::string out = "'";
  for (char c : v.substr(0, 40)) {
    if (c == '\n') out += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) out += '?';
    else out += c;
  }
  if (v.size() > 40) out += "...";
  return out + "'";
}

}  // namespace fabscope::probe
