#include "bench/sizes.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace fabscope::bench {

std::optional<std::uint64_t> parse_size(std::string_view text) {
  std::size_t i = 0;
  std::uint64_t value = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    std::uint64_t d = static_cast<std::uint64_t>(text[i] - '0');
    if (value > (UINT64_MAX - d) / 10) return std::nullopt;
    value = value * 10 + d;
    ++i;
  }
  if (i == 0) return std::nullopt;
  std::string suffix;
  for (; i < text.size(); ++i) suffix.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(text[i]))));
  int shift = 0;
  if (suffix.empty() || suffix == "B") shift = 0;
  else if (suffix == "K" || suffix == "KB" || suffix == "KIB") shift = 10;
  else if (suffix == "M" || suffix == "MB" || suffix == "MIB") shift = 20;
  else if (suffix == "G" || suffix == "GB" || suffix == "GIB") shift = 30;
  else if (suffix == "T" || suffix == "TB" || suffix == "TIB") shift = 40;
  else return std::nullopt;
  if (shift && value > (UINT64_MAX >> shift)) return std::nullopt;
  return value << shift;
}

std::string size_label(std::uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double v = static_cast<double>(bytes);
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return core::format_double(v == std::floor(v) ? "%.0f " : "%.1f ", v) + units[u];
}

std::vector<std::uint64_t> sweep_sizes(const SweepSpec& spec, std::string_view command) {
  const std::string cmd(command);
  std::vector<std::uint64_t> out;
  if (!spec.list.empty()) {
    out = spec.list;
  } else {
    if (spec.min_bytes > spec.max_bytes)
      throw UsageError(cmd + ": minimum size " + std::to_string(spec.min_bytes) +
                       " B is larger than the maximum " + std::to_string(spec.max_bytes) + " B");
    if (spec.step_bytes == 0 && !(spec.step_factor > 1))
      throw UsageError(cmd + ": the step factor must be larger than 1 (or give --stepbytes)");
    std::uint64_t s = spec.min_bytes;
    while (true) {
      out.push_back(s);
      if (out.size() > kMaxSweepSizes)
        throw UsageError(cmd + ": the sweep has more than " + std::to_string(kMaxSweepSizes) +
                         " sizes; use a larger step");
      std::uint64_t next;
      if (spec.step_bytes > 0) {
        next = s + spec.step_bytes;
      } else {
        double n = std::floor(static_cast<double>(s) * spec.step_factor);
        next = n >= 1.8e19 ? UINT64_MAX : static_cast<std::uint64_t>(n);
        if (next <= s) next = s + 1;  // factor 1.5 from 1 would never move
      }
      if (next > spec.max_bytes || next < s) break;
      s = next;
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (out.size() > kMaxSweepSizes)
    throw UsageError(cmd + ": more than " + std::to_string(kMaxSweepSizes) + " sizes");
  return out;
}

std::vector<std::uint64_t> parse_size_list(std::string_view text, std::string_view command) {
  std::vector<std::uint64_t> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto comma = text.find(',', start);
    auto item = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    auto v = parse_size(item);
    if (!v) throw UsageError(std::string(command) + ": --sizes: '" + std::string(item) + "' is not a size (e.g. 8, 64K, 1M, 4G)");
    out.push_back(*v);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace fabscope::bench
