#pragma once
// One function run every interval on a thread of its own until stopped: the exporter's full
// probe and checks, the fabric collector's collections. The first run waits one interval;
// stop() wakes the thread at once and joins it.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace fabscope::exporter {

class Periodic {
 public:
  Periodic() = default;
  ~Periodic() { stop(); }
  Periodic(const Periodic&) = delete;
  Periodic& operator=(const Periodic&) = delete;

  // Does nothing while a thread runs.
  void start(std::chrono::duration<double> interval, std::function<void()> run) {
    if (thread_.joinable()) return;
    stop_ = false;
    thread_ = std::thread([this, interval, run = std::move(run)] {
      std::unique_lock<std::mutex> lock(mu_);
      while (!cv_.wait_for(lock, interval, [this] { return stop_; })) {
        lock.unlock();
        run();
        lock.lock();
      }
    });
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace fabscope::exporter
