#pragma once
// The TCP control connection between the two sides: one JSON object per line, each line at
// most 1 MiB, every read bounded by the watchdog. It carries the hello (parameters), the
// endpoints, buffer keys, QP numbers for --oob tcp, per-size start/done and the results.
#include <memory>
#include <optional>
#include <string>

#include "core/json.hpp"
#include "core/socket.hpp"
#include "rdma/watchdog.hpp"

namespace fabscope::rdma {

class Control {
 public:
  // Resolves host (IPv4) and connects within timeout_s; throws Unreachable-style Failure
  // (rdma.tcp_unreachable, rdma.no_server, rdma.tcp_timeout).
  static Control connect(const std::string& host, int port, double timeout_s);
  // buffered: bytes already read from fd (the listener's first message and what followed it).
  explicit Control(int fd, std::string buffered = "") : fd_(fd), buf_(std::move(buffered)) {}
  Control(Control&& o) noexcept : fd_(o.fd_), buf_(std::move(o.buf_)) { o.fd_ = -1; }
  Control& operator=(Control&& o) noexcept;
  ~Control();

  void send(const json& msg, const Watchdog& wd);
  // Next message; waits under the watchdog, which ticks on each complete message only: bytes
  // trickling in are no progress, so a peer sending one byte at a time is cut off at the
  // watchdog's timeout. Throws Failure on EOF, garbage or timeout. A message {"error": finding}
  // from the peer is thrown as PeerFailure carrying it (report it with from_peer()).
  json recv(Watchdog& wd);
  // The first message of a connection the Listener passed (already buffered whole), parsed
  // without taking an {"error"} as the peer's failure: nobody is authenticated yet.
  json first_message(const Watchdog& wd);
  // A message if one is complete without waiting.
  std::optional<json> poll();

  std::string local_address() const;  // "10.9.0.2"
  std::string peer_address() const;
  int fd() const { return fd_; }

 private:
  std::optional<json> take_line(const Watchdog& wd, bool peer_errors = true);
  int fd_ = -1;
  std::string buf_;
};

// The server's listener. Before a connection becomes a Control its first message (the client's
// hello, one line) must arrive whole: at most kMaxHelloBytes within first_message_s, read from
// up to 16 connections at once (net::Gate), so a stranger trickling bytes delays no one.
class Listener {
 public:
  static constexpr std::size_t kMaxHelloBytes = 64 << 10;
  // Throws Error naming address:port.
  Listener(const std::string& address, int port, double first_message_s);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  int port() const { return port_; }
  // A connection whose first line is buffered in the Control, or nullopt after wait_s (wait_s
  // <= 0: until one comes or stop()). Connections dropped before their first line are logged
  // on stderr.
  std::optional<Control> accept(double wait_s);
  void stop();

 private:
  int fd_ = -1;
  int port_ = 0;
  int wake_[2] = {-1, -1};
  std::unique_ptr<net::Gate> gate_;
};

// The Listener's framer: the size of the first line (0 while no newline came); throws Error
// when the bytes cannot start a JSON object.
std::size_t first_line_size(std::string_view bytes);

// "a.b.c.d" of an IPv4 sockaddr.
std::string ipv4_text(const void* sockaddr_in_ptr);
// The source address the kernel picks for traffic to dst (a UDP connect, no packet sent):
// the routing decision, policy rules included. "" when there is no route.
std::string source_address_for(const std::string& dst_ipv4);

}  // namespace fabscope::rdma
