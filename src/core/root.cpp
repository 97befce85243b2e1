#include "core/root.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <system_error>

#include "core/error.hpp"

namespace fs = std::filesystem;

namespace fabscope::core {

Root::Root(fs::path dir) : dir_(std::move(dir)) {
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) {
    throw Error("root directory '" + dir_.string() + "' does not exist or is not a directory");
  }
  if (dir_ != "/") {
    auto canon = fs::weakly_canonical(dir_, ec);
    if (!ec) dir_ = canon;
  }
}

Root Root::from_option(const std::string& flag_value) {
  if (!flag_value.empty()) return Root(flag_value);
  if (const char* env = std::getenv("FABSCOPE_ROOT"); env && *env) return Root(env);
  return Root("/");
}

fs::path Root::path(std::string_view rel) const {
  while (!rel.empty() && rel.front() == '/') rel.remove_prefix(1);
  return dir_ / fs::path(rel);
}

bool Root::exists(std::string_view rel) const {
  std::error_code ec;
  return fs::exists(path(rel), ec);
}

bool Root::is_dir(std::string_view rel) const {
  std::error_code ec;
  return fs::is_directory(path(rel), ec);
}

std::optional<std::string> Root::read(std::string_view rel, std::size_t max_bytes) const {
  std::ifstream in(path(rel), std::ios::binary);
  if (!in) return std::nullopt;
  std::string out;
  out.resize(max_bytes);
  in.read(out.data(), static_cast<std::streamsize>(max_bytes));
  if (in.bad()) return std::nullopt;
  out.resize(static_cast<std::size_t>(in.gcount()));
  return out;
}

std::optional<std::string> Root::read_line(std::string_view rel) const {
  auto text = read(rel, 4096);
  if (!text) return std::nullopt;
  std::string_view v = *text;
  if (auto nl = v.find('\n'); nl != std::string_view::npos) v = v.substr(0, nl);
  v = trim(v);
  // A NUL byte or other control characters mean garbage, not a value.
  if (v.empty() || std::any_of(v.begin(), v.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 && c != '\t';
      })) {
    return std::nullopt;
  }
  return std::string(v);
}

std::optional<std::int64_t> Root::read_int(std::string_view rel) const {
  auto line = read_line(rel);
  if (!line) return std::nullopt;
  return parse_int(*line);
}

std::optional<std::uint64_t> Root::read_u64(std::string_view rel) const {
  auto line = read_line(rel);
  if (!line) return std::nullopt;
  return parse_u64(*line);
}

std::optional<std::vector<std::uint8_t>> Root::read_bytes(std::string_view rel,
                                                          std::size_t max_bytes) const {
  auto text = read(rel, max_bytes);
  if (!text) return std::nullopt;
  return std::vector<std::uint8_t>(text->begin(), text->end());
}

std::vector<std::string> Root::list(std::string_view rel) const {
  std::vector<std::string> names;
  std::error_code ec;
  fs::directory_iterator it(path(rel), ec);
  if (ec) return names;
  for (const auto& entry : it) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> Root::link_target(std::string_view rel) const {
  std::error_code ec;
  auto target = fs::read_symlink(path(rel), ec);
  if (ec) return std::nullopt;
  return target.string();
}

std::optional<std::string> Root::resolve(std::string_view rel) const {
  std::error_code ec;
  auto real = fs::canonical(path(rel), ec);
  if (ec) return std::nullopt;
  auto base = dir_.string();
  auto s = real.string();
  if (base == "/") return s.size() > 1 ? s.substr(1) : std::string();
  if (s.size() < base.size() || s.compare(0, base.size(), base) != 0) return std::nullopt;
  s.erase(0, base.size());
  while (!s.empty() && s.front() == '/') s.erase(0, 1);
  return s;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::optional<std::int64_t> parse_int(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  int base = 10;
  bool neg = false;
  if (s.front() == '-') {
    neg = true;
    s.remove_prefix(1);
  }
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  if (v > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
  auto r = static_cast<std::int64_t>(v);
  return neg ? -r : r;
}

std::optional<std::uint64_t> parse_u64(std::string_view s) {
  s = trim(s);
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
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
    std::size_t j = i;
    while (j < s.size() && !(s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r')) ++j;
    if (j > i) out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace fabscope::core
