#include "capture/tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace fs = std::filesystem;

namespace fabscope::capture {

namespace {

std::vector<std::string> split(const std::string& rel) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= rel.size()) {
    std::size_t end = rel.find('/', start);
    if (end == std::string::npos) end = rel.size();
    if (end > start) parts.push_back(rel.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::string join(const std::vector<std::string>& parts, std::size_t from = 0) {
  std::string out;
  for (std::size_t i = from; i < parts.size(); ++i) out += (out.empty() ? "" : "/") + parts[i];
  return out;
}

class Walker {
 public:
  Walker(const fs::path& root, const TreeLimits& limits, Tree& tree) : root_(root), limits_(limits), tree_(tree) {}

  // Walks rel and keeps what it passes; the path it ends at (links resolved), "" when it does not
  // exist inside the root. want_content: read the file at the end.
  std::string walk(const std::string& rel, bool want_content) {
    if (capped_) return "";  // the entry cap was reached: nothing more is kept
    std::vector<std::string> todo = split(rel);
    std::vector<std::string> done;  // physical path so far
    int links = 0;
    std::size_t i = 0;
    while (i < todo.size()) {
      const std::string c = todo[i];
      if (c == ".") {
        ++i;
        continue;
      }
      if (c == "..") {
        if (!done.empty()) done.pop_back();
        ++i;
        continue;
      }
      done.push_back(c);
      const std::string here = join(done);
      struct stat st{};
      if (::lstat(abs(here).c_str(), &st) != 0) return "";
      const bool last = i + 1 == todo.size();
      if (S_ISLNK(st.st_mode)) {
        std::error_code ec;
        const std::string target = fs::read_symlink(abs(here), ec).string();
        if (ec) return "";
        if (!add(here, Entry{Entry::Type::Symlink, "", target})) return "";
        if (++links > 40) return skip(here, "more than 40 links on the way (a loop)");
        done.pop_back();
        std::vector<std::string> next;
        if (!target.empty() && target.front() == '/') {
          // An absolute link: on the live root it stays inside; under another root it leads out.
          if (root_ != "/") return skip(here, "a link that leads out of the root; kept, not followed");
          next = split(target);
          done.clear();
        } else {
          next = split(target);
        }
        // Resolve the target's ".." against the physical path, then go on with the rest.
        std::vector<std::string> rest(todo.begin() + static_cast<std::ptrdiff_t>(i) + 1, todo.end());
        std::vector<std::string> base = done;
        for (const auto& t : next) {
          if (t == "..") {
            if (base.empty()) return skip(here, "a link that leads out of the root; kept, not followed");
            base.pop_back();
          } else if (t != ".") {
            base.push_back(t);
          }
        }
        todo = base;
        todo.insert(todo.end(), rest.begin(), rest.end());
        done.clear();
        i = 0;
        continue;
      }
      if (S_ISDIR(st.st_mode)) {
        if (!add(here, Entry{Entry::Type::Dir})) return "";
        ++i;
        continue;
      }
      if (!last) return "";  // a file in the middle of a path: nothing below it
      if (!S_ISREG(st.st_mode)) return skip(here, "not a regular file (FIFO, device or socket); not read");
      if (want_content) read_file(here);
      return here;
    }
    return join(done);
  }

  void listed(const std::string& rel) {
    if (capped_) return;
    const std::string dir = walk(rel, false);
    if (dir.empty()) return;
    auto it = tree_.entries.find(dir);
    if (it == tree_.entries.end() || it->second.type != Entry::Type::Dir) return;
    // The names come from the directory opened beneath the root with no link followed (a directory
    // swapped for a link since the walk would otherwise list another tree's names).
    std::vector<std::string> names;
    if (const int root_fd = ::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC); root_fd >= 0) {
      const int fd = core::open_beneath(root_fd, dir, O_RDONLY | O_DIRECTORY | O_NONBLOCK, false);
      ::close(root_fd);
      if (DIR* d = fd >= 0 ? ::fdopendir(fd) : nullptr) {
        while (const dirent* e = ::readdir(d)) {
          const std::string n = e->d_name;
          if (n != "." && n != "..") names.push_back(n);
        }
        ::closedir(d);
      } else if (fd >= 0) {
        ::close(fd);
      }
    }
    for (const auto& name : names) {
      const std::string here = dir + "/" + name;
      if (tree_.entries.count(here)) continue;
      if (!add_room()) return;
      struct stat st{};
      if (::lstat(abs(here).c_str(), &st) != 0) continue;
      if (S_ISLNK(st.st_mode)) {
        std::error_code lec;
        auto target = fs::read_symlink(abs(here), lec);
        if (!lec) tree_.entries.emplace(here, Entry{Entry::Type::Symlink, "", target.string()});
      } else if (S_ISDIR(st.st_mode)) {
        tree_.entries.emplace(here, Entry{Entry::Type::Dir});
      } else if (S_ISREG(st.st_mode)) {
        Entry e{Entry::Type::File};
        e.listed_only = true;
        tree_.entries.emplace(here, std::move(e));
      }
    }
  }

 private:
  // Room for one more entry: at most max_entries in all (a tree of 100,000 directories would
  // otherwise cost minutes and half a gigabyte); the first refusal is told once in `skipped`.
  bool add_room() {
    if (tree_.entries.size() < limits_.max_entries) return true;
    if (!capped_) {
      capped_ = true;
      tree_.skipped.push_back({"", "the entry cap (" + std::to_string(limits_.max_entries) +
                                       " files, links and directories) was reached; later paths left out"});
    }
    return false;
  }
  bool add(const std::string& rel, Entry e) {
    if (tree_.entries.count(rel)) return true;
    if (!add_room()) return false;
    tree_.entries.emplace(rel, std::move(e));
    return true;
  }

  std::string abs(const std::string& rel) const { return (root_ / rel).string(); }

  std::string skip(const std::string& rel, const std::string& reason) {
    for (const auto& s : tree_.skipped)
      if (s.path == rel) return "";
    tree_.skipped.push_back({rel, reason});
    return "";
  }

  void read_file(const std::string& rel) {
    auto it = tree_.entries.find(rel);
    if (it != tree_.entries.end() && !it->second.listed_only) return;
    if (is_refused_path(rel)) {
      skip(rel, "never captured (kernel memory, a blocking log, a debug file system or another process)");
      return;
    }
    if (tree_.content_bytes >= limits_.max_total_bytes) {
      skip(rel, "the total size cap was reached");
      return;
    }
    // rel is the physical path the walk found (its links already resolved): opened relative to the
    // root's descriptor with no link followed, so a component swapped for a link since the walk
    // looked (a file for a link out of the root) is refused, not followed out of the root.
    int fd = -1;
    if (const int dir = ::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC); dir >= 0) {
      fd = core::open_beneath(dir, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, false);
      const int e = errno;
      ::close(dir);
      errno = e;
    }
    if (fd < 0) {
      skip(rel, errno == EACCES ? "not readable as this user"
                : errno == ELOOP || errno == EXDEV ? "changed into a link while it was read; not followed"
                                                   : "unreadable");
      return;
    }
    struct stat st{};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      skip(rel, "not a regular file; not read");
      return;
    }
    const std::size_t room = std::min(limits_.max_file_bytes, limits_.max_total_bytes - tree_.content_bytes);
    // In 64 KiB reads: procfs refuses one read larger than the kernel would allocate (sysctl
    // files answer ENOMEM to an 8 MiB read), and memory grows with what the file holds.
    std::string content;
    std::size_t got = 0;
    bool failed = false;
    char buf[65536];
    while (got < room + 1) {
      ssize_t n = ::read(fd, buf, std::min(sizeof buf, room + 1 - got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) failed = true;
      if (n <= 0) break;
      content.append(buf, static_cast<std::size_t>(n));
      got += static_cast<std::size_t>(n);
    }
    ::close(fd);
    // sysfs answers some attributes with an error (EIO, EINVAL, EOPNOTSUPP) when the device
    // cannot say: the probe then finds the file unreadable, and so must the capture's reader.
    if (failed && got == 0) {
      skip(rel, "reading it fails on this node (the probe sees it unreadable)");
      return;
    }
    if (it == tree_.entries.end() && !add_room()) return;
    Entry e{Entry::Type::File};
    e.truncated = got > room;
    content.resize(std::min(got, room));
    if (e.truncated)
      skip(rel, content.size() < limits_.max_file_bytes ? "cut at the total size cap" : "cut at the per-file size cap");
    tree_.content_bytes += content.size();
    e.content = std::move(content);
    tree_.entries.insert_or_assign(rel, std::move(e));
  }

  fs::path root_;
  bool capped_ = false;
  TreeLimits limits_;
  Tree& tree_;
};

}  // namespace

