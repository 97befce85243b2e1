#include "fabric/umad.hpp"

#ifdef FABSCOPE_UMAD_HEADERS
#include <dlfcn.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "fabric/mad.hpp"

namespace fabscope::fabric {

namespace {

template <typename Fn>
bool bind(void* h, Fn& fn, const char* name) {
  fn = reinterpret_cast<Fn>(dlsym(h, name));
  return fn != nullptr;
}

UmadLib load() {
  UmadLib l;
  void* u = dlopen("libibumad.so.3", RTLD_NOW | RTLD_GLOBAL);
  if (!u)
    throw AccessError(AccessError::Kind::NoLibrary,
                      "no InfiniBand management access on this node (libibumad.so.3 not found: install "
                      "libibumad3, or rdma-core's libibumad package)");
  bool ok = bind(u, l.init, "umad_init") && bind(u, l.get_cas_names, "umad_get_cas_names") &&
            bind(u, l.get_ca, "umad_get_ca") && bind(u, l.release_ca, "umad_release_ca") &&
            bind(u, l.open_port, "umad_open_port") && bind(u, l.close_port, "umad_close_port") &&
            bind(u, l.reg, "umad_register") && bind(u, l.unreg, "umad_unregister") &&
            bind(u, l.send, "umad_send") && bind(u, l.recv, "umad_recv") && bind(u, l.get_fd, "umad_get_fd") &&
            bind(u, l.get_mad, "umad_get_mad") && bind(u, l.size, "umad_size") &&
            bind(u, l.status, "umad_status") && bind(u, l.set_addr, "umad_set_addr");
  if (!ok)
    throw AccessError(AccessError::Kind::NoLibrary,
                      "no InfiniBand management access on this node (libibumad.so.3 lacks a umad_ call: "
                      "rdma-core too old?)");
  if (l.init() < 0) throw AccessError(AccessError::Kind::Failed, "umad_init failed");
  return l;
}

long long now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The umad device file of ca:port, for the permission message (/sys/class/infiniband_mad).
std::string umad_device(const std::string& ca, int port) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/sys/class/infiniband_mad", ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("umad", 0) != 0) continue;
    std::ifstream d(e.path() / "ibdev"), p(e.path() / "port");
    std::string dev;
    int num = 0;
    if (d >> dev && p >> num && dev == ca && num == port) return "/dev/infiniband/" + name;
  }
  return "/dev/infiniband/umad*";
}

}  // namespace

const UmadLib& umad_lib() {
  static const UmadLib l = load();
  return l;
}

LocalPort choose_port(const UmadLib& l, const std::string& want_ca, int want_port) {
  char names[32][UMAD_CA_NAME_LEN];
  int n = l.get_cas_names(names, 32);
  if (n <= 0)
    throw AccessError(AccessError::Kind::NoDevice,
                      "no InfiniBand device on this node (no RDMA device under /sys/class/infiniband)");
  bool found_ca = false, any_ca = false, any_ib = false;
  std::string seen;
  for (int i = 0; i < n; ++i) {
    std::string ca = names[i];
    if (!want_ca.empty() && ca != want_ca) continue;
    found_ca = true;
    umad_ca_t c{};
    if (l.get_ca(ca.c_str(), &c) < 0) continue;  // libibumad names a default device when there is none
    any_ca = true;
    LocalPort pick;
    for (int p = 0; p <= c.numports && p < UMAD_CA_MAX_PORTS; ++p) {
      umad_port_t* up = c.ports[p];
      if (!up) continue;
      if (want_port && up->portnum != want_port) continue;
      // sysfs says "InfiniBand"; libumad2sim (the simulator) says "IB"; "Ethernet" is RoCE.
      bool ib = std::strcmp(up->link_layer, "Ethernet") != 0;
      if (!ib) {
        seen += (seen.empty() ? "" : ", ") + ca + ":" + std::to_string(up->portnum) + " (" + up->link_layer + ")";
        continue;
      }
      any_ib = true;
      if (up->state != 4 && !want_port) continue;  // not Active
      pick = {ca, up->portnum, static_cast<std::uint16_t>(up->base_lid)};
      break;
    }
    l.release_ca(&c);
    if (pick.port) {
      // Can this user open the management device? libibumad reports a failed open as EIO, so
      // the device file is asked first.
      std::string dev = umad_device(pick.ca, pick.port);
      auto denied = [&] {
        return AccessError(AccessError::Kind::NoPermission,
                           "cannot open " + dev + " for " + pick.ca + ":" + std::to_string(pick.port) +
                               ": MAD access needs read/write on the umad device (root, or a udev rule "
                               "granting it to a group this user is in)");
      };
      if (dev.back() != '*' && ::access(dev.c_str(), R_OK | W_OK) != 0 && (errno == EACCES || errno == EPERM))
        throw denied();
      errno = 0;
      int id = l.open_port(pick.ca.c_str(), pick.port);
      if (id < 0) {
        int e = -id;
        if (e == EACCES || e == EPERM || errno == EACCES || errno == EPERM) throw denied();
        throw AccessError(AccessError::Kind::Failed, "cannot open the management port of " + pick.ca + ":" +
                                                         std::to_string(pick.port) + ": " + std::strerror(e));
      }
      l.close_port(id);
      return pick;
    }
  }
  if (!any_ca && (want_ca.empty() || !found_ca))
    throw AccessError(AccessError::Kind::NoDevice,
                      want_ca.empty() ? "no InfiniBand device on this node (no RDMA device under /sys/class/infiniband)"
                                      : "no RDMA device named " + want_ca);
  if (!want_ca.empty() && !found_ca)
    throw AccessError(AccessError::Kind::NoDevice, "no RDMA device named " + want_ca);
  if (!any_ib)
    throw AccessError(AccessError::Kind::NoDevice,
                      "no InfiniBand port on this node" + (seen.empty() ? std::string() : " (" + seen + ")") +
                          ": MAD-based subnet discovery is InfiniBand-only (RoCE fabrics have no subnet manager)");
  throw AccessError(AccessError::Kind::NoDevice,
                    "no Active InfiniBand port" + (want_ca.empty() ? std::string() : " on " + want_ca) +
                        ": the subnet can only be read through a port whose link is up");
}

