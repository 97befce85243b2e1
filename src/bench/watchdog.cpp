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
    deadline_.arm(step, timeout_s, Deadline::Clock::now());
  }
  cv_.notify_all();
}

void Watchdog::disarm() {
  std::lock_guard<std::mutex> lock(mu_);
  deadline_.disarm();
}

bool Watchdog::fired() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fired_;
}

void Watchdog::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (!deadline_.armed || fired_) {
      cv_.wait(lock);
      continue;
    }
    // Woken early (a re-arm, a disarm, a spurious wake-up) the state is judged again as it is
    // now: only a deadline that is still armed and has passed fires.
    cv_.wait_until(lock, deadline_.at);
    auto now = Deadline::Clock::now();
    if (!stop_ && !fired_ && deadline_.expired(now)) {
      fired_ = true;
      std::string step = deadline_.step;
      double waited = deadline_.waited_s(now);
      lock.unlock();
      on_expire_(step, waited);
      lock.lock();
    }
  }
}

}  // namespace fabscope::bench
