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
  bool armed_ = false, stop_ = false, fired_ = false;
  std::string step_;
  std::chrono::steady_clock::time_point start_, deadline_;
  std::thread thread_;
};

}  // namespace fabscope::bench
