#include "exporter/job_source.hpp"

#include "exporter/job_records.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <optional>
#include <set>

#include "core/error.hpp"
#include "segment.h"

namespace fabscope::exporter {

namespace {

constexpr std::size_t kMaxLoggedSkips = 64;

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// /proc/<pid>/stat read whole (a few hundred bytes); "" when it cannot be.
std::string read_stat(const std::string& proc_dir, int pid) {
  Fd f;
  f.fd = ::open((proc_dir + "/" + std::to_string(pid) + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) return "";
  char buf[1024];
  ssize_t n = ::read(f.fd, buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
}

}  // namespace

char stat_state_if_started(std::string_view stat, std::uint64_t start_ticks) {
  // "pid (comm) S ppid ...": comm may hold spaces and parentheses, the last ')' ends it.
  auto close = stat.rfind(')');
  if (close == std::string_view::npos || close + 3 > stat.size() || stat[close + 1] != ' ') return 0;
  char state = stat[close + 2];
  if (state < 'A' || state > 'z') return 0;
  // fields 3..22 after ") ": the state is field 3, the start time field 22
  std::size_t pos = close + 2;
  for (int field = 3; field < 22; field++) {
    pos = stat.find(' ', pos);
    if (pos == std::string_view::npos) return 0;
    pos++;
  }
  std::uint64_t v = 0;
  std::size_t digits = 0;
  for (; pos < stat.size() && stat[pos] >= '0' && stat[pos] <= '9' && digits < 20; pos++, digits++)
    v = v * 10 + static_cast<std::uint64_t>(stat[pos] - '0');
  if (digits == 0 || digits == 20 || v != start_ticks) return 0;
  return state;
}

JobSource::JobSource(JobSourceOptions opts) : opts_(std::move(opts)) {}

JobScrapeStats JobSource::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

std::vector<JobProcess> JobSource::read(std::chrono::steady_clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<JobProcess> out;
  std::set<std::string> seen;
  DIR* d = ::opendir(opts_.dir.c_str());
  if (d == nullptr) return out;  // no directory: no job on this node
  std::vector<std::string> names;
  while (dirent* de = ::readdir(d)) {
    std::string_view n = de->d_name;
    if (n.substr(0, sizeof FSP_FILE_PREFIX - 1) != FSP_FILE_PREFIX) continue;
    names.emplace_back(n);
  }
  int dfd = ::dirfd(d);
  std::sort(names.begin(), names.end());
  auto skip = [&](const std::string& name, const char* reason, const std::string& why) {
    ++stats_.skipped_total[reason];
    // each file and reason once, at most kMaxLoggedSkips of them in the exporter's life
    if (logged_.size() < kMaxLoggedSkips && logged_.insert(name + "\n" + reason).second) {
      std::cerr << "fabscope exporter: job segment " << opts_.dir << "/" << name << " skipped (" << reason
                << "): " << why << "\n";
    }
  };
  const std::size_t want = job_segment_bytes();
  std::size_t read_count = 0;
  for (const auto& name : names) {
    if (read_count >= opts_.max_segments) {
      ++stats_.skipped_total["limit"];
      continue;
    }
    read_count++;
    seen.insert(name);
    Fd f;
    f.fd = ::openat(dfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (f.fd < 0) {
      if (errno == ELOOP) skip(name, "not_regular", "a symbolic link");
      else if (errno != ENOENT) skip(name, "unreadable", std::strerror(errno));
      continue;
    }
    struct stat st {};
    if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      skip(name, "not_regular", "not a regular file");
      continue;
    }
    if (static_cast<std::size_t>(st.st_size) != want) {
      skip(name, "size", std::to_string(st.st_size) + " bytes, version 1 has " + std::to_string(want));
      continue;
    }
    std::string buf(want, '\0');
    std::size_t got = 0;
    while (got < want) {
      ssize_t r = ::pread(f.fd, buf.data() + got, want - got, static_cast<off_t>(got));
      if (r <= 0) break;
      got += static_cast<std::size_t>(r);
    }
    if (got != want) {
      skip(name, "size", "truncated while read");
      continue;
    }
    JobSegment seg;
    try {
      seg = parse_job_segment(buf, opts_.dir + "/" + name);
    } catch (const Error& e) {
      skip(name, "format", e.what());
      continue;
    }
    if (name != FSP_FILE_PREFIX + std::to_string(seg.pid)) {
      skip(name, "foreign", "names another pid than its header's " + std::to_string(seg.pid));
      continue;
    }
    if (st.st_uid != seg.uid) {
      skip(name, "foreign", "owned by uid " + std::to_string(st.st_uid) + ", the header says " + std::to_string(seg.uid));
      continue;
    }
    // The writer: alive while it holds its shared lock.
    // (a lock that fails for another reason says nothing: taken as alive, never removed for it)
    bool alive = ::flock(f.fd, LOCK_EX | LOCK_NB) != 0;
    if (!alive) ::flock(f.fd, LOCK_UN);
    if (alive) {
      ended_since_.erase(name);
    } else {
      auto [it, fresh] = ended_since_.emplace(name, now);
      if (!fresh && now - it->second >= std::chrono::duration<double>(opts_.grace_seconds)) {
        // past the grace period: gone from the output, and from the directory where we may
        if (::unlinkat(dfd, name.c_str(), 0) == 0) ++stats_.removed_total;
        ++stats_.skipped_total["stale"];
        continue;
      }
    }
    char state = 0;
    if (alive && seg.start_ticks) state = stat_state_if_started(read_stat(opts_.proc_dir, seg.pid), seg.start_ticks);
    out.push_back({std::move(seg), alive, state});
  }
  ::closedir(d);
  for (auto it = ended_since_.begin(); it != ended_since_.end();)
    it = seen.count(it->first) ? std::next(it) : ended_since_.erase(it);
  return out;
}

void JobSource::text(std::string& out) {
  auto procs = read(std::chrono::steady_clock::now());
  job_text(procs, stats(), opts_.max_aggregates, out);
}

job::Snapshot JobSource::records(std::string source) {
  auto procs = read(std::chrono::steady_clock::now());
  const auto now = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  return job_records(procs, now, std::move(source));
}

std::string JobSource::records_json() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return dump_json(job::snapshot_to_json(records(std::string(host) + ":" + opts_.dir)), -1) + "\n";
}

std::vector<MetricFamily> JobSource::families() {
  auto procs = read(std::chrono::steady_clock::now());
  return job_families(procs, stats(), opts_.max_aggregates);
}

}  // namespace fabscope::exporter
