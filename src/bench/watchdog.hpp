#pragma once
// A deadline on every step that waits for other ranks (communicator setup, each batch of
// collectives). When a step outlives its timeout the callback runs on the watchdog's thread:
// the GPU side aborts its communicators there (ncclCommAbort is the documented way to release
// a rank stuck in a collective) and exits non-zero, so a missing peer never hangs a job.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace fabscope::bench {

// The deadline rules apart from the thread, so they are tested with chosen instants rather than
// with sleeps a loaded machine can stretch: arming (again) replaces the deadline, disarming
// clears it, and it has expired once `now` reaches it while armed.
struct Deadline {
  using Clock = std::chrono::steady_clock;
  bool armed = false;
  std::string step;
  Clock::time_point start, at;

  void arm(const std::string& name, double timeout_s, Clock::time_point now) {
    armed = true;
    step = name;
    start = now;
    at = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  }
  void disarm() { armed = false; }
  bool expired(Clock::time_point now) const { return armed && now >= at; }
  double waited_s(Clock::time_point now) const { return std::chrono::duration<double>(now - start).count(); }
};

class Watchdog {
 public:
  // on_expire(step, seconds waited). It runs at most once.
  explicit Watchdog(std::function<void(const std::string&, double)> on_expire);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void arm(const std::string& step, double timeout_s);  // replaces the current deadline
  void disarm();
  bool fired() const;

 private:
  void loop();
  std::function<void(const std::string&, double)> on_expire_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false, fired_ = false;
  Deadline deadline_;
  std::thread thread_;
};

}  // namespace fabscope::bench
