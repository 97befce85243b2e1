// The watchdog fires once past its deadline and never when disarmed; the progress line.
// Margins are wide (deadlines of 1 s against steps of at most 150 ms) so a loaded 2-core
// machine cannot stretch a sleep past a deadline.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "bench/progress.hpp"
#include "bench/watchdog.hpp"

using namespace fabscope::bench;

TEST(Watchdog, FiresAfterTheTimeoutNamingTheStep) {
  std::atomic<int> calls{0};
  std::string step;
  double waited = 0;
  Watchdog w([&](const std::string& s, double t) {
    step = s;
    waited = t;
    ++calls;
  });
  w.arm("all_reduce 8 B", 0.05);
  for (int i = 0; i < 2000 && calls == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(step, "all_reduce 8 B");
  EXPECT_GE(waited, 0.05);
  EXPECT_TRUE(w.fired());
}

TEST(Watchdog, DisarmedInTimeNeverFires) {
  std::atomic<int> calls{0};
  Watchdog w([&](const std::string&, double) { ++calls; });
  for (int i = 0; i < 20; ++i) {
    w.arm("step", 1.0);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    w.disarm();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  EXPECT_EQ(calls, 0);
  EXPECT_FALSE(w.fired());
}

TEST(Watchdog, RearmingExtendsTheDeadline) {
  std::atomic<int> calls{0};
  Watchdog w([&](const std::string&, double) { ++calls; });
  // 10 steps of 150 ms: 1.5 s in all, past one 1 s deadline, but each re-arm moves it.
  for (int i = 0; i < 10; ++i) {
    w.arm("batch", 1.0);
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
  }
  w.disarm();
  EXPECT_EQ(calls, 0);
}

TEST(Progress, LineShowsBarCountAndStep) {
  EXPECT_EQ(progress_line(0, 30, "all_reduce 8 B"), "[....................]      0/30  all_reduce 8 B");
  EXPECT_EQ(progress_line(15, 30, "x"), "[##########..........]     15/30  x");
  EXPECT_EQ(progress_line(30, 30, "x").substr(0, 22), "[####################]");
  EXPECT_LE(progress_line(1, 2, std::string(200, 'y')).size(), 80u);
}

TEST(Progress, NotATerminalDrawsNothing) {
  // Under ctest stderr is a pipe or file.
  Progress p(true, 10);
  if (p.active()) GTEST_SKIP() << "stderr is a terminal here";
  EXPECT_FALSE(p.active());
  Progress off(false, 10);
  EXPECT_FALSE(off.active());
}
