#pragma once
// The verbs side of a session: the resources (resources.hpp: protection domain, one registered
// buffer, completion queues, queue pairs), connected through RDMA CM (cm.hpp) or from QP
// numbers exchanged over the control connection, and the measurement loops (loops.hpp). Every
// wait polls under the session's Watchdog.
// Internal to fabscope_rdma (rdma.cpp drives it).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rdma/control.hpp"
#include "rdma/resources.hpp"
#include "rdma/types.hpp"
#include "rdma/watchdog.hpp"

namespace fabscope::rdma {

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
  void set_remote(const BufKey& k);

  // Before each size (both sides, before "ready"): clear inboxes, fill outboxes with the size's
  // pattern, post receives for SEND.
  void prepare(std::uint64_t size);
  // The measurement of one size, with the per-size messages (size_protocol.hpp): sends this
  // side's {"done": ...}, waits for the peer's, returns the merge of both (merge.hpp).
  SizeResult run_size(std::uint64_t size, Control& ctl);
  // The receiving side's check: the inbox holds the pattern the peer wrote (WRITE/SEND) or
  // this side read (READ).
  bool verify(std::uint64_t size) const;

  std::string device_name() const;  // the device the QPs run on (CM may route elsewhere)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fabscope::rdma
