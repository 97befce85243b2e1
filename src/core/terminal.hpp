#pragma once
// How wide human output may be: the terminal's width when stdout is one (at least 60), 100
// columns otherwise (a pipe, a file, a log); wide: no limit but the longest line's own.
#include <cstddef>

namespace fabscope::core {

inline constexpr std::size_t kWideOutput = 100000;
std::size_t output_width(bool wide = false);

}  // namespace fabscope::core
