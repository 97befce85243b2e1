#include "core/table.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <sstream>

#include "core/strings.hpp"

namespace fabscope::core {

namespace {
// Display width in columns, counting each UTF-8 code point once.
std::size_t display_width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}
std::string cut(const std::string& s, std::size_t width) {
  if (display_width(s) <= width) return s;
  if (width == 0) return "";
  std::string out;
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size() && n < width - 1; ++i) {
    out += s[i];
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      // finish multibyte sequence
      while (i + 1 < s.size() && (static_cast<unsigned char>(s[i + 1]) & 0xC0) == 0x80) out += s[++i];
      ++n;
    }
  }
  return out + "~";
}
}  // namespace

Table::Table(std::vector<std::string> headers)
    : headers_(std::move(headers)), right_(headers_.size(), false) {}

Table& Table::align_right(std::size_t column) {
  if (column < right_.size()) right_[column] = true;
  return *this;
}

void Table::add(std::vector<std::string> row) {
  row.resize(headers_.size());
  // Cells quote other machines, logs and files: no escape sequence reaches the terminal.
  for (auto& cell : row) cell = printable(cell);
  rows_.push_back(std::move(row));
}

std::string Table::render(std::size_t max_width) const {
  const std::size_t n = headers_.size();
  std::vector<std::size_t> w(n, 0);
  for (std::size_t c = 0; c < n; ++c) {
    w[c] = display_width(headers_[c]);
    for (const auto& r : rows_) w[c] = std::max(w[c], display_width(r[c]));
  }
  const std::size_t gaps = n ? 2 * (n - 1) : 0;
  auto total = [&] { return std::accumulate(w.begin(), w.end(), std::size_t{0}) + gaps; };
  while (total() > max_width) {
    auto it = std::max_element(w.begin(), w.end());
    if (*it <= 6) break;
    --*it;
  }
  std::ostringstream os;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t c = 0; c < n; ++c) {
      std::string cell = cut(cells[c], w[c]);
      std::string pad(w[c] - display_width(cell), ' ');
      out += right_[c] ? pad + cell : cell + (c + 1 < n ? pad : "");
      if (c + 1 < n) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    os << out << "\n";
  };
  line(headers_);
  for (const auto& r : rows_) line(r);
  return os.str();
}

std::string wrap(const std::string& text, std::size_t width, const std::string& indent) {
  std::ostringstream os;
  std::istringstream words(text);
  std::string word, cur = indent;
  bool empty = true;
  while (words >> word) {
    word = printable(word);
    if (!empty && cur.size() + 1 + word.size() > width) {
      os << cur << "\n";
      cur = indent;
      empty = true;
    }
    if (!empty) cur += ' ';
    cur += word;
    empty = false;
  }
  if (!empty) os << cur << "\n";
  return os.str();
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

std::string format_double(double v, int precision) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", precision, v);
  return buf;
}

}  // namespace fabscope::core
