#include "exporter/http.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <unordered_map>

#include "core/error.hpp"
#include "core/root.hpp"

namespace fabscope::exporter {

ListenAddress parse_listen_address(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return UsageError("--listen: " + why + ": \"" + text + "\" (expected HOST:PORT, :PORT or [V6]:PORT)");
  };
  ListenAddress a;
  std::string port;
  if (!text.empty() && text[0] == '[') {
    auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') throw bad("bad IPv6 form");
    a.host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string::npos) throw bad("no port");
    a.host = text.substr(0, colon);
    if (a.host.find(':') != std::string::npos) throw bad("IPv6 addresses go in brackets");
    port = text.substr(colon + 1);
  }
  auto n = core::parse_int(port);
  if (port.empty() || !n || *n < 0 || *n > 65535 || port.find_first_not_of("0123456789") != std::string::npos)
    throw bad("port is not a number from 0 to 65535");
  a.port = static_cast<std::uint16_t>(*n);
  if (a.host == "localhost") a.host = "127.0.0.1";
  in6_addr v6;
  in_addr v4;
  if (!a.host.empty() && inet_pton(AF_INET, a.host.c_str(), &v4) != 1 &&
      inet_pton(AF_INET6, a.host.c_str(), &v6) != 1)
    throw bad("host is not an IP address");
  return a;
}

const char* reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

std::string response_head(const HttpResponse& r, bool keep_alive) {
  std::string h;
  h.reserve(192);
  h.append("HTTP/1.1 ").append(std::to_string(r.status)).append(" ").append(reason_phrase(r.status)).append("\r\n");
  h.append("Content-Type: ").append(r.content_type).append("\r\n");
  const std::size_t length = (r.body ? r.body->size() : 0) + (r.tail ? r.tail->size() : 0);
  h.append("Content-Length: ").append(std::to_string(length)).append("\r\n");
  for (const auto& [k, v] : r.headers) h.append(k).append(": ").append(v).append("\r\n");
  h.append(keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n");
  h.append("\r\n");
  return h;
}

std::ptrdiff_t http_eviction_victim(const std::vector<HttpSlot>& slots) {
  std::ptrdiff_t idle = -1, stalled = -1;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const auto& s = slots[i];
    const auto at = static_cast<std::ptrdiff_t>(i);
    if (!s.writing) {
      if (idle < 0 || s.since_ms < slots[static_cast<std::size_t>(idle)].since_ms) idle = at;
    } else if (stalled < 0 || s.progress_ms < slots[static_cast<std::size_t>(stalled)].progress_ms) {
      stalled = at;
    }
  }
  return idle >= 0 ? idle : stalled;
}

namespace {

std::int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Conn {
  int fd = -1;
  bool writing = false;
  std::string in;
  std::string head;
  std::shared_ptr<const std::string> body, tail;
  bool send_body = true;
  bool close_after = false;
  bool peer_done = false;  // the client half-closed (FIN): answer what it sent, then close
  std::size_t sent = 0;
  std::int64_t deadline_ms = 0;
  std::int64_t since_ms = 0;     // when it began waiting for a request (eviction order)
  std::int64_t progress_ms = 0;  // writing: when the response last moved a byte (eviction order)
  std::uint32_t interest = 0;
};

}  // namespace

struct HttpServer::Impl {
  ServerOptions opts;
  Handler handler;
  int listen_fd = -1;
  int ep = -1;
  std::uint16_t bound_port = 0;
  bool accept_paused = false;
  std::uint64_t batch = 0;
  // Read by stats() from other threads (a test's, a scrape's): each counter on its own.
  struct {
    std::atomic<std::uint64_t> requests_ok{0}, rejected{0}, evicted{0}, open{0};
  } st;
  std::unordered_map<int, std::unique_ptr<Conn>> conns;

  std::int64_t now_ms() const { return opts.clock_ms ? opts.clock_ms() : steady_ms(); }

  ~Impl() {
    for (auto& [fd, c] : conns) ::close(fd);
    if (listen_fd >= 0) ::close(listen_fd);
    if (ep >= 0) ::close(ep);
  }

  void set_interest(Conn& c, std::uint32_t ev) {
    if (c.interest == ev) return;
    epoll_event e{};
    e.events = ev;
    e.data.fd = c.fd;
    epoll_ctl(ep, EPOLL_CTL_MOD, c.fd, &e);
    c.interest = ev;
  }

  void close_conn(int fd) {
    epoll_ctl(ep, EPOLL_CTL_DEL, fd, nullptr);
    ::close(fd);
    conns.erase(fd);
    st.open = conns.size();
  }

  void wait_for_request(Conn& c, std::int64_t now) {
    c.writing = false;
    c.head.clear();
    c.body.reset();
    c.tail.reset();
    c.sent = 0;
    c.since_ms = now;
    c.deadline_ms = now + opts.request_timeout_ms;
    set_interest(c, EPOLLIN);
  }

