#include "core/root.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <system_error>

#include "core/error.hpp"

namespace fs = std::filesystem;

namespace fabscope::core {

namespace {

std::vector<std::string> components(std::string_view rel) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= rel.size()) {
    std::size_t end = rel.find('/', start);
    if (end == std::string_view::npos) end = rel.size();
    if (end > start) out.emplace_back(rel.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

// open_beneath without openat2: one component at a time, each opened with O_NOFOLLOW relative to
// the directory descriptor before it; a link is read (readlinkat) and its target walked in its
// place; ".." goes back to the descriptor before, never above dir_fd.
int open_beneath_by_walk(int dir_fd, std::string_view rel, int flags, bool follow_links) {
  std::vector<std::string> todo = components(rel);
  std::reverse(todo.begin(), todo.end());  // a stack: the next component at the back
  std::vector<int> dirs;                    // descriptors opened on the way (dir_fd not among them)
  auto close_all = [&] {
    const int e = errno;
    for (int fd : dirs) ::close(fd);
    errno = e;
  };
  auto cur = [&] { return dirs.empty() ? dir_fd : dirs.back(); };
  int links = 0;
  if (todo.empty()) return ::openat(dir_fd, ".", flags | O_CLOEXEC);
  while (!todo.empty()) {
    const std::string c = todo.back();
    todo.pop_back();
    if (c == ".") {
      if (todo.empty()) {
        const int fd = ::openat(cur(), ".", flags | O_CLOEXEC);
        close_all();
        return fd;
      }
      continue;
    }
    if (c == "..") {
      if (dirs.empty()) {
        errno = EXDEV;
        return -1;
      }
      ::close(dirs.back());
      dirs.pop_back();
      if (todo.empty()) {
        const int fd = ::openat(cur(), ".", flags | O_CLOEXEC);
        close_all();
        return fd;
      }
      continue;
    }
    struct stat st{};
    if (::fstatat(cur(), c.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      close_all();
      return -1;
    }
    if (S_ISLNK(st.st_mode)) {
      if (!follow_links || ++links > 40) {
        close_all();
        errno = ELOOP;
        return -1;
      }
      char buf[4096];
      const ssize_t n = ::readlinkat(cur(), c.c_str(), buf, sizeof buf - 1);
      if (n <= 0 || buf[0] == '/') {
        close_all();
        errno = n <= 0 ? ELOOP : EXDEV;
        return -1;
      }
      auto parts = components(std::string_view(buf, static_cast<std::size_t>(n)));
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) todo.push_back(*it);
      continue;
    }
    if (todo.empty()) {
      // The last component, opened without following a link swapped in since the fstatat.
      const int fd = ::openat(cur(), c.c_str(), flags | O_CLOEXEC | O_NOFOLLOW);
      close_all();
      return fd;
    }
    const int fd = ::openat(cur(), c.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      // Swapped for a link since the fstatat: walk it again (as a link, it is read next time).
      if (errno == ELOOP || errno == ENOTDIR) {
        struct stat again{};
        if (follow_links && ::fstatat(cur(), c.c_str(), &again, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(again.st_mode)) {
          todo.push_back(c);
          continue;
        }
      }
      close_all();
      return -1;
    }
    dirs.push_back(fd);
  }
  close_all();
  errno = ENOENT;
  return -1;
}

int open_beneath(int dir_fd, std::string_view rel, int flags, bool follow_links) {
  while (!rel.empty() && rel.front() == '/') rel.remove_prefix(1);
#ifdef SYS_openat2
  static std::atomic<bool> no_openat2{false};  // ENOSYS once: the kernel has none (before 5.6), walk
  if (!no_openat2.load(std::memory_order_relaxed)) {
    open_how how{};
    how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | (follow_links ? 0 : RESOLVE_NO_SYMLINKS);
    const std::string path = rel.empty() ? "." : std::string(rel);
    for (;;) {
      const long fd = ::syscall(SYS_openat2, dir_fd, path.c_str(), &how, sizeof how);
      if (fd >= 0) return static_cast<int>(fd);
      if (errno == EAGAIN || errno == EINTR) continue;  // a rename raced the lookup: try again
      if (errno != ENOSYS && errno != EPERM) return -1;  // EPERM: a seccomp filter that refuses it
      break;
    }
    no_openat2.store(true, std::memory_order_relaxed);
  }
#endif
  return open_beneath_by_walk(dir_fd, rel, flags, follow_links);
}

void AccessLog::add(std::string_view rel, bool listed) {
  while (!rel.empty() && rel.front() == '/') rel.remove_prefix(1);
  while (!rel.empty() && rel.back() == '/') rel.remove_suffix(1);
  if (rel.empty()) return;
  std::lock_guard lock(mutex_);
  if (paths_.size() >= limit_ && !paths_.count(std::string(rel))) {
    ++dropped_;
    return;
  }
  paths_.emplace(rel);
  if (listed) listed_.emplace(rel);
}

void AccessLog::set_limit(std::size_t n) {
  std::lock_guard lock(mutex_);
  limit_ = n;
}

std::size_t AccessLog::dropped() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

std::set<std::string> AccessLog::paths() const {
  std::lock_guard lock(mutex_);
  return paths_;
}

std::set<std::string> AccessLog::listed() const {
  std::lock_guard lock(mutex_);
  return listed_;
}

Root::Root(fs::path dir) : dir_(std::move(dir)) {
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) {
    const std::string name = dir_.filename().string();
    auto ends = [&](const char* suffix) {
      const std::string x = suffix;
      return name.size() > x.size() && name.compare(name.size() - x.size(), x.size(), x) == 0;
    };
    if (fs::is_regular_file(dir_, ec) && (ends(".tar.gz") || ends(".tgz") || ends(".tar"))) {
      std::string top = name;
      for (const char* x : {".tar.gz", ".tgz", ".tar"})
        if (ends(x)) {
          top.resize(name.size() - std::string(x).size());
          break;
        }
      throw Error("root directory '" + dir_.string() + "' is an archive (a fabscope capture?), not a directory: "
                  "unpack it and give the directory inside (tar -xzf '" + dir_.string() + "' -C /tmp; then --root /tmp/" +
                  top + ")");
    }
    if (fs::exists(dir_, ec))
      throw Error("root directory '" + dir_.string() + "' is not a directory");
    throw Error("root directory '" + dir_.string() + "' does not exist");
  }
  if (dir_ != "/") {
    auto canon = fs::weakly_canonical(dir_, ec);
    if (!ec) dir_ = canon;
  }
}

Root Root::from_option(const std::string& flag_value) {
  if (!flag_value.empty()) return Root(flag_value);
  if (const char* env = std::getenv("FABSCOPE_ROOT"); env && *env) return Root(env);
  return Root("/");
}

fs::path Root::path(std::string_view rel) const {
  while (!rel.empty() && rel.front() == '/') rel.remove_prefix(1);
  return dir_ / fs::path(rel);
}

bool Root::exists(std::string_view rel) const {
  note(rel);
  std::error_code ec;
  return fs::exists(path(rel), ec);
}

bool Root::is_dir(std::string_view rel) const {
  note(rel);
  std::error_code ec;
  return fs::is_directory(path(rel), ec);
}

std::optional<std::string> Root::read(std::string_view rel, std::size_t max_bytes) const {
  note(rel);
  // A captured tree is read as if it were "/": a link that leads out of it (to the host's
  // /etc/nccl.conf, say) is not followed. The check is the open itself, relative to the root's
  // descriptor (open_beneath), so a file swapped for such a link after a check cannot be read.
  // Opened without waiting and read only when a regular file: a FIFO or a device planted in a
  // tree would otherwise block the open or the read for ever (and opening a device can act on it).
  struct stat st{};
  int fd = -1;
  const int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
  if (is_live()) {
    if (::stat(path(rel).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    fd = ::open(path(rel).c_str(), flags);
  } else {
    const int dir = ::open(dir_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return std::nullopt;
    fd = open_beneath(dir, rel, flags, true);
    ::close(dir);
  }
  if (fd < 0) return std::nullopt;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return std::nullopt;
  }
  std::string out(max_bytes, '\0');
  std::size_t got = 0;
  bool failed = false;
  while (got < max_bytes) {
    ssize_t n = ::read(fd, out.data() + got, max_bytes - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) failed = true;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (failed) return std::nullopt;
  out.resize(got);
  return out;
}

std::optional<std::string> Root::read_line(std::string_view rel) const {
  auto text = read(rel, 4096);
  if (!text) return std::nullopt;
  std::string_view v = *text;
  if (auto nl = v.find('\n'); nl != std::string_view::npos) v = v.substr(0, nl);
  v = trim(v);
  // A NUL byte or other control characters mean garbage, not a value.
  if (v.empty() || std::any_of(v.begin(), v.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 && c != '\t';
      })) {
    return std::nullopt;
  }
  return std::string(v);
}

std::optional<std::int64_t> Root::read_int(std::string_view rel) const {
  auto line = read_line(rel);
  if (!line) return std::nullopt;
  return parse_int(*line);
}

std::optional<std::uint64_t> Root::read_u64(std::string_view rel) const {
  auto line = read_line(rel);
  if (!line) return std::nullopt;
  return parse_u64(*line);
}

std::optional<std::vector<std::uint8_t>> Root::read_bytes(std::string_view rel,
                                                          std::size_t max_bytes) const {
  auto text = read(rel, max_bytes);
  if (!text) return std::nullopt;
  return std::vector<std::uint8_t>(text->begin(), text->end());
}

std::vector<std::string> Root::list(std::string_view rel) const {
  note(rel, true);
  std::vector<std::string> names;
  if (is_live()) {
    std::error_code ec;
    fs::directory_iterator it(path(rel), ec);
    if (ec) return names;
    for (const auto& entry : it) names.push_back(entry.path().filename().string());
  } else {
    // Under another root, the directory opened is the one inside it (open_beneath), never one a
    // link swapped in leads to.
    const int dir = ::open(dir_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return names;
    const int fd = open_beneath(dir, rel, O_RDONLY | O_DIRECTORY | O_NONBLOCK, true);
    ::close(dir);
    if (fd < 0) return names;
    DIR* d = ::fdopendir(fd);
    if (!d) {
      ::close(fd);
      return names;
    }
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> Root::link_target(std::string_view rel) const {
  note(rel);
  std::error_code ec;
  auto target = fs::read_symlink(path(rel), ec);
  if (ec) return std::nullopt;
  return target.string();
}

std::optional<std::string> Root::resolve(std::string_view rel) const {
  note(rel);
  std::error_code ec;
  auto real = fs::canonical(path(rel), ec);
  if (ec) return std::nullopt;
  auto base = dir_.string();
  auto s = real.string();
  if (base == "/") return s.size() > 1 ? s.substr(1) : std::string();
  if (s.size() < base.size() || s.compare(0, base.size(), base) != 0 ||
      (s.size() > base.size() && s[base.size()] != '/'))
    return std::nullopt;
  s.erase(0, base.size());
  while (!s.empty() && s.front() == '/') s.erase(0, 1);
  return s;
}

}  // namespace fabscope::core
