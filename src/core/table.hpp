#pragma once
// Plain-text tables for human output. Rendered to fit a width (default 100 columns):
// when too wide, the widest shrinkable columns are cut with '~'.
#include <string>
#include <vector>

namespace fabscope::core {

class Table {
 public:
  explicit Table(std::vector<std::string> headers);
  // Right-align this column (numbers).
  Table& align_right(std::size_t column);
  void add(std::vector<std::string> row);
  std::size_t rows() const { return rows_.size(); }
  std::string render(std::size_t max_width = 100) const;

 private:
  std::vector<std::string> headers_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

// Word-wraps text to width, every line prefixed with indent (the first too).
std::string wrap(const std::string& text, std::size_t width, const std::string& indent);

// Human-readable sizes and rates: "1.5 GiB", "400 Gb/s".
std::string format_bytes(double bytes);
std::string format_double(double v, int precision);

}  // namespace fabscope::core
