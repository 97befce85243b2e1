// Kernel collector: proc/modules, cmdline, sysctls and limits of the 2xH200 capture.
#include "probe/kernel.hpp"

#include <gtest/gtest.h>

#include "support/fixtures.hpp"
#include "test_util.hpp"

using namespace fabscope;
using fabscope::testing::fixture;
using fabscope::testing::has_note_containing;
using fabscope::testing::TempDir;
using fabscope::testing::write_file;

TEST(ParseModules, TakesTheFirstFieldOfEachLine) {
  auto mods = probe::parse_modules(
      "nvidia_uvm 1830912 - - Live 0xffffffffc080c000 (O)\nnvidia 14299136 - - Live 0xffffffffc0400000 (O)\n");
  EXPECT_EQ(mods, (std::vector<std::string>{"nvidia", "nvidia_uvm"}));
}

TEST(ParseModules, SkipsGarbageLines) {
  auto mods = probe::parse_modules(std::string("mlx5_ib 1 - - Live\n\x01\x02 x\n\n/etc/passwd 1\n"));
  EXPECT_EQ(mods, (std::vector<std::string>{"mlx5_ib"}));
}

TEST(ParseMemlock, ReadsSoftAndHardBytes) {
  auto lim = probe::parse_memlock(
      "Limit                     Soft Limit           Hard Limit           Units     \n"
      "Max locked memory         8388608              16777216             bytes     \n");
  EXPECT_EQ(lim.soft, 8388608u);
  EXPECT_EQ(lim.hard, 16777216u);
}

TEST(ParseMemlock, UnlimitedIsTheUnlimitedSentinel) {
  auto lim = probe::parse_memlock("Max locked memory         unlimited            unlimited            bytes\n");
  EXPECT_EQ(lim.soft, kUnlimited);
  EXPECT_EQ(lim.hard, kUnlimited);
}

TEST(ParseMemlock, GarbageOrMissingIsUnknown) {
  EXPECT_FALSE(probe::parse_memlock("Max locked memory         lots  unlimited bytes\n").soft);
  EXPECT_FALSE(probe::parse_memlock("Max open files 1024 1024 files\n").hard);
}

TEST(CollectKernel, ReadsTheH200Node) {
  std::vector<std::string> notes;
  auto k = probe::collect_kernel(core::Root(fixture("h200x2-node")), notes);
  EXPECT_EQ(k.release, core::Root(fixture("h200x2-node")).read_line("proc/sys/kernel/osrelease").value());
  EXPECT_EQ(k.modules, (std::vector<std::string>{"nvidia", "nvidia_uvm"}));
  EXPECT_EQ(k.memlock_soft_bytes, kUnlimited);
  EXPECT_TRUE(k.cmdline.find("pci=realloc=off") != std::string::npos);
  EXPECT_TRUE(notes.empty()) << notes.front();
}

TEST(CollectKernel, MultiValueSysctlsAreSpaceSeparated) {
  std::vector<std::string> notes;
  auto k = probe::collect_kernel(core::Root(fixture("h200x2-node")), notes);
  EXPECT_EQ(k.sysctls.at("net.ipv4.tcp_rmem"), "4096 131072 33554432");  // tab-separated in the file
  EXPECT_EQ(k.sysctls.at("kernel.numa_balancing"), "0");
  EXPECT_TRUE(k.sysctls.count("net.ipv4.conf.all.rp_filter"));
}

TEST(CollectKernel, AbsentSysctlIsLeftOut) {
  std::vector<std::string> notes;
  auto k = probe::collect_kernel(core::Root(fixture("h200x2-node")), notes);
  EXPECT_FALSE(k.sysctls.count("vm.nr_hugepages"));  // not in the capture
}

TEST(CollectKernel, PerInterfaceSysctlsOfRdmaNetdevs) {
  TempDir t;
  write_file(t.path(), "proc/sys/net/ipv4/conf/eth0.100/rp_filter", "2\n");
  std::vector<std::string> notes;
  auto k = probe::collect_kernel(core::Root(t.path()), notes, {"eth0.100"});
  EXPECT_EQ(k.sysctls.at("net.ipv4.conf.eth0.100.rp_filter"), "2");
}

TEST(CollectKernel, EmptyRootGivesUnknownsAndNotes) {
  TempDir t;
  std::vector<std::string> notes;
  auto k = probe::collect_kernel(core::Root(t.path()), notes);
  EXPECT_TRUE(k.modules.empty());
  EXPECT_FALSE(k.memlock_soft_bytes);
  EXPECT_TRUE(has_note_containing(notes, "proc/modules"));
  EXPECT_TRUE(has_note_containing(notes, "proc/self/limits"));
}

TEST(CollectKernel, TruncatedLimitsFileIsUnknownWithNote) {
  TempDir t;
  write_file(t.path(), "proc/self/limits", "Limit   Soft Limit   Hard Limit   Units\nMax locked mem");
  std::vector<std::string> notes;
  auto k = probe::collect_kernel(core::Root(t.path()), notes);
  EXPECT_FALSE(k.memlock_hard_bytes);
  EXPECT_TRUE(has_note_containing(notes, "Max locked memory"));
}
