#include "probe/run_tool.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <cstring>

extern char** environ;

namespace fabscope::probe {

namespace {
// A regular file (following links) that the effective user may execute.
ToolPath::Status candidate(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return ToolPath::Status::NotFound;
  return ::faccessat(AT_FDCWD, path.c_str(), X_OK, AT_EACCESS) == 0 ? ToolPath::Status::Found
                                                                     : ToolPath::Status::NotExecutable;
}
}  // namespace

ToolPath resolve_tool(const std::string& name, const char* path_env) {
  ToolPath r;
  if (name.empty()) return r;
  if (name.find('/') != std::string::npos) {
    r.status = candidate(name);
    if (r.status != ToolPath::Status::NotFound) r.path = name;
    return r;
  }
  const std::string path = path_env ? path_env : "/bin:/usr/bin";
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    start = end + 1;
    // A directory we cannot search, or one that does not exist, is skipped: stat() of the
    // candidate fails the same way (EACCES, ENOENT, ENOTDIR) and the lookup goes on.
    std::string full = (dir.empty() ? std::string(".") : dir) + "/" + name;
    switch (candidate(full)) {
      case ToolPath::Status::Found:
        return {ToolPath::Status::Found, full};
      case ToolPath::Status::NotExecutable:
        if (r.status == ToolPath::Status::NotFound) r = {ToolPath::Status::NotExecutable, full};
        break;
      case ToolPath::Status::NotFound:
        break;
    }
  }
  return r;
}

ToolResult run_tool(const std::vector<std::string>& argv, int timeout_ms, std::size_t max_bytes) {
  ToolResult r;
  if (argv.empty()) {
    r.error = "no command";
    return r;
  }
  const ToolPath tool = resolve_tool(argv[0], ::getenv("PATH"));
  if (tool.status == ToolPath::Status::NotFound) {
    r.status = ToolResult::Status::NotFound;
    r.error = argv[0] + ": not found on PATH";
    return r;
  }
  if (tool.status == ToolPath::Status::NotExecutable) {
    r.error = argv[0] + ": " + tool.path + " is not executable by this user";
    return r;
  }
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return r;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The tool leads a process group of its own, so a timeout stops what it started too (a
  // grandchild holding the pipes would otherwise run on after the tool is killed).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, tool.path.c_str(), &fa, &attr, args.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (rc != 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    r.status = rc == ENOENT ? ToolResult::Status::NotFound : ToolResult::Status::Failed;
    r.error = argv[0] + ": " + std::strerror(rc);
    return r;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  bool timed_out = false;
  char buf[65536];
  int open_fds = 2;
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    int n = ::poll(fds, 2, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      timed_out = n == 0;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      std::string& dst = i == 0 ? r.out : r.err;
      std::size_t cap = i == 0 ? max_bytes : 4096;
      if (dst.size() < cap) dst.append(buf, std::min<std::size_t>(static_cast<std::size_t>(got), cap - dst.size()));
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  if (timed_out) {
    ::kill(-pid, SIGKILL);  // the group: the tool and everything it started
    ::kill(pid, SIGKILL);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    r.status = ToolResult::Status::TimedOut;
    r.error = argv[0] + ": no answer within " + std::to_string(timeout_ms) + " ms";
    return r;
  }
  r.status = ToolResult::Status::Ran;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

}  // namespace fabscope::probe
