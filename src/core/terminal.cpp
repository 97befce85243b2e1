#include "core/terminal.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>

namespace fabscope::core {

std::size_t output_width(bool wide) {
  if (wide) return kWideOutput;
  struct winsize ws {};
  if (::isatty(STDOUT_FILENO) == 1 && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
    return std::max<std::size_t>(ws.ws_col, 60);
  return 100;
}

}  // namespace fabscope::core