MadEngine::MadEngine(const UmadLib& l, const LocalPort& p, int timeout_ms, int retries)
    : l_(l), port_(p), timeout_ms_(timeout_ms > 0 ? timeout_ms : 100), retries_(retries < 0 ? 0 : retries) {
  id_ = l_.open_port(p.ca.c_str(), p.port);
  if (id_ < 0)
    throw AccessError(AccessError::Kind::Failed,
                      "cannot open the management port of " + p.ca + ":" + std::to_string(p.port));
  smp_agent_ = l_.reg(id_, mad::SmpDirected, 1, 0, nullptr);
  pma_agent_ = l_.reg(id_, mad::PerfMgt, 1, 0, nullptr);
  fd_ = l_.get_fd(id_);
  if (smp_agent_ < 0 || pma_agent_ < 0 || fd_ < 0) {
    l_.close_port(id_);
    throw AccessError(AccessError::Kind::Failed,
                      "cannot register management agents on " + p.ca + ":" + std::to_string(p.port));
  }
  buf_.resize(l_.size() + mad::kMadSize);
}

MadEngine::~MadEngine() {
  if (id_ >= 0) {
    l_.unreg(id_, smp_agent_);
    l_.unreg(id_, pma_agent_);
    l_.close_port(id_);
  }
}

std::string MadEngine::destination(const MadRequest& r) {
  if (r.dlid) return {'L', static_cast<char>(r.dlid >> 8), static_cast<char>(r.dlid & 0xff)};
  std::string key = "D";
  const int hops = std::min<int>(r.mad[7], 63);
  for (int i = 1; i <= hops; ++i) key += static_cast<char>(r.mad[128 + i]);
  return key;
}

void MadEngine::submit(MadRequest r) {
  std::string dest = destination(r);
  queue_.push(dest, std::move(r));
}

void MadEngine::send(Slot& s, std::uint32_t tid) {
  auto& m = s.req.mad;
  for (int i = 0; i < 4; ++i) m[12 + i] = static_cast<std::uint8_t>(tid >> (24 - 8 * i));
  std::memset(buf_.data(), 0, buf_.size());
  std::memcpy(l_.get_mad(buf_.data()), m.data(), m.size());
  bool smp = m[1] == mad::SmpDirected || m[1] == mad::SmpLid;
  if (smp) l_.set_addr(buf_.data(), s.req.dlid ? s.req.dlid : 0xffff, 0, 0, 0);
  else l_.set_addr(buf_.data(), s.req.dlid, 1, 0, 0x80010000);
  int rc = l_.send(id_, smp ? smp_agent_ : pma_agent_, buf_.data(), static_cast<int>(mad::kMadSize), timeout_ms_, 0);
  if (rc < 0)
    throw Error("sending a MAD on " + port_.ca + ":" + std::to_string(port_.port) +
                " failed: the management device went away (" + std::strerror(rc == -1 ? errno : -rc) + ")");
  ++sent_;
  ++s.attempts;
  s.deadline_ms = now_ms() + timeout_ms_;
}

void MadEngine::failed(Slot s, const std::string& why) {
  ++fails_in_a_row_;
  if (s.req.on_fail) s.req.on_fail(why);
  if (fails_in_a_row_ >= 16) check_local();
}

