#pragma once
// The "never hang" rule of fabscope rdma: every loop and every wait of a session ticks this
// watchdog when something moves (a completion, a byte, a message) and checks it otherwise;
// no progress for timeout_s throws Failure(rdma.timeout) naming the side and the step.
// Single-threaded by design: the loops poll, so nothing blocks without a deadline.
#include <chrono>
#include <string>

#include "rdma/findings.hpp"

namespace fabscope::rdma {

class Watchdog {
 public:
  using Clock = std::chrono::steady_clock;
  Watchdog(std::string side, double timeout_s) : side_(std::move(side)), timeout_s_(timeout_s) {}

  void begin(const std::string& step) {
    step_ = step;
    progress_.clear();
    last_ = Clock::now();
  }
  void tick() { last_ = Clock::now(); }
  void note(const std::string& progress) { progress_ = progress; }
  // Seconds left before the deadline (>= 0).
  double remaining_s() const {
    double left = timeout_s_ - std::chrono::duration<double>(Clock::now() - last_).count();
    return left > 0 ? left : 0;
  }
  void check() const {
    if (remaining_s() <= 0) throw Failure(timeout(where(), timeout_s_, progress_.empty() ? "nothing moved" : progress_));
  }
  Where where() const { return {side_, step_}; }
  const std::string& side() const { return side_; }
  double timeout_s() const { return timeout_s_; }

 private:
  std::string side_, step_, progress_;
  double timeout_s_;
  Clock::time_point last_ = Clock::now();
};

}  // namespace fabscope::rdma
