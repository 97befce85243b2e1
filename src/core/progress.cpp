#include "core/progress.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>

namespace fabscope::core {

Busy::Busy(std::string what, double total_s) : Busy(std::move(what), total_s, stderr, 2, ::isatty(STDERR_FILENO) == 1) {}

Busy::Busy(std::string what, double total_s, std::FILE* out, double delay_s, bool terminal)
    : what_(std::move(what)), total_s_(total_s), delay_s_(delay_s), out_(out) {
  if (terminal && out_) thread_ = std::thread([this] { run(); });
}

Busy::~Busy() {
  {
    std::lock_guard lock(m_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Busy::run() {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  std::unique_lock lock(m_);
  if (cv_.wait_until(lock, t0 + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(delay_s_)),
                     [this] { return stop_; }))
    return;  // done before anyone had to wait
  for (;;) {
    const double s = std::chrono::duration<double>(clock::now() - t0).count();
    const long done = std::lround(std::floor(s));
    const std::string when = total_s_ > 0 ? std::to_string(std::min<long>(done, std::lround(std::ceil(total_s_)))) + "/" +
                                                std::to_string(std::lround(std::ceil(total_s_))) + " s"
                                          : std::to_string(done) + " s";
    std::fprintf(out_, "\r\033[K%s ... %s", what_.c_str(), when.c_str());
    std::fflush(out_);
    shown_ = true;
    if (cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; })) break;
  }
  if (shown_) {
    std::fprintf(out_, "\r\033[K");  // erase the line: what follows starts clean
    std::fflush(out_);
  }
}

}  // namespace fabscope::core
