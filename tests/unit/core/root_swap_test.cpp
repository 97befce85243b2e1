// core::Root under another root while a file is swapped for a link out of the tree, over and over
// (what someone who can write into a captured tree can do during `capture --root` run as root):
// a read never returns what lies outside the root. Bounded by a count of reads, not by time.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

#include "core/root.hpp"
#include "support/fixtures.hpp"

using fabscope::core::Root;
using fabscope::testing::TempDir;
using fabscope::testing::write_file;
namespace fs = std::filesystem;

TEST(RootSwap, ReadNeverReturnsAFileOutsideTheRootWhileLinksAreSwappedIn) {
  TempDir t;
  write_file(t.path(), "secret", "SECRET\n");
  write_file(t.path(), "tree/sys/x", "inside\n");
  const fs::path dir = t.path() / "tree/sys";
  std::atomic<bool> stop{false};
  // x is a regular file, then a link to ../../secret, then a file again: each made aside and
  // renamed over x (atomic), as fast as it goes.
  std::thread swapper([&] {
    const std::string x = (dir / "x").string(), l = (dir / "x.l").string(), f = (dir / "x.f").string();
    const std::string target = (t.path() / "secret").string();
    while (!stop) {
      ::unlink(l.c_str());
      if (::symlink(target.c_str(), l.c_str()) == 0) ::rename(l.c_str(), x.c_str());
      const int fd = ::open(f.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd >= 0) {
        (void)!::write(fd, "inside\n", 7);
        ::close(fd);
        ::rename(f.c_str(), x.c_str());
      }
    }
  });
  Root root(t.path() / "tree");
  int outside = 0, inside = 0;
  for (int i = 0; i < 20000; ++i) {
    auto v = root.read("sys/x");
    if (v && *v == "SECRET\n") ++outside;
    if (v && *v == "inside\n") ++inside;
  }
  stop = true;
  swapper.join();
  EXPECT_EQ(outside, 0) << "reads that returned the file outside the root (of 20000; " << inside << " inside)";
}

TEST(OpenBeneath, FollowsLinksInsideAndRefusesEveryWayOut) {
  TempDir t;
  write_file(t.path(), "outside", "x");
  write_file(t.path(), "tree/devices/a/attr", "1\n");
  fs::create_directories(t.path() / "tree/class");
  fs::create_symlink("../devices/a", t.path() / "tree/class/a");
  fs::create_symlink(t.path() / "outside", t.path() / "tree/class/abs");
  fs::create_symlink("../../outside", t.path() / "tree/class/up");
  const int dir = ::open((t.path() / "tree").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(dir, 0);
  for (auto* open : {&fabscope::core::open_beneath, &fabscope::core::open_beneath_by_walk}) {
    auto opens = [&](const char* rel, bool follow) {
      const int fd = open(dir, rel, O_RDONLY, follow);
      if (fd >= 0) ::close(fd);
      return fd >= 0;
    };
    const char* which = open == &fabscope::core::open_beneath ? "open_beneath" : "by walk";
    EXPECT_TRUE(opens("class/a/attr", true)) << which;
    EXPECT_TRUE(opens("/devices/a/attr", false)) << which;
    EXPECT_TRUE(opens("devices/a/../a/./attr", false)) << which;
    EXPECT_FALSE(opens("class/a/attr", false)) << which;  // a link on the way, none allowed
    EXPECT_FALSE(opens("class/abs", true)) << which;      // absolute: leads out
    EXPECT_FALSE(opens("class/up", true)) << which;       // .. above the root
    EXPECT_FALSE(opens("../outside", true)) << which;
    EXPECT_FALSE(opens("devices/../../outside", true)) << which;
    EXPECT_FALSE(opens("devices/missing", true)) << which;
  }
  ::close(dir);
}

// The walk (kernels before openat2) under the same swapping: never opens the file outside.
TEST(RootSwap, TheWalkWithoutOpenat2NeverOpensAFileOutsideWhileLinksAreSwappedIn) {
  TempDir t;
  write_file(t.path(), "secret", "SECRET\n");
  write_file(t.path(), "tree/sys/x", "inside\n");
  const fs::path dir = t.path() / "tree/sys";
  std::atomic<bool> stop{false};
  std::thread swapper([&] {
    const std::string x = (dir / "x").string(), l = (dir / "x.l").string(), f = (dir / "x.f").string();
    const std::string target = (t.path() / "secret").string();
    while (!stop) {
      ::unlink(l.c_str());
      if (::symlink(target.c_str(), l.c_str()) == 0) ::rename(l.c_str(), x.c_str());
      const int fd = ::open(f.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd >= 0) {
        (void)!::write(fd, "inside\n", 7);
        ::close(fd);
        ::rename(f.c_str(), x.c_str());
      }
    }
  });
  const int root = ::open((t.path() / "tree").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(root, 0);
  int outside = 0;
  for (int i = 0; i < 20000; ++i) {
    const int fd = fabscope::core::open_beneath_by_walk(root, "sys/x", O_RDONLY, true);
    if (fd < 0) continue;
    char buf[16] = {};
    if (::read(fd, buf, sizeof buf - 1) > 0 && std::string(buf) == "SECRET\n") ++outside;
    ::close(fd);
  }
  stop = true;
  swapper.join();
  ::close(root);
  EXPECT_EQ(outside, 0);
}