  // Returns false when the connection was closed.
  bool write_some(Conn& c) {
    while (true) {
      // The response is head, body, tail back to back; c.sent counts bytes over all three.
      const std::string* parts[3] = {&c.head, c.send_body ? c.body.get() : nullptr,
                                     c.send_body ? c.tail.get() : nullptr};
      iovec iov[3];
      int n = 0;
      std::size_t skip = c.sent;
      for (const std::string* p : parts) {
        if (!p || p->empty()) continue;
        if (skip >= p->size()) {
          skip -= p->size();
          continue;
        }
        iov[n++] = {const_cast<char*>(p->data()) + skip, p->size() - skip};
        skip = 0;
      }
      if (n == 0) break;
      msghdr msg{};
      msg.msg_iov = iov;
      msg.msg_iovlen = n;
      ssize_t w = ::sendmsg(c.fd, &msg, MSG_NOSIGNAL);
      if (w > 0) {
        // Progress: the response has another write_timeout_ms to move its next byte.
        c.progress_ms = now_ms();
        c.deadline_ms = c.progress_ms + opts.write_timeout_ms;
      }
      if (w < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          set_interest(c, EPOLLOUT);
          return true;
        }
        close_conn(c.fd);
        return false;
      }
      c.sent += static_cast<std::size_t>(w);
    }
    if (c.close_after) {
      close_conn(c.fd);
      return false;
    }
    wait_for_request(c, now_ms());
    return true;
  }

  // Starts sending; returns false when the connection was closed.
  bool respond(Conn& c, HttpResponse r, bool keep_alive, bool head_only) {
    if (r.status >= 200 && r.status < 300) ++st.requests_ok;
    else ++st.rejected;
    c.writing = true;
    c.close_after = !keep_alive;
    c.head = response_head(r, keep_alive);
    c.body = std::move(r.body);
    c.tail = std::move(r.tail);
    c.send_body = !head_only;
    c.sent = 0;
    c.progress_ms = now_ms();
    c.deadline_ms = c.progress_ms + opts.write_timeout_ms;
    return write_some(c);
  }

  bool respond_error(Conn& c, int status, const std::string& why) {
    HttpResponse r;
    r.status = status;
    r.body = std::make_shared<const std::string>(std::to_string(status) + " " + reason_phrase(status) + ": " + why + "\n");
    return respond(c, std::move(r), false, false);
  }

  // Parses and answers every complete request in the buffer (pipelining), one at a time.
  void process(Conn& c) {
    while (!c.writing) {
      auto pr = parse_request(c.in, opts.limits);
      if (pr.status == ParseStatus::Incomplete) {
        // Nothing more will come: a partial request is dropped, an answered one is done.
        if (c.peer_done) close_conn(c.fd);
        return;
      }
      if (pr.status == ParseStatus::Error) {
        respond_error(c, pr.error_status, pr.error);
        return;
      }
      c.in.erase(0, pr.consumed);
      HttpResponse r;
      try {
        r = handler(pr.request, batch);
      } catch (const std::exception& e) {
        r = HttpResponse{};
        r.status = 500;
        r.body = std::make_shared<const std::string>(std::string("500 Internal Server Error: ") + e.what() + "\n");
      }
      bool keep = pr.request.keep_alive && r.status < 400;
      if (!respond(c, std::move(r), keep, pr.request.method == "HEAD")) return;
    }
  }

  void on_readable(Conn& c) {
    char buf[4096];
    while (!c.peer_done && c.in.size() < opts.limits.max_request_bytes) {
      std::size_t room = std::min(sizeof buf, opts.limits.max_request_bytes - c.in.size());
      ssize_t n = ::recv(c.fd, buf, room, 0);
      if (n > 0) {
        c.in.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (n == 0) {
        // A client may send its whole request and then shut down its sending side (FIN): the
        // request in the buffer is still answered (process closes once it is).
        c.peer_done = true;
        break;
      }
      close_conn(c.fd);  // reset
      return;
    }
    process(c);
  }

  // At the limit: one connection makes room (http_eviction_victim); the new one is refused only
  // when there is none to evict (max_connections 0).
  void evict_one_or_refuse(int new_fd) {
    std::vector<HttpSlot> slots;
    std::vector<int> fds;
    slots.reserve(conns.size());
    fds.reserve(conns.size());
    for (auto& [fd, c] : conns) {
      slots.push_back({c->writing, c->since_ms, c->progress_ms});
      fds.push_back(fd);
    }
    const auto victim = http_eviction_victim(slots);
    if (victim >= 0) {
      ++st.evicted;
      close_conn(fds[static_cast<std::size_t>(victim)]);
    } else {
      ++st.rejected;
      ::close(new_fd);
    }
  }

  void accept_all() {
    while (true) {
      int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Out of descriptors: stop accepting until the next sweep frees some, instead of
          // spinning on a listen socket that stays readable.
          epoll_ctl(ep, EPOLL_CTL_DEL, listen_fd, nullptr);
          accept_paused = true;
        }
        return;
      }
      if (conns.size() >= opts.max_connections) {
        evict_one_or_refuse(fd);
        if (conns.size() >= opts.max_connections) continue;  // refused
      }
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      auto c = std::make_unique<Conn>();
      c->fd = fd;
      Conn& ref = *c;
      conns.emplace(fd, std::move(c));
      st.open = conns.size();
      epoll_event e{};
      e.events = EPOLLIN;
      e.data.fd = fd;
      epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
      ref.interest = EPOLLIN;
      wait_for_request(ref, now_ms());
      on_readable(ref);  // the request often arrived with the connection
    }
  }

  void sweep(std::int64_t now) {
    std::vector<int> expired;
    for (auto& [fd, c] : conns)
      if (now >= c->deadline_ms) expired.push_back(fd);
    for (int fd : expired) {
      ++st.rejected;
      close_conn(fd);
    }
    if (accept_paused) {
      epoll_event e{};
      e.events = EPOLLIN;
      e.data.fd = listen_fd;
      if (epoll_ctl(ep, EPOLL_CTL_ADD, listen_fd, &e) == 0) accept_paused = false;
    }
  }
};

