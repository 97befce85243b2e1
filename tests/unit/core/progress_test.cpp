// A slow step says so on a terminal only, after its delay, and erases its line when done.
#include "core/progress.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

namespace {

std::string contents(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  char buf[256];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  return s;
}

TEST(Busy, ATerminalSeesTheStepAndItsLineIsErased) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    fabscope::core::Busy b("fabric: sweeping", 10, f, 0.05, true);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  const auto s = contents(f);
  EXPECT_NE(s.find("\r\033[Kfabric: sweeping ... 0/10 s"), std::string::npos) << s;
  EXPECT_EQ(s.substr(s.size() - 4), "\r\033[K") << s;
  std::fclose(f);
}

TEST(Busy, NothingWhenNotATerminalOrWhenQuick) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    fabscope::core::Busy piped("x", 0, f, 0.01, false);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  { fabscope::core::Busy quick("y", 0, f, 5, true); }  // over long before its delay
  EXPECT_EQ(contents(f), "");
  std::fclose(f);
}

}  // namespace
