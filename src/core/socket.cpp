#include "core/socket.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "core/error.hpp"

namespace fabscope::net {

int ms_left(Deadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) return 0;
  return static_cast<int>(std::min<long long>(left, 1 << 30));
}

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) reset(o.release());
  return *this;
}

void Fd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

Fd listen_tcp(const std::string& address, int port, int backlog, bool ipv4_only) {
  const std::string where = (address.empty() ? "*" : address) + ":" + std::to_string(port);
  auto fail = [&](int err) { return Error("cannot listen on " + where + ": " + std::strerror(err)); };
  sockaddr_storage ss{};
  socklen_t len = 0;
  int family = AF_INET;
  if (!address.empty()) {
    auto* a4 = reinterpret_cast<sockaddr_in*>(&ss);
    auto* a6 = reinterpret_cast<sockaddr_in6*>(&ss);
    if (inet_pton(AF_INET, address.c_str(), &a4->sin_addr) == 1) {
      a4->sin_family = AF_INET;
      a4->sin_port = htons(static_cast<std::uint16_t>(port));
      len = sizeof *a4;
    } else if (!ipv4_only && inet_pton(AF_INET6, address.c_str(), &a6->sin6_addr) == 1) {
      a6->sin6_family = family = AF_INET6;
      a6->sin6_port = htons(static_cast<std::uint16_t>(port));
      len = sizeof *a6;
    } else {
      throw Error("cannot listen on " + where + ": not an IP address");
    }
  }
  Fd fd;
  if (address.empty() && !ipv4_only) {
    fd = Fd(::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (fd) {
      int zero = 0;
      ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
      auto* a6 = reinterpret_cast<sockaddr_in6*>(&ss);
      a6->sin6_family = family = AF_INET6;
      a6->sin6_addr = in6addr_any;
      a6->sin6_port = htons(static_cast<std::uint16_t>(port));
      len = sizeof *a6;
    }
  }
  if (!fd) {
    if (address.empty()) {
      auto* a4 = reinterpret_cast<sockaddr_in*>(&ss);
      a4->sin_family = family = AF_INET;
      a4->sin_addr.s_addr = htonl(INADDR_ANY);
      a4->sin_port = htons(static_cast<std::uint16_t>(port));
      len = sizeof *a4;
    }
    fd = Fd(::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd) throw fail(errno);
  }
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0 || ::listen(fd.get(), backlog) != 0)
    throw fail(errno);
  set_nonblocking(fd.get());
  return fd;
}

int local_port(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return 0;
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  return 0;
}

namespace {

// host (numeric, no "::ffff:" for a mapped IPv4) and port of a socket address.
std::pair<std::string, std::string> numeric(const sockaddr_storage& ss, socklen_t len) {
  char host[NI_MAXHOST] = "", port[NI_MAXSERV] = "";
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&ss), len, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return {"", ""};
  std::string h = host;
  if (h.rfind("::ffff:", 0) == 0 && h.find('.') != std::string::npos) h.erase(0, 7);
  return {h, port};
}

std::pair<std::string, std::string> peer_of(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return {"", ""};
  return numeric(ss, len);
}

}  // namespace

std::string peer_text(int fd) {
  auto [h, p] = peer_of(fd);
  return h.empty() ? "peer" : h + ":" + p;
}

std::string peer_ip(int fd) { return peer_of(fd).first; }

std::string local_ip(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "";
  return numeric(ss, len).first;
}

