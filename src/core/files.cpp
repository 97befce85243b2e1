#include "core/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"

namespace fabscope::core {

std::string read_input(const std::string& path, std::size_t max_bytes) {
  std::error_code ec;
  if (path != "-" && std::filesystem::is_directory(path, ec)) throw Error(path + ": is a directory, not a file");
  std::FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) throw Error(path + ": cannot open: " + std::strerror(errno));
  std::string text;
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    if (text.size() + n > max_bytes) {
      if (f != stdin) std::fclose(f);
      throw Error(path + ": larger than " + std::to_string(max_bytes >> 20) + " MiB; not read");
    }
    text.append(buf, n);
  }
  const bool err = std::ferror(f);
  if (f != stdin) std::fclose(f);
  if (err) throw Error(path + ": read error");
  return text;
}

namespace {

bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// A FIFO or a character device (a pipe someone reads, /dev/null, /dev/stdout): written in place,
// never renamed over. A FIFO is opened without waiting, so one nobody reads is an error, not a hang.
void write_in_place(const std::string& path, const std::string& text, bool fifo) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY | (fifo ? O_NONBLOCK : 0));
  if (fd < 0) {
    if (fifo && errno == ENXIO) throw Error(path + ": cannot write: a FIFO that nobody reads");
    throw Error(path + ": cannot write: " + std::strerror(errno));
  }
  if (fifo) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  const bool ok = write_all(fd, text);
  const int e = errno;
  ::close(fd);
  if (!ok) throw Error(path + ": cannot write: " + std::strerror(e));
}

}  // namespace

int named_descriptor(const std::string& path) {
  namespace fs = std::filesystem;
  auto fd_of = [](const std::string& p) -> int {
    static const std::string kSelf = "/proc/" + std::to_string(::getpid()) + "/fd/";
    for (const std::string& prefix : {std::string("/dev/fd/"), std::string("/proc/self/fd/"),
                                     std::string("/proc/thread-self/fd/"), kSelf}) {
      if (p.size() > prefix.size() && p.size() <= prefix.size() + 6 && p.compare(0, prefix.size(), prefix) == 0 &&
          p.find_first_not_of("0123456789", prefix.size()) == std::string::npos)
        return std::stoi(p.substr(prefix.size()));
    }
    if (p == "/dev/stdin") return 0;
    if (p == "/dev/stdout") return 1;
    if (p == "/dev/stderr") return 2;
    return -1;
  };
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  if (ec) return -1;
  for (int hops = 0; hops < 40; ++hops) {
    p = p.lexically_normal();
    if (int fd = fd_of(p.string()); fd >= 0) return fd;
    struct stat st{};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return -1;
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) return -1;
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  return -1;
}

bool names_stdout(const std::string& path) {
  if (named_descriptor(path) == 1) return true;
  struct stat a{}, b{};
  return ::stat(path.c_str(), &a) == 0 && ::fstat(1, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

void write_output(const std::string& path, const std::string& text) {
  // A name for an open descriptor (-o /dev/stdout with stdout redirected to a file or a pipe) is
  // written through that descriptor, at its offset: renaming onto it would replace the link
  // (as root, the machine's /dev/stdout) with a plain file.
  if (const int fd = named_descriptor(path); fd >= 0) {
    struct stat fst{};
    if (::fstat(fd, &fst) != 0) throw Error(path + ": cannot write: descriptor " + std::to_string(fd) + " is not open");
    if (S_ISDIR(fst.st_mode)) throw Error(path + ": is a directory, not a file");
    if (!write_all(fd, text)) throw Error(path + ": cannot write: " + std::strerror(errno));
    return;
  }
  struct stat st{};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw Error(path + ": is a directory, not a file");
    if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) return write_in_place(path, text, S_ISFIFO(st.st_mode));
    if (!S_ISREG(st.st_mode))
      throw Error(path + ": cannot write: not a regular file, a FIFO or a character device (" +
                  (S_ISBLK(st.st_mode) ? "a block device" : S_ISSOCK(st.st_mode) ? "a socket" : "another kind") +
                  "); refused");
  }
  // The temporary is created afresh (O_EXCL after removing a stale one), never through a link or
  // onto a FIFO someone left at that name.
  const std::string tmp = path + ".tmp";
  struct stat tst{};
  if (::lstat(tmp.c_str(), &tst) == 0) {
    if (!S_ISREG(tst.st_mode) && !S_ISLNK(tst.st_mode))
      throw Error(path + ": cannot write: " + tmp + " exists and is not a regular file");
    ::unlink(tmp.c_str());
  }
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) throw Error(path + ": cannot write: " + std::strerror(errno));
  bool ok = write_all(fd, text);
  int e = errno;
  if (::close(fd) != 0 && ok) ok = false, e = errno;
  if (ok && std::rename(tmp.c_str(), path.c_str()) != 0) ok = false, e = errno;
  if (!ok) {
    std::remove(tmp.c_str());
    throw Error(path + ": cannot write: " + std::strerror(e));
  }
}

}  // namespace fabscope::core
