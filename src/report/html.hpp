#pragma once
// Small helpers for writing HTML by hand: escaping and number/size formatting. The page's one
// stylesheet (inline, no web fonts, no network) is here too.
#include <cstdint>
#include <string>
#include <string_view>

namespace fabscope::report {

// Text and attribute escaping (& < > " ').
std::string esc(std::string_view s);

// 8 -> "8 B", 1048576 -> "1 MiB", 3221225472 -> "3 GiB", 1536 -> "1.5 KiB".
std::string format_bytes(std::uint64_t bytes);
// A size in a table, exact and in one form: whole units ("1 KiB", "32 KiB", "2 MiB"), a whole unit
// and the bytes beyond it when they are fewer than 1024 (a tuner table's bucket starts one byte
// past the previous one: "8 KiB + 1 B"), else the byte count ("1,000,000,000 B"). Never rounded, so
// "8 KiB" is 8192 bytes wherever it appears and no column mixes "8.00 KiB" with "512.0 KiB".
std::string format_size(std::uint64_t bytes);
// Fixed decimals without trailing noise: (332.3095, 2) -> "332.31".
std::string fmt(double v, int decimals);
// A number for SVG coordinates: one decimal at most.
std::string coord(double v);
// A count without decimals: 1003 -> "1003".
std::string count_text(double v);
// An element id fragment from a name: letters, digits, '_' and '-' kept, anything else '-'.
std::string slug(std::string_view s);

// The inline stylesheet: colour-blind-safe palette (Okabe-Ito), readable at 360 px wide, and
// print rules (no backgrounds needed to read it, sections kept on one page where they fit).
const char* stylesheet();

// Okabe-Ito colours, in the order series get them (black last).
constexpr int kPaletteSize = 7;
const char* palette(int i);

}  // namespace fabscope::report
