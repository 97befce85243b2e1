#include "capture/tree.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "support/fixtures.hpp"

namespace fs = std::filesystem;

namespace fabscope::capture {

namespace {
Tree capture_of(const fs::path& dir, const std::vector<std::string>& read, const std::vector<std::string>& listed = {},
                TreeLimits limits = {}) {
  core::Root root(dir);
  auto log = std::make_shared<core::AccessLog>();
  root.record_into(log);
  for (const auto& p : read) root.read(p);
  for (const auto& p : listed) root.list(p);
  return collect_tree(root.dir(), *log, limits);
}
}  // namespace

TEST(CaptureTree, ClassLinkKeptAsLinkAndItsTargetRead) {
  testing::TempDir d;
  testing::write_file(d.path(), "sys/devices/pci0000:00/0000:00:03.0/infiniband/mlx5_0/node_guid", "b8ce:f603:00a1:b2c4\n");
  fs::create_directories(d.path() / "sys/class/infiniband");
  fs::create_directory_symlink("../../devices/pci0000:00/0000:00:03.0/infiniband/mlx5_0",
                               d.path() / "sys/class/infiniband/mlx5_0");
  Tree t = capture_of(d.path(), {"sys/class/infiniband/mlx5_0/node_guid"});
  ASSERT_TRUE(t.entries.count("sys/class/infiniband/mlx5_0"));
  EXPECT_EQ(t.entries["sys/class/infiniband/mlx5_0"].type, Entry::Type::Symlink);
  EXPECT_EQ(t.entries["sys/class/infiniband/mlx5_0"].target, "../../devices/pci0000:00/0000:00:03.0/infiniband/mlx5_0");
  const std::string file = "sys/devices/pci0000:00/0000:00:03.0/infiniband/mlx5_0/node_guid";
  ASSERT_TRUE(t.entries.count(file));
  EXPECT_EQ(t.entries[file].content, "b8ce:f603:00a1:b2c4\n");
  EXPECT_TRUE(t.entries.count("sys/devices/pci0000:00"));  // the directories on the way
}

TEST(CaptureTree, LinkOutOfTheRootKeptButNotFollowed) {
  testing::TempDir outside, d;
  testing::write_file(outside.path(), "secret", "x\n");
  fs::create_directories(d.path() / "proc");
  fs::create_symlink(outside.path() / "secret", d.path() / "proc/cmdline");
  fs::create_symlink("../../../../../../../../../../etc/hostname", d.path() / "proc/version");
  Tree t = capture_of(d.path(), {"proc/cmdline", "proc/version"});
  EXPECT_EQ(t.entries["proc/cmdline"].type, Entry::Type::Symlink);
  EXPECT_EQ(t.entries["proc/version"].type, Entry::Type::Symlink);
  EXPECT_EQ(t.skipped.size(), 2u);
  for (const auto& [path, e] : t.entries) EXPECT_NE(e.content, "x\n") << path;
}

TEST(CaptureTree, ListedDirectoryGetsItsNamesNotItsContents) {
  testing::TempDir d;
  testing::write_file(d.path(), "sys/class/net/eth0/mtu", "1500\n");
  testing::write_file(d.path(), "sys/bus/pci/devices/x/msi_irqs/33", "msix\n");
  Tree t = capture_of(d.path(), {}, {"sys/class/net", "sys/bus/pci/devices/x/msi_irqs"});
  EXPECT_EQ(t.entries["sys/class/net/eth0"].type, Entry::Type::Dir);
  EXPECT_FALSE(t.entries.count("sys/class/net/eth0/mtu"));
  EXPECT_TRUE(t.entries["sys/bus/pci/devices/x/msi_irqs/33"].listed_only);
  EXPECT_EQ(t.entries["sys/bus/pci/devices/x/msi_irqs/33"].content, "");
}

TEST(CaptureTree, FifoIsSkippedNeverOpened) {
  testing::TempDir d;
  fs::create_directories(d.path() / "proc");
  ASSERT_EQ(::mkfifo((d.path() / "proc/cmdline").c_str(), 0600), 0);
  core::Root root(d.path());
  auto log = std::make_shared<core::AccessLog>();
  log->add("proc/cmdline", false);
  Tree t = collect_tree(root.dir(), *log, {});
  EXPECT_FALSE(t.entries.count("proc/cmdline"));
  ASSERT_EQ(t.skipped.size(), 1u);
  EXPECT_NE(t.skipped[0].reason.find("not a regular file"), std::string::npos);
}

TEST(CaptureTree, FileCutAtThePerFileCapAndSaidSo) {
  testing::TempDir d;
  testing::write_file(d.path(), "proc/interrupts", std::string(3000, 'x'));
  TreeLimits limits;
  limits.max_file_bytes = 1000;
  Tree t = capture_of(d.path(), {"proc/interrupts"}, {}, limits);
  EXPECT_EQ(t.entries["proc/interrupts"].content.size(), 1000u);
  EXPECT_TRUE(t.entries["proc/interrupts"].truncated);
  ASSERT_EQ(t.skipped.size(), 1u);
  EXPECT_NE(t.skipped[0].reason.find("per-file"), std::string::npos);
}

TEST(CaptureTree, TotalCapLeavesLaterFilesOut) {
  testing::TempDir d;
  testing::write_file(d.path(), "proc/a", std::string(600, 'a'));
  testing::write_file(d.path(), "proc/b", std::string(600, 'b'));
  TreeLimits limits;
  limits.max_total_bytes = 1000;
  Tree t = capture_of(d.path(), {"proc/a", "proc/b"}, {}, limits);
  EXPECT_EQ(t.content_bytes, 1000u);
  EXPECT_EQ(t.entries["proc/b"].content.size(), 400u);
}

TEST(CaptureTree, KernelMemoryAndProcessSecretsAreRefused) {
  EXPECT_TRUE(is_refused_path("proc/kcore"));
  EXPECT_TRUE(is_refused_path("proc/self/environ"));
  EXPECT_TRUE(is_refused_path("proc/1234/mem"));
  EXPECT_TRUE(is_refused_path("sys/kernel/debug/mlx5/x"));
  EXPECT_FALSE(is_refused_path("proc/self/limits"));
  EXPECT_FALSE(is_refused_path("proc/cmdline"));
}

// The walk looks at each component, then the file is opened: a file swapped for a link out of
// the root in between (over and over, as someone writing into the tree can) is never read into
// the capture. Bounded by a count of captures, not by time.
TEST(CaptureTree, AFileSwappedForALinkOutOfTheRootIsNeverRead) {
  testing::TempDir t;
  testing::write_file(t.path(), "secret", "SECRET\n");
  testing::write_file(t.path(), "tree/sys/x", "inside\n");
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
  core::AccessLog log;
  log.add("sys/x", false);
  int outside = 0;
  for (int i = 0; i < 5000; ++i) {
    Tree tree = collect_tree(t.path() / "tree", log, {});
    auto it = tree.entries.find("sys/x");
    if (it != tree.entries.end() && it->second.content == "SECRET\n") ++outside;
  }
  stop = true;
  swapper.join();
  EXPECT_EQ(outside, 0) << "captures that packed the file outside the root (of 5000)";
}

TEST(CaptureTree, EntryCapLeavesLaterPathsOutAndSaysSo) {
  testing::TempDir t;
  for (int i = 0; i < 50; ++i) testing::write_file(t.path(), "sys/class/net/d" + std::to_string(i) + "/x", "1\n");
  TreeLimits limits;
  limits.max_entries = 20;
  Tree tree = capture_of(t.path(), {}, {"sys/class/net"}, limits);
  EXPECT_LE(tree.entries.size(), 20u);
  ASSERT_FALSE(tree.skipped.empty());
  EXPECT_NE(tree.skipped.back().reason.find("entry cap (20"), std::string::npos) << tree.skipped.back().reason;
}

}  // namespace fabscope::capture
