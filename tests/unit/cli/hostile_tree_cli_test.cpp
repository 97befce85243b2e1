// A --root tree that a careless or hostile hand left odd files in: every command that reads it
// finishes, says what it did not read, and reads nothing from outside the tree.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "support/cli_run.hpp"
#include "support/fixtures.hpp"

namespace fs = std::filesystem;
using fabscope::testing::quote;
using fabscope::testing::run_fabscope;

namespace {

// A hang is killed after 60 s and reads as exit 137: a failure, never a test that waits for ever.
constexpr const char* kBounded = "timeout -s KILL 60";

class HostileTree : public ::testing::Test {
 protected:
  void SetUp() override {
    fabscope::testing::copy_tree(fabscope::testing::fixture("rxe-vm"), t_.path());
    const fs::path port = t_.path() / "sys/devices/virtual/infiniband/rxe0/ports/1";
    for (const fs::path& p : {port / "state", port / "hw_counters/link_downed"}) {
      fs::remove(p);
      ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0) << p;
    }
    fs::create_directories(t_.path() / "etc");
    ASSERT_EQ(::mkfifo((t_.path() / "etc/nccl.conf").c_str(), 0600), 0);
  }
  std::string root() const { return " --root " + quote(t_.path().string()); }
  fabscope::testing::TempDir t_;
};

void expect_finished(const fabscope::testing::CliResult& r, const std::string& what) {
  EXPECT_NE(r.exit_code, 137) << what << " hung on a FIFO in the tree";
  EXPECT_GE(r.exit_code, 0) << what << ": " << r.out;
  EXPECT_LE(r.exit_code, 2) << what << ": " << r.out;
}

}  // namespace

TEST_F(HostileTree, AFifoInTheTreeHangsNoCommand) {
  const std::string env = std::string(kBounded) + " env -u NCCL_CONF_FILE HOME=/nonexistent";
  for (const std::string cmd : {"probe", "check", "doctor", "env lint", "exporter --once"}) {
    auto r = run_fabscope(cmd + root(), env);
    expect_finished(r, cmd);
  }
}

TEST_F(HostileTree, TheProbeNotesTheFifoAndGoesOn) {
  auto r = run_fabscope("probe --json" + root(), kBounded, false);
  expect_finished(r, "probe --json");
  EXPECT_NE(r.out.find("a FIFO, not a regular file; not read"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"rxe1\""), std::string::npos) << "the other device is still described";
}

// /etc/nccl.conf of the tree is a link to a file outside it: lint reads the tree, not the host.
TEST(HostileTreeLinks, NcclConfLinkingOutOfTheRootIsNotRead) {
  fabscope::testing::TempDir t, outside;
  fabscope::testing::copy_tree(fabscope::testing::fixture("rxe-vm"), t.path());
  fabscope::testing::write_file(outside.path(), "nccl.conf", "NCCL_IB_DISABLE=1\n");
  fs::create_directories(t.path() / "etc");
  fs::create_symlink(outside.path() / "nccl.conf", t.path() / "etc/nccl.conf");
  auto r = run_fabscope("env lint --root " + quote(t.path().string()),
                        std::string(kBounded) + " env -u NCCL_CONF_FILE -u NCCL_IB_DISABLE HOME=/nonexistent");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find("env.ib_disabled_with_rdma"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("/etc/nccl.conf"), std::string::npos) << r.out;
  // The same file inside the tree is read (the test can fail).
  fs::remove(t.path() / "etc/nccl.conf");
  fs::copy_file(outside.path() / "nccl.conf", t.path() / "etc/nccl.conf");
  r = run_fabscope("env lint --root " + quote(t.path().string()),
                   std::string(kBounded) + " env -u NCCL_CONF_FILE -u NCCL_IB_DISABLE HOME=/nonexistent");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("env.ib_disabled_with_rdma"), std::string::npos) << r.out;
}