HttpServer::HttpServer(ServerOptions opts, Handler handler) : impl_(std::make_unique<Impl>()) {
  impl_->opts = std::move(opts);
  impl_->handler = std::move(handler);
}

HttpServer::~HttpServer() = default;

void HttpServer::bind() {
  auto& im = *impl_;
  const auto& a = im.opts.listen;
  std::string where = (a.host.find(':') != std::string::npos ? "[" + a.host + "]" : a.host) + ":" + std::to_string(a.port);
  sockaddr_storage ss{};
  socklen_t len = 0;
  int family = AF_INET;
  if (a.host.find(':') != std::string::npos) {
    family = AF_INET6;
    auto* s6 = reinterpret_cast<sockaddr_in6*>(&ss);
    s6->sin6_family = AF_INET6;
    s6->sin6_port = htons(a.port);
    if (inet_pton(AF_INET6, a.host.c_str(), &s6->sin6_addr) != 1) throw Error("listen " + where + ": not an IPv6 address");
    len = sizeof *s6;
  } else {
    auto* s4 = reinterpret_cast<sockaddr_in*>(&ss);
    s4->sin_family = AF_INET;
    s4->sin_port = htons(a.port);
    if (a.host.empty()) s4->sin_addr.s_addr = htonl(INADDR_ANY);
    else if (inet_pton(AF_INET, a.host.c_str(), &s4->sin_addr) != 1) throw Error("listen " + where + ": not an IPv4 address");
    len = sizeof *s4;
  }
  int fd = ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw Error("listen " + where + ": socket: " + std::strerror(errno));
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 || ::listen(fd, 1024) != 0) {
    int err = errno;
    ::close(fd);
    throw Error("listen " + where + ": " + std::strerror(err));
  }
  sockaddr_storage got{};
  socklen_t got_len = sizeof got;
  getsockname(fd, reinterpret_cast<sockaddr*>(&got), &got_len);
  im.bound_port = ntohs(family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&got)->sin6_port
                                           : reinterpret_cast<sockaddr_in*>(&got)->sin_port);
  im.listen_fd = fd;
  im.ep = epoll_create1(EPOLL_CLOEXEC);
  if (im.ep < 0) throw Error(std::string("epoll_create1: ") + std::strerror(errno));
  epoll_event e{};
  e.events = EPOLLIN;
  e.data.fd = fd;
  epoll_ctl(im.ep, EPOLL_CTL_ADD, fd, &e);
}

std::uint16_t HttpServer::port() const { return impl_->bound_port; }

ServerStats HttpServer::stats() const {
  const auto& st = impl_->st;
  return {st.requests_ok.load(), st.rejected.load(), st.evicted.load(), st.open.load()};
}

void HttpServer::run(const std::atomic<bool>& stop) {
  auto& im = *impl_;
  if (im.listen_fd < 0) bind();
  epoll_event events[128];
  std::int64_t last_sweep = im.now_ms();
  while (!stop.load(std::memory_order_relaxed)) {
    int n = epoll_wait(im.ep, events, 128, 200);
    if (n < 0 && errno != EINTR) throw Error(std::string("epoll_wait: ") + std::strerror(errno));
    ++im.batch;
    for (int i = 0; i < n; ++i) {
      int fd = events[i].data.fd;
      if (fd == im.listen_fd) {
        im.accept_all();
        continue;
      }
      auto it = im.conns.find(fd);
      if (it == im.conns.end()) continue;
      Conn& c = *it->second;
      if (c.writing) {
        // A finished response may leave pipelined requests in the buffer: answer them now.
        if ((events[i].events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) && im.write_some(c) && !c.writing &&
            !c.in.empty())
          im.process(c);
      } else if (events[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
        im.on_readable(c);
      }
    }
    std::int64_t now = im.now_ms();
    if (now - last_sweep >= 100 || now < last_sweep) {
      im.sweep(now);
      last_sweep = now;
    }
  }
}

}  // namespace fabscope::exporter
