#include "bench/progress.hpp"

#include <unistd.h>

#include <algorithm>

namespace fabscope::bench {

std::string progress_line(std::size_t done, std::size_t total, const std::string& what, std::size_t width) {
  const std::size_t bar = 20;
  std::size_t filled = total ? std::min(bar, done * bar / total) : bar;
  std::string out = "[" + std::string(filled, '#') + std::string(bar - filled, '.') + "] ";
  std::string count = std::to_string(done) + "/" + std::to_string(total);
  out += std::string(count.size() < 9 ? 9 - count.size() : 0, ' ') + count + "  " + what;
  if (out.size() > width) out.resize(width);
  return out;
}

Progress::Progress(bool wanted, std::size_t total) : active_(wanted && isatty(STDERR_FILENO)), total_(total) {}

Progress::~Progress() { clear(); }

void Progress::update(std::size_t done, const std::string& what) {
  if (!active_) return;
  std::string line = progress_line(done, total_, what);
  std::fprintf(stderr, "\r%-80s", line.c_str());
  std::fflush(stderr);
}

void Progress::clear() {
  if (!active_) return;
  std::fprintf(stderr, "\r%80s\r", "");
  std::fflush(stderr);
}

}  // namespace fabscope::bench