Fd connect_tcp(const std::string& host, int port, Deadline deadline, std::string& why, bool ipv4_only) {
  addrinfo hints{};
  hints.ai_family = ipv4_only ? AF_INET : AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  // getaddrinfo has no timeout of its own; a numeric address never waits on a resolver.
  if (int g = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res); g != 0 || !res) {
    why = std::string("cannot resolve ") + host + ": " + (g ? gai_strerror(g) : "no address");
    return {};
  }
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> owner(res, ::freeaddrinfo);
  why = "no address to try";
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    Fd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol));
    if (!fd) {
      why = std::string("socket: ") + std::strerror(errno);
      continue;
    }
    int err = 0;
    if (::connect(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0) {
      err = errno;
      if (err == EINPROGRESS || err == EINTR) {
        pollfd p{fd.get(), POLLOUT, 0};
        int n;
        do n = ::poll(&p, 1, ms_left(deadline));
        while (n < 0 && errno == EINTR && ms_left(deadline) > 0);
        if (n <= 0) {
          err = ETIMEDOUT;
        } else {
          socklen_t len = sizeof err;
          ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
        }
      }
    }
    if (err == 0) {
      set_nodelay(fd.get());
      why.clear();
      return fd;
    }
    why = err == ETIMEDOUT ? "connect timed out" : std::string("connect: ") + std::strerror(err);
    if (ms_left(deadline) == 0) break;
  }
  return {};
}

std::string send_all(int fd, std::string_view bytes, Deadline deadline) {
  std::size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
      return std::string("send: ") + std::strerror(errno);
    const int left = ms_left(deadline);
    if (left == 0)
      return "timed out after sending " + std::to_string(off) + " of " + std::to_string(bytes.size()) + " bytes";
    pollfd p{fd, POLLOUT, 0};
    ::poll(&p, 1, left);
  }
  return "";
}

std::string recv_exact(int fd, std::size_t n, std::string& out, Deadline deadline) {
  std::size_t got = 0;
  char buf[65536];
  while (got < n) {
    ssize_t r = ::recv(fd, buf, std::min(sizeof buf, n - got), MSG_DONTWAIT);
    if (r > 0) {
      out.append(buf, static_cast<std::size_t>(r));
      got += static_cast<std::size_t>(r);
      continue;
    }
    const std::string progress = std::to_string(got) + " of " + std::to_string(n) + " bytes";
    if (r == 0) return "closed after " + progress;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return std::string("recv: ") + std::strerror(errno);
    const int left = ms_left(deadline);
    if (left == 0) return "timed out after " + progress;
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, left);
  }
  return "";
}

std::optional<Arrival> Gate::next(Deadline deadline, const DropFn& on_drop, int wake_fd) {
  while (true) {
    const auto now = Clock::now();
    // Each pending connection ready to be judged, or dropped for what it did.
    for (auto it = pending_.begin(); it != pending_.end();) {
      std::string why;
      bool done = false;
      try {
        done = read_some(*it);
        if (!done && now >= it->deadline)
          why = "sent no complete first message within " + std::to_string(limits_.first_message.count()) + " ms";
      } catch (const Error& e) {
        why = e.what();
      }
      if (done) {
        Arrival a;
        a.peer = it->peer;
        a.message = it->in.substr(0, it->need);
        a.rest = it->in.substr(it->need);
        a.fd = std::move(it->fd);
        pending_.erase(it);
        return a;
      }
      if (!why.empty()) {
        if (on_drop) on_drop(it->peer, why);
        it = pending_.erase(it);
      } else {
        ++it;
      }
    }
    if (now >= deadline) return std::nullopt;
    const bool listening = now >= paused_until_;
    std::vector<pollfd> pfds;
    if (wake_fd >= 0) pfds.push_back({wake_fd, POLLIN, 0});
    if (listening) pfds.push_back({listen_, POLLIN, 0});
    Deadline wake_at = deadline;
    if (!listening) wake_at = std::min(wake_at, paused_until_);
    for (auto& p : pending_) {
      pfds.push_back({p.fd.get(), POLLIN, 0});
      wake_at = std::min(wake_at, p.deadline);
    }
    // +1: poll's milliseconds round down; waking early would spin until the deadline.
    int rc = ::poll(pfds.data(), pfds.size(), wake_at <= Clock::now() ? 0 : ms_left(wake_at) + 1);
    if (rc < 0 && errno != EINTR) throw Error(std::string("poll: ") + std::strerror(errno));
    if (rc > 0 && wake_fd >= 0 && (pfds[0].revents & POLLIN)) return std::nullopt;
    if (Clock::now() >= paused_until_) accept_some(on_drop);
  }
}