// After many failures with no reply in between: does the local port still answer? Its own SMA
// always does, so a silent local port means the device (or simulator) is gone.
void MadEngine::check_local() {
  fails_in_a_row_ = -1000000;  // one check at a time; any reply resets the count
  MadRequest r;
  r.mad = mad::smp_dr_get(mad::NodeInfo, 0, 0, {});
  r.on_reply = [](std::span<const std::uint8_t>) {};
  std::string where = port_.ca + ":" + std::to_string(port_.port);
  r.on_fail = [where](const std::string& why) {
    throw Error("the local port " + where + " stopped answering management packets (" + why +
                "): the InfiniBand device or the simulator went away");
  };
  urgent_.push_front(std::move(r));
}

void MadEngine::expire(long long now) {
  std::vector<std::uint32_t> due;
  for (auto& [tid, s] : inflight_)
    if (s.deadline_ms <= now) due.push_back(tid);
  for (auto tid : due) {
    Slot s = std::move(inflight_[tid]);
    inflight_.erase(tid);
    if (s.attempts <= retries_) {
      std::uint32_t t = next_tid_++;
      auto [it, _] = inflight_.emplace(t, std::move(s));
      send(it->second, t);
    } else {
      if (!s.dest.empty()) queue_.done(s.dest);
      ++timed_out_;
      std::string why = "no answer after " + std::to_string(s.attempts) + " tries of " +
                        std::to_string(timeout_ms_) + " ms";
      failed(std::move(s), why);
    }
  }
}

void MadEngine::receive() {
  for (;;) {
    int len = static_cast<int>(mad::kMadSize);
    int rc = l_.recv(id_, buf_.data(), &len, 0);
    if (rc < 0) {
      int e = -rc == ETIMEDOUT || -rc == EWOULDBLOCK || errno == EWOULDBLOCK || errno == EAGAIN ? 0 : 1;
      if (e == 0) return;
      if (-rc == ENOSPC) continue;
      throw Error("receiving MADs on " + port_.ca + ":" + std::to_string(port_.port) +
                  " failed: the management device went away (" + std::strerror(-rc) + ")");
    }
    auto* m = static_cast<const std::uint8_t*>(l_.get_mad(buf_.data()));
    std::span<const std::uint8_t> mad(m, mad::kMadSize);
    auto h = mad::decode_header(mad);
    auto tid = static_cast<std::uint32_t>(h.tid & 0xffffffffu);
    auto it = inflight_.find(tid);
    if (it == inflight_.end()) continue;  // a late answer to a retried request
    if (l_.status(buf_.data()) != 0) continue;  // the kernel's own timeout: ours handles it
    Slot s = std::move(it->second);
    inflight_.erase(it);
    if (!s.dest.empty()) queue_.done(s.dest);
    std::uint16_t status = h.mgmt_class == mad::SmpDirected ? (h.status & 0x7fff) : h.status;
    fails_in_a_row_ = 0;
    if (status != 0) {
      char b[8];
      std::snprintf(b, sizeof b, "0x%04x", status);
      failed(std::move(s), std::string("error status ") + b);
      fails_in_a_row_ = 0;  // an answer all the same: the fabric is there
      continue;
    }
    if (s.req.on_reply) s.req.on_reply(mad);
  }
}

void MadEngine::run(int max_inflight, int max_per_dest) {
  max_inflight = std::clamp(max_inflight, 1, kMaxInflight);
  queue_.set_limit(max_per_dest);  // nothing is outstanding between runs
  while (!urgent_.empty() || !queue_.empty() || !inflight_.empty()) {
    int burst = 0;
    while (static_cast<int>(inflight_.size()) < max_inflight) {
      // Take in what has arrived every few sends: the answers must never pile up behind a burst
      // of requests (a simulator's socket that fills up both ways would block both sides).
      if (++burst % 16 == 0) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, 0) > 0 && (p.revents & POLLIN)) receive();
      }
      Slot s;
      if (!urgent_.empty()) {
        s.req = std::move(urgent_.front());
        urgent_.pop_front();
      } else if (auto next = queue_.next()) {  // the next destination's turn, within its limit
        s.req = std::move(next->value);
        s.dest = std::move(next->dest);
      } else {
        break;  // nothing queued, or every destination with work is at its limit
      }
      std::uint32_t t = next_tid_++;
      auto [it, _] = inflight_.emplace(t, std::move(s));
      send(it->second, t);
    }
    long long now = now_ms(), next = now + timeout_ms_;
    for (auto& [tid, s] : inflight_) next = std::min(next, s.deadline_ms);
    pollfd p{fd_, POLLIN, 0};
    int rc = ::poll(&p, 1, static_cast<int>(std::max(0LL, next - now)));
    if (rc < 0 && errno != EINTR)
      throw Error("waiting for MADs on " + port_.ca + ":" + std::to_string(port_.port) +
                  " failed: " + std::strerror(errno));
    if (rc > 0 && (p.revents & (POLLERR | POLLHUP | POLLNVAL)))
      throw Error("the management device of " + port_.ca + ":" + std::to_string(port_.port) +
                  " went away while waiting for answers");
    if (rc > 0) receive();
    expire(now_ms());
  }
}

}  // namespace fabscope::fabric
#endif
