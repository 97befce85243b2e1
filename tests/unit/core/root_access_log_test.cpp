#include <gtest/gtest.h>

#include "core/root.hpp"
#include "support/fixtures.hpp"

namespace fabscope::core {

TEST(RootAccessLog, RecordsEveryPathAskedAboutAndListings) {
  testing::TempDir dir;
  testing::write_file(dir.path(), "sys/class/net/eth0/mtu", "1500\n");
  Root root(dir.path());
  auto log = std::make_shared<AccessLog>();
  root.record_into(log);
  Root copy = root;  // a copy (the exporter keeps one) records into the same log
  EXPECT_EQ(copy.read_int("sys/class/net/eth0/mtu"), 1500);
  EXPECT_FALSE(root.exists("/sys/class/net/eth1/"));
  EXPECT_EQ(root.list("sys/class/net").size(), 1u);
  EXPECT_EQ(log->paths(), (std::set<std::string>{"sys/class/net", "sys/class/net/eth0/mtu", "sys/class/net/eth1"}));
  EXPECT_EQ(log->listed(), (std::set<std::string>{"sys/class/net"}));
}

TEST(RootAccessLog, StopsRecordingWhenCleared) {
  testing::TempDir dir;
  Root root(dir.path());
  auto log = std::make_shared<AccessLog>();
  root.record_into(log);
  root.record_into(nullptr);
  root.exists("proc/cmdline");
  EXPECT_TRUE(log->paths().empty());
}

TEST(RootAccessLog, KeepsAtMostItsLimitAndCountsTheRest) {
  AccessLog log;
  log.set_limit(2);
  for (const char* p : {"a", "b", "a", "c", "d", "b"}) log.add(p, false);
  EXPECT_EQ(log.paths(), (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(log.dropped(), 2u);
}

}  // namespace fabscope::core
