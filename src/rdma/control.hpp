#pragma once
// The TCP control connection between the two sides: one JSON object per line, each line at
// most 1 MiB, every read bounded by the watchdog. It carries the hello (parameters), the
// endpoints, buffer keys, QP numbers for --oob tcp, per-size start/done and the results.
#include <optional>
#include <string>

#include "core/json.hpp"
#include "rdma/watchdog.hpp"

namespace fabscope::rdma {

class Control {
 public:
  // Resolves host (IPv4) and connects within timeout_s; throws Unreachable-style Failure
  // (rdma.tcp_unreachable, rdma.no_server, rdma.tcp_timeout).
  static Control connect(const std::string& host, int port, double timeout_s);
  explicit Control(int fd) : fd_(fd) {}
  Control(Control&& o) noexcept : fd_(o.fd_), buf_(std::move(o.buf_)) { o.fd_ = -1; }
  Control& operator=(Control&& o) noexcept;
  ~Control();

  void send(const json& msg, const Watchdog& wd);
  // Next message; waits under the watchdog (ticks on every byte). Throws Failure on EOF,
  // garbage or timeout. A message {"error": finding} from the peer is thrown as that finding.
  json recv(Watchdog& wd);
  // A message if one is complete without waiting.
  std::optional<json> poll();

  std::string local_address() const;  // "10.9.0.2"
  std::string peer_address() const;
  int fd() const { return fd_; }

 private:
  std::optional<json> take_line(const Watchdog& wd);
  int fd_ = -1;
  std::string buf_;
};

class Listener {
 public:
  Listener(const std::string& address, int port);  // throws Error naming address:port
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  int port() const { return port_; }
  // A connection, or nullopt after wait_s (wait_s <= 0: until one comes or stop()).
  std::optional<Control> accept(double wait_s);
  void stop();

 private:
  int fd_ = -1;
  int port_ = 0;
  int wake_[2] = {-1, -1};
};

// "a.b.c.d" of an IPv4 sockaddr.
std::string ipv4_text(const void* sockaddr_in_ptr);
// The source address the kernel picks for traffic to dst (a UDP connect, no packet sent):
// the routing decision, policy rules included. "" when there is no route.
std::string source_address_for(const std::string& dst_ipv4);

}  // namespace fabscope::rdma
