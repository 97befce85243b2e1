#pragma once
// Text (nccl-tests' columns and summary lines, so existing parsers keep working), CSV.
// JSON is report_json() in results.hpp. The text is streamed: header first, a row per size as
// it completes, the summary at the end.
#include <string>

#include "bench/results.hpp"

namespace fabscope::bench {

std::string text_header(const Report& r);  // settings line, devices, the three column lines
std::string text_row(const Report& r, const SizeResult& s);
std::string text_summary(const Report& r);  // "# Out of bounds values", "# Avg bus bandwidth", verdict
std::string render_text(const Report& r);   // all three

std::string csv_header();
std::string csv_rows(const Report& r, const SizeResult& s);  // one line per placement
std::string render_csv(const Report& r);

// nccl-tests' time column: 7 characters, fewer decimals as the value grows.
std::string format_time_us(double us);
// nccl-tests' number cells: the most decimals (2, 1, 0) that fit in width, else an exponent.
std::string float_cell(double v, int width);

}  // namespace fabscope::bench
