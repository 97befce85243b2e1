#pragma once
// Per-scrape reads of RDMA port values.
// The layout (devices, ports, the names of their counter files, and the attributes that only
// change with a driver reload: hca_type, fw_ver, link layer, netdev) comes from a full walk with
// probe::collect_rdma, repeated every layout_max_age and whenever a file cannot be opened (a
// device removed, a driver reloaded). Between walks each scrape re-reads state, phys_state, rate,
// counters/* and hw_counters/*, so values are always read at the scrape. phys_state, rate and the
// counter files are kept open and re-read with pread() at offset 0, which makes sysfs call the
// attribute's show() again (Documentation/filesystems/sysfs.rst: "seek to 0 and read again").
// That is one system call per value instead of open/read/close; on a busy host a sysfs call costs
// ~5-10 microseconds and a scrape reads hundreds of values. Descriptors kept are bounded by a
// budget taken from RLIMIT_NOFILE; files beyond it are opened per scrape through their
// directory's descriptor. state is never kept: it is opened afresh through the port directory on
// every scrape, and that open fails once the port is gone, which a kept descriptor would not
// notice on every file system. The MTU of each netdev a port carries is read on every scrape too
// (sys/class/net/*/mtu).
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "core/node_info.hpp"
#include "core/root.hpp"
#include "probe/note.hpp"

namespace fabscope::exporter {

class PortReader {
 public:
  explicit PortReader(core::Root root, std::chrono::milliseconds layout_max_age = std::chrono::seconds(30));
  ~PortReader();
  PortReader(const PortReader&) = delete;
  PortReader& operator=(const PortReader&) = delete;

  // Devices with fresh values, and fresh netdev MTUs (netdev_mtus()). Problems (unreadable or
  // garbage files) are appended to notes, as the probe notes them (probe/note.hpp,
  // probe/port_attrs.hpp).
  const std::vector<RdmaDevice>& read(std::vector<probe::Note>& notes);
  // Values not read at their latest reading, by file (a static empty fw_ver, a phys_state the
  // kernel does not write): a file read only at the walk stays here until the next walk; one
  // re-read on every scrape leaves as soon as it reads well. A device or file that vanished
  // while being read (NoteKind::Removed) is an event, never a value here.
  const std::map<std::string, probe::Note>& unread() const { return unread_; }
  // The problems of the last read() that are news: every Removed note (something vanished while
  // being read), and each value that joined unread() at that read. Values unread at the first
  // read() are unread() from the start, never news; a value that stays unread is news once.
  const std::vector<probe::Note>& news() const { return news_; }
  // Netdev name -> MTU in bytes, for each netdev a port carries, as of the last read().
  const std::map<std::string, int>& netdev_mtus() const { return mtus_; }
  std::size_t layout_walks() const { return walks_; }

 private:
  struct PortFiles {
    std::size_t device = 0, port = 0;  // indices into devices_
    std::string dir;                   // "sys/class/infiniband/mlx5_0/ports/1", for notes
    int dir_fd = -1, counters_fd = -1, hw_fd = -1;
    std::vector<std::string> counters, hw_counters;  // file names
    std::vector<int> counter_fds, hw_fds;            // kept open, -1 when over the budget
    int phys_fd = -1, rate_fd = -1;  // state has none: opened on every scrape (see walk())
  };
  int keep_open(int dir_fd, const std::string& name);
  void walk(std::vector<probe::Note>& notes);
  void close_all();
  void read_ports(std::vector<probe::Note>& notes);
  // false when a file could not be opened (the layout is stale).
  bool read_port(PortFiles& pf, std::vector<probe::Note>& notes);
  void read_mtus(std::vector<probe::Note>& notes);

  core::Root root_;
  std::chrono::milliseconds max_age_;
  std::chrono::steady_clock::time_point walked_at_{};
  bool have_layout_ = false;
  std::size_t walks_ = 0;
  std::size_t fd_budget_ = 0, fds_kept_ = 0;
  std::vector<RdmaDevice> devices_;
  std::vector<PortFiles> ports_;
  std::map<std::string, int> mtus_;
  std::map<std::string, probe::Note> unread_;  // by file
  std::vector<probe::Note> news_;
  std::size_t reads_ = 0;
};

}  // namespace fabscope::exporter
