#include "rdma/control.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>

#include "rdma/findings.hpp"

namespace fabscope::rdma {

namespace {

constexpr std::size_t kMaxLine = 1 << 20;

using net::set_nodelay;

}  // namespace

std::string ipv4_text(const void* p) {
  const auto* sin = static_cast<const sockaddr_in*>(p);
  char buf[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof buf);
  return buf;
}

std::string source_address_for(const std::string& dst) {
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(4791);
  if (inet_pton(AF_INET, dst.c_str(), &sin.sin_addr) != 1) return "";
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin) == 0) {
    sockaddr_in local{};
    socklen_t len = sizeof local;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0) out = ipv4_text(&local);
  }
  close(fd);
  return out;
}

Control Control::connect(const std::string& host, int port, double timeout_s) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res); rc != 0 || !res)
    throw Failure(tcp_resolve(host, rc ? gai_strerror(rc) : "no IPv4 address"));
  sockaddr_in addr{};
  std::memcpy(&addr, res->ai_addr, sizeof addr);
  freeaddrinfo(res);
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) throw Failure(tcp_connect(host, port, errno));
  int err = 0;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    err = errno;
    if (err == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int n = ::poll(&p, 1, static_cast<int>(timeout_s * 1000));
      if (n == 0) {
        err = ETIMEDOUT;
      } else {
        socklen_t len = sizeof err;
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      }
    }
  }
  if (err != 0) {
    close(fd);
    throw Failure(tcp_connect(host, port, err));
  }
  set_nodelay(fd);
  return Control(fd);
}

Control& Control::operator=(Control&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = o.fd_;
    buf_ = std::move(o.buf_);
    o.fd_ = -1;
  }
  return *this;
}

Control::~Control() {
  if (fd_ >= 0) close(fd_);
}

void Control::send(const json& msg, const Watchdog& wd) {
  std::string line = msg.dump() + "\n";
  std::size_t off = 0;
  while (off < line.size()) {
    ssize_t n = ::send(fd_, line.data() + off, line.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd_, POLLOUT, 0};
      ::poll(&p, 1, 100);
      wd.check();
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    throw Failure(control_lost(wd.where(), std::string("send: ") + std::strerror(errno)));
  }
}

std::optional<json> Control::take_line(const Watchdog& wd, bool peer_errors) {
  auto nl = buf_.find('\n');
  if (nl == std::string::npos) {
    if (buf_.size() > kMaxLine)
      throw Failure(control_lost(wd.where(), "a control message longer than 1 MiB (not a fabscope peer?)"));
    return std::nullopt;
  }
  std::string line = buf_.substr(0, nl);
  buf_.erase(0, nl + 1);
  json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw Failure(control_lost(wd.where(), "unreadable control message (not a fabscope rdma peer?): '" +
                                               line.substr(0, 80) + "'"));
  if (peer_errors && j.contains("error")) {
    Finding f;
    try {
      f = j.at("error").get<Finding>();
    } catch (const std::exception& e) {
      throw Failure(control_lost(wd.where(), std::string("unreadable error from the peer: ") + e.what()));
    }
    throw PeerFailure(f);
  }
  return j;
}

std::optional<json> Control::poll() {
  Watchdog none("control", 1);
  char tmp[65536];
  for (;;) {
    ssize_t n = ::recv(fd_, tmp, sizeof tmp, MSG_DONTWAIT);
    if (n > 0) {
      buf_.append(tmp, static_cast<std::size_t>(n));
      continue;
    }
    break;
  }
  return take_line(none);
}

json Control::first_message(const Watchdog& wd) {
  if (auto j = take_line(wd, false)) return *j;
  throw Failure(control_lost(wd.where(), "no complete first message"));
}

json Control::recv(Watchdog& wd) {
  for (;;) {
    if (auto j = take_line(wd)) {
      wd.tick();  // a whole message is progress; a byte is not
      return *j;
    }
    pollfd p{fd_, POLLIN, 0};
    int ms = static_cast<int>(std::min(wd.remaining_s(), 0.2) * 1000) + 1;
    int rc = ::poll(&p, 1, ms);
    if (rc < 0 && errno != EINTR)
      throw Failure(control_lost(wd.where(), std::string("poll: ") + std::strerror(errno)));
    if (rc <= 0) {
      wd.check();
      continue;
    }
    char tmp[65536];
    ssize_t n = ::recv(fd_, tmp, sizeof tmp, MSG_DONTWAIT);
    if (n == 0) throw Failure(control_lost(wd.where(), "the peer closed the control connection"));
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      throw Failure(control_lost(wd.where(), std::string("recv: ") + std::strerror(errno)));
    }
    buf_.append(tmp, static_cast<std::size_t>(n));
  }
}

std::string Control::local_address() const {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  if (getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) return "";
  return ipv4_text(&a);
}

std::string Control::peer_address() const {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  if (getpeername(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) return "";
  return ipv4_text(&a);
}

Listener::Listener(const std::string& address, int port, double first_message_s) {
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(static_cast<uint16_t>(port));
  std::string where = (address.empty() ? "0.0.0.0" : address) + ":" + std::to_string(port);
  if (!address.empty() && inet_pton(AF_INET, address.c_str(), &sin.sin_addr) != 1)
    throw Error("rdma: listen address '" + address + "' is not an IPv4 address");
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw Error("rdma: socket: " + std::string(std::strerror(errno)));
  int one = 1;
  setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd_, reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0 || ::listen(fd_, 16) != 0) {
    int err = errno;
    close(fd_);
    fd_ = -1;
    throw Error("rdma: cannot listen on TCP " + where + ": " + std::strerror(err) +
                (err == EADDRINUSE ? " (another server on this port? pick another with --port)" : ""));
  }
  socklen_t len = sizeof sin;
  getsockname(fd_, reinterpret_cast<sockaddr*>(&sin), &len);
  port_ = ntohs(sin.sin_port);
  if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) wake_[0] = wake_[1] = -1;
  net::set_nonblocking(fd_);
  const auto first_ms = std::chrono::milliseconds(static_cast<long long>(first_message_s * 1000));
  gate_ = std::make_unique<net::Gate>(fd_, net::GateLimits{16, kMaxHelloBytes, first_ms}, first_line_size);
}

std::size_t first_line_size(std::string_view b) {
  const auto start = b.find_first_not_of(" \t\r\n");
  if (start != std::string_view::npos && b[start] != '{')
    throw Error("not a fabscope rdma client (its first bytes are not a JSON object)");
  const auto nl = b.find('\n');
  return nl == std::string_view::npos ? 0 : nl + 1;
}

Listener::~Listener() {
  if (fd_ >= 0) close(fd_);
  for (int f : wake_)
    if (f >= 0) close(f);
}

void Listener::stop() {
  if (wake_[1] >= 0) {
    char c = 1;
    [[maybe_unused]] auto n = write(wake_[1], &c, 1);
  }
}

std::optional<Control> Listener::accept(double wait_s) {
  const auto deadline = wait_s > 0 ? net::Clock::now() + std::chrono::duration_cast<net::Clock::duration>(
                                                              std::chrono::duration<double>(wait_s))
                                   : net::Clock::time_point::max();
  auto a = gate_->next(deadline, [](const std::string& peer, const std::string& why) {
    std::cerr << "fabscope rdma: dropped a connection from " << peer << ": " << why << "\n";
  }, wake_[0]);
  if (!a) return std::nullopt;
  return Control(a->fd.release(), a->message + a->rest);
}

}  // namespace fabscope::rdma
