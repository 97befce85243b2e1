// The watchdog fires once past its deadline and never when disarmed; the progress line.
// The deadline rules are checked with chosen instants (Deadline). The thread tests assert
// "never fired" only for a run whose steps the test itself timed inside the deadline: a loaded
// machine may stretch a sleep past it, and then firing was right, so that run is repeated.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
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

using Clock = std::chrono::steady_clock;

TEST(Deadline, ExpiresOnceItsTimeIsReachedWhileArmed) {
  Deadline d;
  Clock::time_point t0{};
  EXPECT_FALSE(d.expired(t0 + std::chrono::hours(1)));  // never armed
  d.arm("step", 1.0, t0);
  EXPECT_FALSE(d.expired(t0 + std::chrono::milliseconds(999)));
  EXPECT_TRUE(d.expired(t0 + std::chrono::milliseconds(1000)));
  EXPECT_DOUBLE_EQ(d.waited_s(t0 + std::chrono::milliseconds(1500)), 1.5);
}

TEST(Deadline, RearmingMovesTheDeadlineFromTheRearm) {
  Deadline d;
  Clock::time_point t0{};
  // 10 steps of 150 ms, each re-arming a 1 s deadline: 1.5 s in all, never expired.
  for (int i = 0; i < 10; ++i) {
    auto t = t0 + std::chrono::milliseconds(150 * i);
    d.arm("batch " + std::to_string(i), 1.0, t);
    EXPECT_FALSE(d.expired(t + std::chrono::milliseconds(149)));
  }
  auto last = t0 + std::chrono::milliseconds(1350);
  EXPECT_FALSE(d.expired(last + std::chrono::milliseconds(999)));
  EXPECT_TRUE(d.expired(last + std::chrono::milliseconds(1000)));
  EXPECT_EQ(d.step, "batch 9");
  // A shorter timeout re-armed later replaces a longer one: the newest deadline rules.
  d.arm("long", 10.0, t0);
  d.arm("short", 0.5, t0 + std::chrono::seconds(1));
  EXPECT_TRUE(d.expired(t0 + std::chrono::milliseconds(1500)));
}

TEST(Deadline, DisarmedNeverExpires) {
  Deadline d;
  Clock::time_point t0{};
  d.arm("step", 1.0, t0);
  d.disarm();
  EXPECT_FALSE(d.expired(t0 + std::chrono::hours(1)));
}

// Runs `steps` on a fresh watchdog, timing each window from just before one arm() to just after
// the next arm() (or the final disarm()): the watchdog can fire only when such a window is longer
// than the timeout. Returns whether every window was shorter, and the number of firings.
struct ThreadRun {
  bool windows_inside = true;
  int calls = 0;
};
static ThreadRun run_steps(int steps, double timeout_s, std::chrono::milliseconds step) {
  std::atomic<int> calls{0};
  ThreadRun r;
  {
    Watchdog w([&](const std::string&, double) { ++calls; });
    auto before = Clock::now();
    for (int i = 0; i < steps; ++i) {
      auto before_next = Clock::now();
      w.arm("batch", timeout_s);
      if (i > 0 && std::chrono::duration<double>(Clock::now() - before).count() >= timeout_s) r.windows_inside = false;
      before = before_next;
      std::this_thread::sleep_for(step);
    }
    w.disarm();
    if (std::chrono::duration<double>(Clock::now() - before).count() >= timeout_s) r.windows_inside = false;
    // Give a wrongly pending deadline time to fire before the verdict.
    std::this_thread::sleep_for(std::chrono::duration<double>(timeout_s * 1.2));
  }
  r.calls = calls;
  return r;
}

// Up to 5 runs: the first whose windows were all inside the deadline decides. A run with a
// stretched window says nothing (firing was allowed), so it is repeated, and its firing is not
// counted against the watchdog.
static void expect_never_fires(int steps, double timeout_s, std::chrono::milliseconds step) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    ThreadRun r = run_steps(steps, timeout_s, step);
    if (!r.windows_inside) continue;
    EXPECT_EQ(r.calls, 0) << "fired although every step re-armed or disarmed within " << timeout_s << " s";
    return;
  }
  GTEST_SKIP() << "the machine stretched a step past " << timeout_s << " s in 5 runs; no verdict";
}

TEST(Watchdog, DisarmedInTimeNeverFires) { expect_never_fires(20, 1.0, std::chrono::milliseconds(2)); }

TEST(Watchdog, RearmingExtendsTheDeadline) {
  // 10 steps of 150 ms: 1.5 s in all, past one 1 s deadline, but each re-arm moves it.
  expect_never_fires(10, 1.0, std::chrono::milliseconds(150));
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