void Gate::accept_some(const DropFn& on_drop) {
  while (true) {
    int fd = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // The listener stays readable while the backlog holds connections: without a pause the
        // loop would spin. Pending strangers free their descriptors at their own deadlines.
        backoff_ = std::min(std::chrono::milliseconds(1000), std::max(std::chrono::milliseconds(50), backoff_ * 2));
        paused_until_ = Clock::now() + backoff_;
        ++backoffs_;
      }
      return;
    }
    backoff_ = std::chrono::milliseconds(0);
    Pending p;
    p.fd = Fd(fd);
    set_nodelay(fd);
    p.peer = peer_text(fd);
    p.source = peer_ip(fd);
    p.deadline = Clock::now() + limits_.first_message;
    // One address holds at most its share: over it, that address's oldest pending connection goes.
    std::size_t here = 0;
    auto oldest_here = pending_.end();
    for (auto it = pending_.begin(); it != pending_.end(); ++it)
      if (it->source == p.source && here++ == 0) oldest_here = it;
    if (oldest_here != pending_.end() && here >= std::max<std::size_t>(1, limits_.max_pending_per_source)) {
      if (on_drop)
        on_drop(oldest_here->peer, "evicted: " + std::to_string(here) + " connections from " + p.source +
                                       " were waiting to authenticate");
      pending_.erase(oldest_here);
    } else if (pending_.size() >= limits_.max_pending) {
      // The oldest pending connection of the address holding the most has had the longest to say
      // hello: a peer speaking the protocol sends its first message with the connect, so it is
      // never the one evicted, nor is a peer alone on its address while others hold several.
      std::map<std::string, std::size_t> counts;
      for (const auto& q : pending_) ++counts[q.source];
      auto victim = pending_.begin();
      for (auto it = pending_.begin(); it != pending_.end(); ++it)
        if (counts[it->source] > counts[victim->source]) victim = it;  // the first (oldest) of the largest
      if (on_drop)
        on_drop(victim->peer, "evicted: " + std::to_string(limits_.max_pending) +
                                  " connections were waiting to authenticate");
      pending_.erase(victim);
    }
    pending_.push_back(std::move(p));
  }
}

bool Gate::read_some(Pending& p) {
  char buf[4096];
  while (true) {
    if (p.need == 0) p.need = framer_(p.in);
    if (p.need > limits_.max_bytes)
      throw Error("a first message of " + std::to_string(p.need) + " bytes, more than the " +
                  std::to_string(limits_.max_bytes) + " allowed before authentication");
    if (p.need && p.in.size() >= p.need) return true;
    // Never more than the first message's bound: a peer cannot make this buffer grow.
    const std::size_t want = (p.need ? p.need : limits_.max_bytes) - p.in.size();
    if (want == 0)
      throw Error("no complete first message in " + std::to_string(limits_.max_bytes) +
                  " bytes (not a fabscope peer?)");
    ssize_t n = ::recv(p.fd.get(), buf, std::min(sizeof buf, want), 0);
    if (n > 0) {
      p.in.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) throw Error("closed the connection before its first message was complete");
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return false;
    throw Error(std::string("recv: ") + std::strerror(errno));
  }
}

bool LogLimiter::allow(Clock::time_point now, std::size_t& left_out) {
  if (!started_ || now - window_start_ >= window_ || now < window_start_) {
    started_ = true;
    window_start_ = now;
    used_ = 0;
  }
  if (used_ >= burst_) {
    ++left_out_;
    return false;
  }
  ++used_;
  left_out = left_out_;
  left_out_ = 0;
  return true;
}

bool secret_equal(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

std::string random_secret() {
  unsigned char raw[16];
  std::size_t got = 0;
  while (got < sizeof raw) {
    ssize_t n = ::getrandom(raw + got, sizeof raw - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(std::string("getrandom: ") + std::strerror(errno));
    got += static_cast<std::size_t>(n);
  }
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) out += hex[c >> 4], out += hex[c & 15];
  return out;
}

}  // namespace fabscope::net