bool is_refused_path(const std::string& rel) {
  static const char* const kRefused[] = {"proc/kcore", "proc/kmsg", "proc/vmcore", "proc/kpagecount",
                                         "proc/kpageflags", "proc/kpagecgroup", "proc/sysrq-trigger",
                                         "sys/kernel/debug", "sys/kernel/tracing", "sys/firmware/efi/efivars",
                                         "dev"};
  for (const char* r : kRefused) {
    const std::string p = r;
    if (rel == p || rel.compare(0, p.size() + 1, p + "/") == 0) return true;
  }
  // proc/<pid>/{mem,environ,pagemap,...}: the probe reads proc/self/limits only.
  const auto parts = split(rel);
  if (parts.size() >= 3 && parts[0] == "proc" && (parts[1] == "self" || parts[1].find_first_not_of("0123456789") == std::string::npos)) {
    static const char* const kProcess[] = {"mem", "environ", "pagemap", "cmdline", "auxv", "stack", "syscall"};
    for (const char* k : kProcess)
      if (parts[2] == k) return true;
  }
  return false;
}

Tree collect_tree(const fs::path& root_dir, const core::AccessLog& log, const TreeLimits& limits) {
  Tree tree;
  Walker w(root_dir, limits, tree);
  for (const auto& p : log.paths()) w.walk(p, true);
  for (const auto& p : log.listed()) w.listed(p);
  return tree;
}

}  // namespace fabscope::capture
