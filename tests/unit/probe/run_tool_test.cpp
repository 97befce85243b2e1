// run_tool's own PATH lookup: "not installed" told apart from "installed but not executable",
// whatever PATH entries this user cannot search. The lookups run as an unprivileged user (as root
// the test forks and drops to uid/gid 65534 in the child), since root searches every directory.
#include <gtest/gtest.h>
#include <grp.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "probe/run_tool.hpp"
#include "support/fixtures.hpp"

namespace fs = std::filesystem;
using namespace fabscope::probe;

namespace {

const char* status_name(ToolPath::Status s) {
  switch (s) {
    case ToolPath::Status::Found: return "found";
    case ToolPath::Status::NotFound: return "not-found";
    default: return "not-executable";
  }
}
const char* status_name(ToolResult::Status s) {
  switch (s) {
    case ToolResult::Status::Ran: return "ran";
    case ToolResult::Status::NotFound: return "not-found";
    case ToolResult::Status::TimedOut: return "timed-out";
    default: return "failed";
  }
}

// Runs fn as an unprivileged user and returns what it returned (through a pipe when forked).
std::string as_unprivileged(const std::function<std::string()>& fn) {
  if (::geteuid() != 0) return fn();
  int p[2];
  if (::pipe(p) != 0) return "pipe failed";
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(p[0]);
    std::string out;
    if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0)
      out = "could not drop privileges";
    else
      out = fn();
    (void)!::write(p[1], out.data(), out.size());
    ::_exit(0);
  }
  ::close(p[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(p[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  ::close(p[0]);
  int st = 0;
  ::waitpid(pid, &st, 0);
  return out;
}

class RunToolPath : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/fabscope-run-tool-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ::chmod(dir_.c_str(), 0755);
    locked_ = dir_ / "locked";
    real_ = dir_ / "real";
    empty_ = dir_ / "empty";
    for (const auto& d : {locked_, real_, empty_}) fs::create_directory(d);
    ::chmod(real_.c_str(), 0755);
    ::chmod(empty_.c_str(), 0755);
    // The locked directory holds a tool of the same name: had the lookup searched it (as root
    // would), it would have found that one.
    write_tool(locked_ / "fabtool", "echo locked", 0755);
    // Owned by root with 0700 (or by this user with 0000): nobody else may search it.
    ::chmod(locked_.c_str(), ::geteuid() == 0 ? 0700 : 0000);
  }
  void TearDown() override {
    ::chmod(locked_.c_str(), 0755);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  static void write_tool(const fs::path& path, const std::string& body, mode_t mode) {
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    ::chmod(path.c_str(), mode);
  }
  std::string path_of(std::initializer_list<fs::path> dirs) const {
    std::string s;
    for (const auto& d : dirs) s += (s.empty() ? "" : ":") + d.string();
    return s;
  }
  // resolve_tool's verdict and path, then run_tool's status and stdout, as one line.
  std::string lookup(const std::string& path_env) const {
    return as_unprivileged([&] {
      ToolPath t = resolve_tool("fabtool", path_env.c_str());
      ::setenv("PATH", path_env.c_str(), 1);
      ToolResult r = run_tool({"fabtool"}, 10000);
      std::string out = r.out;
      while (!out.empty() && out.back() == '\n') out.pop_back();
      return std::string(status_name(t.status)) + " " + t.path + " | " + status_name(r.status) + " " + out + r.error;
    });
  }
  fs::path dir_, locked_, real_, empty_;
};

}  // namespace

TEST_F(RunToolPath, UnsearchableEntryBeforeTheRealOne_RunsTheRealOne) {
  write_tool(real_ / "fabtool", "echo real", 0755);
  EXPECT_EQ(lookup(path_of({locked_, real_})), "found " + (real_ / "fabtool").string() + " | ran real");
}

TEST_F(RunToolPath, UnsearchableEntryAndNoCandidate_IsNotFoundNotPermissionDenied) {
  std::string got = lookup(path_of({locked_, empty_}));
  EXPECT_EQ(got, "not-found  | not-found fabtool: not found on PATH");
  EXPECT_EQ(got.find("Permission denied"), std::string::npos);
}

TEST_F(RunToolPath, CandidateWithoutExecuteBit_IsNotExecutableNotMissing) {
  write_tool(real_ / "fabtool", "echo real", 0644);
  EXPECT_EQ(lookup(path_of({locked_, real_})),
            "not-executable " + (real_ / "fabtool").string() + " | failed fabtool: " + (real_ / "fabtool").string() +
                " is not executable by this user");
}

TEST_F(RunToolPath, NonExecutableEarlierCandidate_LaterExecutableOneRuns) {
  write_tool(empty_ / "fabtool", "echo first", 0644);
  write_tool(real_ / "fabtool", "echo second", 0755);
  EXPECT_EQ(lookup(path_of({empty_, real_})), "found " + (real_ / "fabtool").string() + " | ran second");
}

TEST_F(RunToolPath, DirectoryOfTheToolsNameIsNotACandidate) {
  fs::create_directory(empty_ / "fabtool");
  ::chmod((empty_ / "fabtool").c_str(), 0755);
  write_tool(real_ / "fabtool", "echo real", 0755);
  EXPECT_EQ(lookup(path_of({empty_, real_})), "found " + (real_ / "fabtool").string() + " | ran real");
}

TEST(RunToolResolve, NameWithSlashIsAPathNotAPathSearch) {
  EXPECT_EQ(resolve_tool("/bin/sh", "/nonexistent").status, ToolPath::Status::Found);
  EXPECT_EQ(resolve_tool("/nonexistent/fabtool", "/bin").status, ToolPath::Status::NotFound);
}

TEST(RunToolResolve, UnsetPathUsesTheCLibrarysDefault) {
  ToolPath t = resolve_tool("sh", nullptr);
  EXPECT_EQ(t.status, ToolPath::Status::Found);
  EXPECT_TRUE(t.path == "/bin/sh" || t.path == "/usr/bin/sh") << t.path;
}

// A tool that times out is stopped with what it started: a grandchild holding the output pipe
// (here `sleep` started in the background by sh) is killed with it. The grandchild's pid is read
// from a file the script writes; its end is waited for by polling its state (at most 10 s).
TEST(RunTool, TimeoutKillsTheToolsWholeProcessGroup) {
  fabscope::testing::TempDir t;
  const std::string pid_file = (t.path() / "grandchild.pid").string();
  auto r = fabscope::probe::run_tool({"sh", "-c", "sleep 1000 & echo $! > '" + pid_file + "'; wait"}, 300, 4096);
  EXPECT_EQ(r.status, fabscope::probe::ToolResult::Status::TimedOut);
  std::ifstream in(pid_file);
  int pid = 0;
  ASSERT_TRUE(in >> pid) << "the script wrote no pid";
  auto running = [&] {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return false;
    const auto close = line.rfind(')');
    return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z' && line[close + 2] != 'X';
  };
  for (int i = 0; i < 200 && running(); ++i) ::usleep(50000);
  const bool still = running();
  if (still) ::kill(pid, SIGKILL);
  EXPECT_FALSE(still) << "the grandchild " << pid << " still ran after the tool timed out";
}
