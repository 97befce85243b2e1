#pragma once
// A one-line progress bar for terminals: drawn on stderr, only when stderr is a terminal and
// only by the rank that prints, so logs and pipes never see it.
#include <cstdio>
#include <string>

namespace fabscope::bench {

// "[#######.............]  7/30  all_reduce 1 MiB in-place" fitted to width columns.
std::string progress_line(std::size_t done, std::size_t total, const std::string& what, std::size_t width = 80);

class Progress {
 public:
  Progress(bool wanted, std::size_t total);  // draws nothing unless wanted and isatty(stderr)
  ~Progress();
  void update(std::size_t done, const std::string& what);
  void clear();
  bool active() const { return active_; }

 private:
  bool active_ = false;
  std::size_t total_ = 0;
};

}  // namespace fabscope::bench
