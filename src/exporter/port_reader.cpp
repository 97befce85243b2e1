#include "exporter/port_reader.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <set>

#include "probe/port_attrs.hpp"
#include "probe/rdma.hpp"

namespace fabscope::exporter {

namespace {

enum class Read { Ok, Missing, Failed };

// An attribute opened without waiting and kept only when a regular file: a FIFO planted in a
// --root tree would otherwise hang the scrape (sysfs attributes are always regular files).
int open_regular(int dir_fd, const std::string& name) {
  int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return fd;
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    errno = EINVAL;
    return -1;
  }
  return fd;
}

// One sysfs attribute, first line, at most 255 bytes (sysfs attributes are short): through the
// kept descriptor when there is one, else opened relative to its directory.
Read read_attr(int kept_fd, int dir_fd, const std::string& name, std::string& out) {
  char buf[256];
  ssize_t n;
  if (kept_fd >= 0) {
    do n = ::pread(kept_fd, buf, sizeof buf, 0); while (n < 0 && errno == EINTR);
    // ENODEV: the device was unregistered while the file was open.
    if (n < 0) return Read::Failed;
  } else {
    int fd = open_regular(dir_fd, name);
    if (fd < 0) return errno == ENOENT || errno == ENODEV || errno == ENOTDIR ? Read::Missing : Read::Failed;
    do n = ::read(fd, buf, sizeof buf); while (n < 0 && errno == EINTR);
    ::close(fd);
    if (n < 0) return Read::Failed;
  }
  std::string_view v(buf, static_cast<std::size_t>(n));
  v = v.substr(0, v.find('\n'));
  out.assign(v.data(), v.size());
  return Read::Ok;
}

int open_dir(const std::filesystem::path& p) { return ::open(p.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); }

}  // namespace

PortReader::PortReader(core::Root root, std::chrono::milliseconds layout_max_age)
    : root_(std::move(root)), max_age_(layout_max_age) {
  // Keep at most half of the descriptors the process may open, leaving room for connections.
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur > 256)
    fd_budget_ = std::min<rlim_t>((lim.rlim_cur - 256) / 2, 16384);
  else if (lim.rlim_cur == RLIM_INFINITY)
    fd_budget_ = 16384;
}

int PortReader::keep_open(int dir_fd, const std::string& name) {
  if (dir_fd < 0 || fds_kept_ >= fd_budget_) return -1;
  int fd = open_regular(dir_fd, name);
  if (fd >= 0) ++fds_kept_;
  return fd;
}

PortReader::~PortReader() { close_all(); }

void PortReader::close_all() {
  for (auto& p : ports_) {
    for (int fd : {p.dir_fd, p.counters_fd, p.hw_fd, p.phys_fd, p.rate_fd})
      if (fd >= 0) ::close(fd);
    for (const auto* fds : {&p.counter_fds, &p.hw_fds})
      for (int fd : *fds)
        if (fd >= 0) ::close(fd);
  }
  ports_.clear();
  fds_kept_ = 0;
}

void PortReader::walk(std::vector<probe::Note>& notes) {
  close_all();
  probe::RdmaOptions opts;
  opts.gids = false;  // the GID table is configuration, judged by the checks, not a metric
  const std::size_t first = notes.size();
  devices_ = probe::collect_rdma(root_, notes, opts);
  // The walk read every value: what it could not read is what is unread now.
  unread_.clear();
  for (std::size_t i = first; i < notes.size(); ++i)
    if (notes[i].kind != probe::NoteKind::Removed) unread_[notes[i].file] = notes[i];
  ++walks_;
  walked_at_ = std::chrono::steady_clock::now();
  have_layout_ = true;
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    for (std::size_t p = 0; p < devices_[d].ports.size(); ++p) {
      const auto& port = devices_[d].ports[p];
      PortFiles pf;
      pf.device = d;
      pf.port = p;
      pf.dir = "sys/class/infiniband/" + devices_[d].name + "/ports/" + std::to_string(port.port);
      pf.dir_fd = open_dir(root_.path(pf.dir));
      pf.counters_fd = open_dir(root_.path(pf.dir + "/counters"));
      pf.hw_fd = open_dir(root_.path(pf.dir + "/hw_counters"));
      // Only the files that held numbers at the walk: a file left out there (garbage, "N/A")
      // is noted again at the next walk, not on every scrape.
      for (const auto& [name, v] : port.counters) {
        pf.counters.push_back(name);
        pf.counter_fds.push_back(keep_open(pf.counters_fd, name));
      }
      for (const auto& [name, v] : port.hw_counters) {
        pf.hw_counters.push_back(name);
        pf.hw_fds.push_back(keep_open(pf.hw_fd, name));
      }
      // state is opened afresh on every scrape: that open fails once the port's directory is
      // gone, which kept descriptors would not notice on every file system.
      pf.phys_fd = keep_open(pf.dir_fd, "phys_state");
      pf.rate_fd = keep_open(pf.dir_fd, "rate");
      ports_.push_back(std::move(pf));
    }
  }
}

