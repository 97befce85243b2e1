#pragma once
// The verbs side of a session: protection domain, one registered buffer, completion queues and
// the queue pairs (connected through RDMA CM or from QP numbers exchanged over the control
// connection), and the measurement loops. Every wait polls under the session's Watchdog.
// Internal to fabscope_rdma (session.cpp drives it).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "rdma/control.hpp"
#include "rdma/types.hpp"
#include "rdma/watchdog.hpp"

namespace fabscope::rdma {

struct QpAddr {  // --oob tcp: what the peer needs to move our QP to RTR
  std::uint32_t qpn = 0, psn = 0;
  std::string gid;
  std::uint32_t lid = 0;
};
void to_json(json& j, const QpAddr& v);
void from_json(const json& j, QpAddr& v);

struct BufKey {  // where the peer may read and write: per QP an inbox then an outbox
  std::uint64_t addr = 0;
  std::uint32_t rkey = 0;
  std::uint64_t stride = 0;  // bytes from one QP's region to the next
};
void to_json(json& j, const BufKey& v);
void from_json(const json& j, BufKey& v);

// Bytes of locked memory a run of opts needs on each side.
std::uint64_t buffer_bytes(const Options& opts);
// Whether the kernel will let this process pin `need` bytes: RLIMIT_MEMLOCK (soft) or
// CAP_IPC_LOCK. Fills limit with the soft limit (UINT64_MAX = unlimited).
bool memlock_allows(std::uint64_t need, std::uint64_t& limit);

class Engine {
 public:
  // client: true for the side that initiates (the client of the session).
  Engine(const Options& opts, Endpoint& local, Watchdog& wd, bool client);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // --oob tcp: open the device, create everything, QPs in INIT.
  void open_device();
  std::vector<QpAddr> qp_addrs() const;
  void connect_qps(const std::vector<QpAddr>& remote, int path_mtu_bytes, const Endpoint& remote_ep);

  // RDMA CM. Server: listen before the welcome, accept opts.qps connections after it.
  void cm_listen(const std::string& address, int port);
  void cm_accept();
  // Client: one connection per QP to address:port, in order.
  void cm_connect(const std::string& address, int port);

  // The control connection, polled while waiting for RDMA CM events so that a failure the
  // peer reports ends the wait at once.
  void set_control(Control* ctl);

  BufKey buf_key() const;
  void set_remote(const BufKey& k) { remote_ = k; }

  // Before each size (both sides, before "ready"): clear inboxes, fill outboxes with the
  // size's pattern, post receives for SEND.
  void prepare(std::uint64_t size);
  // The measurement of one size. Sends this side's {"done": ...} and returns with the peer's
  // done message in peer_done.
  SizeResult run_size(std::uint64_t size, Control& ctl, json& peer_done);
  // The receiving side's check: the inbox holds the pattern the peer wrote (WRITE/SEND) or
  // this side read (READ).
  bool verify(std::uint64_t size) const;

  std::string device_name() const;  // the device the QPs run on (CM may route elsewhere)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  BufKey remote_;
};

}  // namespace fabscope::rdma
