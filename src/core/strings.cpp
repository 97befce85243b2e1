#include "core/strings.hpp"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace fabscope::core {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Digits of an unsigned number, decimal or 0x hex, already trimmed and without a sign.
std::optional<std::uint64_t> parse_magnitude(std::string_view s) {
  if (s.empty()) return std::nullopt;
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

std::optional<std::int64_t> parse_int(std::string_view s) {
  s = trim(s);
  const bool neg = !s.empty() && s.front() == '-';
  if (neg) s.remove_prefix(1);
  auto v = parse_magnitude(s);
  if (!v || *v > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
  auto r = static_cast<std::int64_t>(*v);
  return neg ? -r : r;
}

std::optional<std::uint64_t> parse_u64(std::string_view s) { return parse_magnitude(trim(s)); }

std::optional<double> parse_double(std::string_view s) {
  s = trim(s);
  if (s.empty() || s.size() > 64) return std::nullopt;
  std::string tmp(s);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(tmp.c_str(), &end);
  if (errno != 0 || end != tmp.c_str() + tmp.size()) return std::nullopt;
  return v;
}

std::vector<std::string> split(std::string_view s, char sep, bool skip_empty) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    auto pos = s.find(sep, start);
    if (pos == std::string_view::npos) pos = s.size();
    auto piece = s.substr(start, pos - start);
    if (!skip_empty || !piece.empty()) out.emplace_back(piece);
    start = pos + 1;
  }
  return out;
}

std::vector<std::string> split_ws(std::string_view s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_blank(s[i])) ++i;
    std::size_t j = i;
    while (j < s.size() && !is_blank(s[j])) ++j;
    if (j > i) out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::size_t find(std::string_view s, std::string_view needle, std::size_t from) {
  std::size_t k = 0;
  while (k < needle.size() && needle[k] == ' ') ++k;
  if (k == needle.size() || k == 0) return s.find(needle, from);  // memchr for the first byte
  if (from > s.size() || needle.size() > s.size() - from) return std::string_view::npos;
  const char* b = s.data();
  const char* p = b + from + k;
  const char* last = b + s.size() - (needle.size() - k);  // the anchor's last possible place
  while (p <= last) {
    p = static_cast<const char*>(std::memchr(p, needle[k], static_cast<std::size_t>(last - p) + 1));
    if (p == nullptr) return std::string_view::npos;
    if (std::memcmp(p - k, needle.data(), needle.size()) == 0) return static_cast<std::size_t>(p - k - b);
    ++p;
  }
  return std::string_view::npos;
}

bool contains(std::string_view s, std::string_view needle) { return find(s, needle) != std::string_view::npos; }

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  return join(items, sep, items.size());
}

std::string join(const std::vector<std::string>& items, std::string_view sep, std::size_t max_items) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < max_items; ++i) {
    if (i) out += sep;
    out += items[i];
  }
  if (items.size() > max_items)
    out.append(sep).append("... (").append(std::to_string(items.size() - max_items)).append(" more)");
  return out;
}

std::string format_number(double v) {
  char buf[32];
  if (v == static_cast<double>(static_cast<long long>(v)))
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  else
    std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string format_double(const char* printf_format, double v) {
  char buf[64];
  const int n = std::snprintf(buf, sizeof buf, printf_format, v);
  if (n < 0) return "";
  if (static_cast<std::size_t>(n) < sizeof buf) return std::string(buf, static_cast<std::size_t>(n));
  std::string out(static_cast<std::size_t>(n) + 1, '\0');  // "%.0f" of 1e300: 301 characters
  std::snprintf(out.data(), out.size(), printf_format, v);
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  auto cont = [&](std::size_t i) { return i < s.size() && (byte(i) & 0xC0) == 0x80; };
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char b = byte(i);
    if (b < 0x80) {
      out += (b < 0x20 || b == 0x7f) ? '?' : static_cast<char>(b);
      ++i;
      continue;
    }
    // Well-formed UTF-8 only (no overlong form, no surrogate, nothing past U+10FFFF).
    std::size_t len = 0;
    if (b >= 0xC2 && b <= 0xDF) len = 2;
    else if (b >= 0xE0 && b <= 0xEF) len = 3;
    else if (b >= 0xF0 && b <= 0xF4) len = 4;
    bool ok = len > 0;
    for (std::size_t k = 1; ok && k < len; ++k) ok = cont(i + k);
    if (ok && len >= 3) {
      const unsigned char b1 = byte(i + 1);
      ok = !(b == 0xE0 && b1 < 0xA0) && !(b == 0xED && b1 > 0x9F) && !(b == 0xF0 && b1 < 0x90) &&
           !(b == 0xF4 && b1 > 0x8F);
    }
    if (!ok) {
      out += '?';
      ++i;
      continue;
    }
    // U+0080..U+009F: the C1 controls (CSI is U+009B).
    if (len == 2 && b == 0xC2 && byte(i + 1) <= 0x9F) out += '?';
    else out.append(s.substr(i, len));
    i += len;
  }
  return out;
}

std::string printable_lines(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t start = 0;
  while (start <= s.size()) {
    const auto nl = s.find('\n', start);
    out += printable(s.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start));
    if (nl == std::string_view::npos) break;
    out += '\n';
    start = nl + 1;
  }
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

}  // namespace fabscope::core
