#pragma once
// Something that takes a while says so on a terminal: a Busy lives around a slow step and, once it
// has lasted 2 seconds, writes one line to stderr ("fabric: sweeping the subnet ... 3 s", or
// "3/10 s" when the step's length is known), rewritten every second and erased when the step
// ends. Where stderr is not a terminal (a pipe, a file, a Slurm log) it writes nothing at all.
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

namespace fabscope::core {

class Busy {
 public:
  // total_s > 0: the step's known length, shown as done/total.
  explicit Busy(std::string what, double total_s = 0);
  // For tests: write to out as a terminal would get it, after delay_s instead of 2 s.
  Busy(std::string what, double total_s, std::FILE* out, double delay_s, bool terminal);
  ~Busy();
  Busy(const Busy&) = delete;
  Busy& operator=(const Busy&) = delete;

 private:
  void run();
  std::string what_;
  double total_s_ = 0, delay_s_ = 2;
  std::FILE* out_ = nullptr;
  bool shown_ = false;
  bool stop_ = false;
  std::mutex m_;
  std::condition_variable cv_;
  std::thread thread_;
};

}  // namespace fabscope::core