bool PortReader::read_port(PortFiles& pf, std::vector<probe::Note>& notes) {
  RdmaPort& port = devices_[pf.device].ports[pf.port];
  // A value read again leaves unread_; read_ports() puts back the ones noted at this reading.
  probe::NoteSink sink(notes);
  std::string text;
  if (pf.dir_fd < 0) return false;
  // The same parsers as the walk (probe/port_attrs.hpp), so a value is accepted and noted alike.
  auto coded = [&](int kept, const char* file, std::string& name, std::optional<int>& code, auto parse) {
    auto r = read_attr(kept, pf.dir_fd, file, text);
    if (r == Read::Missing && name.empty() && !code) return true;  // not there at the walk either
    if (r != Read::Ok) return false;
    unread_.erase(pf.dir + "/" + file);
    auto st = parse(pf.dir + "/" + file, text, sink);
    name = st ? st->name : std::string();
    code = st ? st->code : std::nullopt;
    return true;
  };
  if (!coded(-1, "state", port.state, port.state_code, probe::parse_port_state)) return false;  // never kept
  if (!coded(pf.phys_fd, "phys_state", port.phys_state, port.phys_state_code, probe::parse_phys_state))
    return false;
  if (port.rate_gbps) {
    if (read_attr(pf.rate_fd, pf.dir_fd, "rate", text) != Read::Ok) return false;
    unread_.erase(pf.dir + "/rate");
    port.rate_gbps = probe::parse_rate(pf.dir + "/rate", text, sink);
    if (port.rate_gbps) port.rate = text;
  }
  auto counters = [&](int dir_fd, const std::vector<std::string>& names, const std::vector<int>& fds,
                      std::map<std::string, std::uint64_t>& out, bool words_to_bytes, const char* sub) {
    if (names.empty()) return true;
    if (dir_fd < 0) return false;
    for (std::size_t i = 0; i < names.size(); ++i) {
      const auto& name = names[i];
      if (read_attr(fds[i], dir_fd, name, text) != Read::Ok) return false;
      const std::string path = pf.dir + "/" + sub + "/" + name;
      unread_.erase(path);
      if (auto v = probe::parse_counter(path, name, text, words_to_bytes, sink))
        out[name] = *v;
      else
        out.erase(name);
    }
    return true;
  };
  return counters(pf.counters_fd, pf.counters, pf.counter_fds, port.counters, true, "counters") &&
         counters(pf.hw_fd, pf.hw_counters, pf.hw_fds, port.hw_counters, false, "hw_counters");
}

void PortReader::read_ports(std::vector<probe::Note>& notes) {
  if (!have_layout_ || std::chrono::steady_clock::now() - walked_at_ >= max_age_) return walk(notes);
  for (auto& pf : ports_) {
    std::vector<probe::Note> fresh;
    const bool ok = read_port(pf, fresh);
    for (auto& n : fresh) {
      unread_[n.file] = n;
      notes.push_back(std::move(n));
    }
    if (!ok) {
      // A file of the layout is gone: a device was removed or its driver reloaded mid-scrape.
      notes.push_back({pf.dir, probe::NoteKind::Removed, "vanished during the scrape, ports walked again"});
      return walk(notes);
    }
  }
}

void PortReader::read_mtus(std::vector<probe::Note>& notes) {
  mtus_.clear();
  for (const auto& d : devices_)
    for (const auto& p : d.ports) {
      if (p.netdev.empty() || mtus_.count(p.netdev)) continue;
      const std::string file = "sys/class/net/" + p.netdev + "/mtu";
      auto v = root_.read_int(file);
      unread_.erase(file);
      if (v && *v > 0 && *v < (1 << 20)) {
        mtus_[p.netdev] = static_cast<int>(*v);
      } else if (root_.exists(file)) {
        notes.push_back({file, probe::NoteKind::BadValue, "not an MTU"});
        unread_[file] = notes.back();
      }
    }
}

const std::vector<RdmaDevice>& PortReader::read(std::vector<probe::Note>& notes) {
  std::set<std::string> before;
  for (const auto& [file, n] : unread_) before.insert(file);
  const std::size_t first = notes.size();
  read_ports(notes);
  read_mtus(notes);
  news_.clear();
  for (std::size_t i = first; i < notes.size(); ++i)
    if (notes[i].kind == probe::NoteKind::Removed) news_.push_back(notes[i]);
  if (reads_++ > 0)
    for (const auto& [file, n] : unread_)
      if (!before.count(file)) news_.push_back(n);
  return devices_;
}

}  // namespace fabscope::exporter
