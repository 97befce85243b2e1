#pragma once
// Text helpers every module uses: number parsing that never throws, trimming, splitting,
// joining, number formatting and ASCII case mapping. Kernel files, env values and user flags are ASCII; case
// mapping is deliberately byte-wise (no locale).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabscope::core {

// Whole string must be a number (surrounding blanks ok); decimal, or hex with 0x.
std::optional<std::int64_t> parse_int(std::string_view s);
std::optional<std::uint64_t> parse_u64(std::string_view s);
std::optional<double> parse_double(std::string_view s);

// Without leading and trailing blanks (space, tab, CR, LF).
std::string_view trim(std::string_view s);
std::vector<std::string> split(std::string_view s, char sep, bool skip_empty = true);
std::vector<std::string> split_ws(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
// Where needle first occurs in s at or after `from` (npos when it does not; an empty needle is
// found at `from`). memchr for one byte of the needle, then a compare: on the short texts this
// runs on (log lines, sysfs values) it beats glibc's memmem, whose set-up dominates there. The
// byte is the needle's first that is not a space, so " key " needles do not stop at every word.
std::size_t find(std::string_view s, std::string_view needle, std::size_t from = 0);
// Whether needle occurs in s (an empty needle does).
bool contains(std::string_view s, std::string_view needle);

// "a, b, c". With max_items, the items after the first max_items become "... (N more)".
std::string join(const std::vector<std::string>& items, std::string_view sep);
std::string join(const std::vector<std::string>& items, std::string_view sep, std::size_t max_items);

// "100", "2.5", "0.1": whole numbers without decimals, others with one ("100 Gb/s", "16 GT/s").
std::string format_number(double v);

// One double through a printf format with one conversion: format_double("%.2f", 1.0) == "1.00",
// format_double("%+.1f%%", 12.34) == "+12.3%". Never cut, however long the number prints.
std::string format_double(const char* printf_format, double v);

// Text from outside (another machine, a log, a file, a peer) made safe to print on a terminal:
// every control byte (C0, DEL, and the C1 controls U+0080..U+009F that some terminals obey), tab
// and newline included, and every byte that is not part of well-formed UTF-8 becomes '?', so an
// escape sequence (ESC [ ..., BEL, OSC) never reaches the terminal. Other UTF-8 text is kept.
std::string printable(std::string_view s);
// The same for a text of several lines (a command's whole human output): printable line by line,
// the newlines kept.
std::string printable_lines(std::string_view s);

std::string lower(std::string_view s);
std::string upper(std::string_view s);

}  // namespace fabscope::core
