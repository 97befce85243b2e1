#include "bench/watchdog.hpp"

namespace fabscope::bench {

Watchdog::Watchdog(std::function<void(const std::string&, double)> on_expire)
    : on_expire_(std::move(on_expire)), thread_([this] { loop(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Watchdog::arm(const std::string& step, double timeout_s) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = true;
    step_ = step;
    start_ = std::chrono::steady_clock::now();
    deadline_ = start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                             std::chrono::duration<double>(timeout_s));
  }
  cv_.notify_all();
}

void Watchdog::disarm() {
  std::lock_guard<std::mutex> lock(mu_);
  armed_ = false;
}

bool Watchdog::fired() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fired_;
}

void Watchdog::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (!armed_ || fired_) {
      cv_.wait(lock);
      continue;
    }
    auto deadline = deadline_;
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && armed_ && !stop_ &&
        deadline == deadline_ && std::chrono::steady_clock::now() >= deadline_) {
      fired_ = true;
      std::string step = step_;
      double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
      lock.unlock();
      on_expire_(step, waited);
      lock.lock();
    }
  }
}

}  // namespace fabscope::bench
