#include "fabric/thresholds.hpp"

#include <cctype>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/strings.hpp"

namespace fabscope::fabric {

std::uint64_t Thresholds::of(Counter c) const {
  auto it = limit.find(c);
  return it == limit.end() ? 0 : it->second;
}

namespace {

// ibqueryerrors reads the value with strtoul(..., 0): decimal, 0x hex or 0 octal. Here the same
// bases, every character checked, no sign, no overflow.
bool parse_value(const std::string& s, std::uint64_t& out) {
  int base = 10;
  std::size_t i = 0;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) base = 16, i = 2;
  else if (s.size() > 1 && s[0] == '0') base = 8, i = 1;
  if (i >= s.size()) return false;
  std::uint64_t v = 0;
  for (; i < s.size(); ++i) {
    const char ch = s[i];
    int d = std::isdigit(static_cast<unsigned char>(ch)) ? ch - '0'
            : std::isxdigit(static_cast<unsigned char>(ch)) ? std::tolower(static_cast<unsigned char>(ch)) - 'a' + 10
                                                            : 99;
    if (d >= base) return false;
    if (v > (~0ull - static_cast<std::uint64_t>(d)) / static_cast<std::uint64_t>(base)) return false;
    v = v * static_cast<std::uint64_t>(base) + static_cast<std::uint64_t>(d);
  }
  out = v;
  return true;
}

std::string shown(const std::string& s) { return "'" + s.substr(0, 60) + (s.size() > 60 ? "...'" : "'"); }

}  // namespace

Thresholds parse_thresholds(const std::string& text, const std::string& origin) {
  Thresholds t;
  std::size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line(core::trim(text.substr(pos, end - pos)));
    pos = end + 1;
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    const std::string at = origin + ":" + std::to_string(line_no) + ": ";
    const auto eq = line.find('=');
    if (eq == std::string::npos) throw Error(at + shown(line) + " is not CounterName=value");
    const std::string name(core::trim(line.substr(0, eq))), value(core::trim(line.substr(eq + 1)));
    const auto c = counter_from_name(name);
    if (!c || *c >= Counter::PortXmitData)
      throw Error(at + shown(name) + " is not an error counter ibqueryerrors judges (SymbolErrorCounter, "
                       "LinkErrorRecoveryCounter, LinkDownedCounter, PortRcvErrors, ..., VL15Dropped, PortXmitWait)");
    std::uint64_t v = 0;
    if (!parse_value(value, v))
      throw Error(at + name + "=" + shown(value) + ": the value is not a non-negative integer (decimal, or 0x hex)");
    t.limit[*c] = v;  // as in ibqueryerrors, a later line wins
  }
  return t;
}

Thresholds load_thresholds(const std::string& path) {
  return parse_thresholds(core::read_input(path, 1u << 20), path);
}

}  // namespace fabscope::fabric
