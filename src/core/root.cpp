#include "core/root.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <system_error>

#include "core/error.hpp"

namespace fs = std::filesystem;

namespace fabscope::core {

void AccessLog::add(std::string_view rel, bool listed) {
  while (!rel.empty() && rel.front() == '/') rel.remove_prefix(1);
  while (!rel.empty() && rel.back() == '/') rel.remove_suffix(1);
  if (rel.empty()) return;
  std::lock_guard lock(mutex_);
  paths_.emplace(rel);
  if (listed) listed_.emplace(rel);
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
    throw Error("root directory '" + dir_.string() + "' does not exist or is not a directory");
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
  // /etc/nccl.conf, say) is not followed.
  if (!is_live() && !resolve(rel)) return std::nullopt;
  // Opened without waiting and read only when a regular file: a FIFO or a device planted in a
  // tree would otherwise block the open or the read for ever (and opening a device can act on it).
  struct stat st{};
  if (::stat(path(rel).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  const int fd = ::open(path(rel).c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
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
  std::error_code ec;
  fs::directory_iterator it(path(rel), ec);
  if (ec) return names;
  for (const auto& entry : it) names.push_back(entry.path().filename().string());
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
