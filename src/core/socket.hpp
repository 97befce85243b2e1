#pragma once
// The one socket layer of fabscope's network parts (the cluster exchange, the TCP pairs, the
// rdma control channel). Every step has an overall deadline, not an idle timeout: a peer that
// trickles one byte at a time is cut off when the step's time is up, whatever it sends.
//   Fd           owns a descriptor (closed once, on every path)
//   listen_tcp   a non-blocking listener; connect_tcp a non-blocking connect before a deadline
//   send_all / recv_exact   all the bytes before the deadline, or the reason why not
//   Gate         the pre-authentication phase of a server: accepts connections and reads each
//                one's first message (bounded in bytes and in time, all of them at once, so a
//                slow stranger never delays a real peer), with a cap on pending connections and
//                a back-off when the process is out of descriptors (EMFILE: no busy spin); a
//                new connection over the cap drops the oldest pending one of its own address,
//                else of the address holding the most, never itself.
// The caller authenticates the first message (a shared token) before it trusts anything else.
#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace fabscope::net {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

inline Deadline after(std::chrono::milliseconds d) { return Clock::now() + d; }
// Milliseconds left before the deadline, for poll(): 0 once it has passed.
int ms_left(Deadline deadline);

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  void reset(int fd = -1);
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }

 private:
  int fd_ = -1;
};

void set_nonblocking(int fd);
void set_nodelay(int fd);

// A non-blocking listening socket on address:port ("" = every address; IPv6 dual-stack where
// the kernel has IPv6, unless ipv4_only). Port 0 takes the kernel's choice (local_port()).
// Throws fabscope::Error "cannot listen on ADDR:PORT: <reason>".
Fd listen_tcp(const std::string& address, int port, int backlog, bool ipv4_only);
int local_port(int fd);
// "10.0.0.5:41234" of the peer ("peer" when unknown); an IPv4 peer of a dual-stack listener
// without its "::ffff:" prefix.
std::string peer_text(int fd);
std::string peer_ip(int fd);
std::string local_ip(int fd);

// Connects to host:port (every address the name resolves to, in order) before the deadline;
// the socket comes back non-blocking with TCP_NODELAY. On failure an empty Fd, and why says
// what happened to the last address tried (name not resolved, refused, timed out).
Fd connect_tcp(const std::string& host, int port, Deadline deadline, std::string& why, bool ipv4_only = false);

// Everything sent before the deadline: "" on success, else the reason ("timed out after
// sending N of M bytes", the errno text). Never raises SIGPIPE.
std::string send_all(int fd, std::string_view bytes, Deadline deadline);
// Exactly n more bytes appended to out before the deadline: "" on success, else the reason
// ("closed after N of M bytes", "timed out after N of M bytes", the errno text).
std::string recv_exact(int fd, std::size_t n, std::string& out, Deadline deadline);

struct GateLimits {
  std::size_t max_pending = 64;      // connections reading their first message at once
  std::size_t max_bytes = 4096;      // the first message's bound
  std::chrono::milliseconds first_message{5000};  // for all of the first message
  std::size_t max_pending_per_source = 16;  // of them from one address
};

// What the first message looks like, given the bytes received so far: 0 while its end is not
// known yet, else its size in bytes. Throws fabscope::Error when the bytes are not our protocol.
using Framer = std::function<std::size_t(std::string_view bytes)>;
// A connection dropped before its first message was complete: the peer and why.
using DropFn = std::function<void(const std::string& peer, const std::string& why)>;

struct Arrival {
  Fd fd;                // non-blocking
  std::string peer;     // peer_text()
  std::string message;  // the first message, whole
  std::string rest;     // bytes that came after it in the same read
};

class Gate {
 public:
  Gate(int listen_fd, GateLimits limits, Framer framer) : listen_(listen_fd), limits_(limits), framer_(std::move(framer)) {}
  // Accepts and reads until a connection's first message is complete (returned), the deadline
  // passes or wake_fd becomes readable (nullopt). Connections stay pending across calls.
  std::optional<Arrival> next(Deadline deadline, const DropFn& on_drop, int wake_fd = -1);
  std::size_t pending() const { return pending_.size(); }
  // Times accept() failed for lack of descriptors or memory (each followed by a pause).
  int accept_backoffs() const { return backoffs_; }

 private:
  struct Pending {
    Fd fd;
    std::string peer, source, in;  // source: the peer's address without its port
    std::size_t need = 0;
    Deadline deadline{};
  };
  void accept_some(const DropFn& on_drop);
  // Reads what is there; returns true when the first message is complete, throws Error on a
  // framing error, a message over the bound or a closed connection.
  bool read_some(Pending& p);

  int listen_;
  GateLimits limits_;
  Framer framer_;
  std::deque<Pending> pending_;
  Deadline paused_until_{};
  std::chrono::milliseconds backoff_{0};
  int backoffs_ = 0;
};

// Lines about strangers (a refused hello, a dropped connection) on a server's stderr: at most
// `burst` per `window`; the rest are counted, and the next line allowed says how many were left
// out. A stranger connecting in a loop thus costs a few lines, not one per connection.
class LogLimiter {
 public:
  LogLimiter(std::size_t burst, std::chrono::milliseconds window) : burst_(burst), window_(window) {}
  // Whether to write a line at `now`. When true, left_out is how many were not written before it
  // (0 usually); the caller says so in the line.
  bool allow(Clock::time_point now, std::size_t& left_out);
  std::size_t left_out() const { return left_out_; }  // not written since the last line allowed

 private:
  std::size_t burst_;
  std::chrono::milliseconds window_;
  Clock::time_point window_start_{};
  bool started_ = false;
  std::size_t used_ = 0, left_out_ = 0;
};

// Compares two secrets in time independent of where they differ (no early exit).
bool secret_equal(std::string_view a, std::string_view b);
// A fresh random secret of 32 hex digits (getrandom, 128 bits); throws Error when the kernel
// gives no randomness.
std::string random_secret();

}  // namespace fabscope::net
