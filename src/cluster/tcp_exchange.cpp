// The env-contract exchange: a TCP star around rank 0, like NCCL's own bootstrap (one listener on
// the master, every rank connects once). Rank 0 multiplexes its peers with poll(), so one slow or
// dead peer never blocks the others, and every wait has a deadline.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <thread>

#include "cluster/exchange.hpp"
#include "cluster/message.hpp"
#include "core/error.hpp"

namespace fabscope::cluster {

namespace {

using Clock = std::chrono::steady_clock;

struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(Fd&& o) noexcept : fd(o.fd) { o.fd = -1; }
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd = o.fd;
      o.fd = -1;
    }
    return *this;
  }
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

int ms_left(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

std::string peer_of(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "peer";
  char host[NI_MAXHOST] = "?", port[NI_MAXSERV] = "?";
  getnameinfo(reinterpret_cast<sockaddr*>(&ss), len, host, sizeof host, port, sizeof port,
              NI_NUMERICHOST | NI_NUMERICSERV);
  std::string h = host;
  if (h.rfind("::ffff:", 0) == 0) h.erase(0, 7);  // an IPv4 peer on the dual-stack listener
  return h + ":" + port;
}

std::string local_of(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "";
  char host[NI_MAXHOST] = "";
  getnameinfo(reinterpret_cast<sockaddr*>(&ss), len, host, sizeof host, nullptr, 0, NI_NUMERICHOST);
  return host;
}

// Blocking write of everything before the deadline (the socket is non-blocking; poll between).
void send_all(int fd, const std::string& bytes, Clock::time_point deadline, const std::string& to) {
  std::size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
      throw Error(to + ": send failed: " + std::strerror(errno));
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, ms_left(deadline)) <= 0 && Clock::now() >= deadline) throw Error(to + ": send timed out");
  }
}

std::string frame(MessageType type, int rank, const std::string& payload) {
  if (payload.size() > kMaxPayloadBytes)
    throw Error("cluster exchange: a message of " + std::to_string(payload.size()) + " bytes exceeds the " +
                std::to_string(kMaxPayloadBytes) + " allowed");
  auto h = encode_header({type, static_cast<std::uint32_t>(rank), static_cast<std::uint32_t>(payload.size())});
  return std::string(reinterpret_cast<const char*>(h.data()), h.size()) + payload;
}

// A connection with a receive buffer: frames are cut out as their bytes arrive.
struct Conn {
  Fd fd;
  std::string who;   // "10.0.0.5:41234" then "rank 3 (node-c)"
  std::string in;
  bool closed = false;
  Clock::time_point deadline{};  // for the hello
  // Reads what is there; returns a complete frame when one is buffered. Throws Error on a
  // malformed header (naming the peer).
  std::optional<std::pair<Header, std::string>> poll_frame() {
    char buf[65536];
    while (!closed) {
      ssize_t n = ::recv(fd.fd, buf, sizeof buf, 0);
      if (n > 0) {
        in.append(buf, static_cast<std::size_t>(n));
        if (in.size() >= kHeaderBytes) {
          Header h = parse_header(reinterpret_cast<const unsigned char*>(in.data()), kHeaderBytes, who);
          if (in.size() >= kHeaderBytes + h.payload_bytes) break;
        }
        continue;
      }
      if (n == 0) closed = true;
      else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) closed = true;
      break;
    }
    if (in.size() < kHeaderBytes) return std::nullopt;
    Header h = parse_header(reinterpret_cast<const unsigned char*>(in.data()), kHeaderBytes, who);
    if (in.size() < kHeaderBytes + h.payload_bytes) return std::nullopt;
    std::string payload = in.substr(kHeaderBytes, h.payload_bytes);
    in.erase(0, kHeaderBytes + h.payload_bytes);
    return std::pair{h, std::move(payload)};
  }
};

// Waits for one frame on c until the deadline; nullopt on timeout or a closed connection.
std::optional<std::pair<Header, std::string>> wait_frame(Conn& c, Clock::time_point deadline) {
  while (true) {
    if (auto f = c.poll_frame()) return f;
    if (c.closed) return std::nullopt;
    pollfd p{c.fd.fd, POLLIN, 0};
    const int left = ms_left(deadline);
    if (left == 0) return std::nullopt;
    ::poll(&p, 1, left);
  }
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

class TcpExchange : public Exchange {
 public:
  explicit TcpExchange(const TcpOptions& o) : o_(o) {
    if (o_.world < 1) throw Error("cluster: WORLD_SIZE " + std::to_string(o_.world) + " is not a node count");
    if (o_.rank < 0 || o_.rank >= o_.world)
      throw Error("cluster: RANK " + std::to_string(o_.rank) + " outside WORLD_SIZE " + std::to_string(o_.world));
    if (o_.token.empty())
      throw Error("cluster: no shared token (set FABSCOPE_CLUSTER_TOKEN to the same value on every node; "
                  "under Slurm SLURM_JOB_ID serves)");
    if (o_.rank == 0) serve();
    else join();
  }

  int rank() const override { return o_.rank; }
  int world() const override { return o_.world; }
  std::string launcher() const override { return "env"; }
  std::string local_address() const override { return local_addr_; }
  std::string why_missing(int r) const override {
    if (r < 0 || static_cast<std::size_t>(r) >= why_.size()) return "";
    return why_[static_cast<std::size_t>(r)];
  }
  std::vector<std::string> names() const { return names_; }

  std::vector<std::optional<std::string>> gather(const std::string& mine) override {
    const auto deadline = Clock::now() + o_.step_timeout;
    if (o_.rank != 0) {
      send_all(master_.fd.fd, frame(MessageType::Data, o_.rank, mine), deadline, "rank 0");
      return {};
    }
    std::vector<std::optional<std::string>> out(static_cast<std::size_t>(o_.world));
    out[0] = mine;
    // Poll every live peer until each has sent its message or the deadline passes.
    std::vector<int> waiting;
    for (int r = 1; r < o_.world; ++r)
      if (peers_[static_cast<std::size_t>(r)]) waiting.push_back(r);
    while (!waiting.empty()) {
      std::vector<pollfd> pfds;
      for (int r : waiting) pfds.push_back({peers_[static_cast<std::size_t>(r)]->fd.fd, POLLIN, 0});
      const int left = ms_left(deadline);
      if (left == 0) break;
      ::poll(pfds.data(), pfds.size(), left);
      std::vector<int> still;
      for (int r : waiting) {
        auto& c = *peers_[static_cast<std::size_t>(r)];
        try {
          if (auto f = c.poll_frame()) {
            if (f->first.type != MessageType::Data || static_cast<int>(f->first.rank) != r)
              throw Error(c.who + ": unexpected message type or rank in the gather");
            out[static_cast<std::size_t>(r)] = std::move(f->second);
            continue;
          }
          if (c.closed) {
            lose(r, "connection closed during the gather (the process died or was killed)");
            continue;
          }
        } catch (const Error& e) {
          lose(r, e.what());
          continue;
        }
        still.push_back(r);
      }
      waiting = std::move(still);
    }
    for (int r : waiting)
      lose(r, "sent nothing within " + std::to_string(o_.step_timeout.count() / 1000) + " s of the gather");
    return out;
  }

  std::string broadcast(const std::string& from_root) override {
    const auto deadline = Clock::now() + o_.step_timeout;
    if (o_.rank == 0) {
      const std::string f = frame(MessageType::Data, 0, from_root);
      for (int r = 1; r < o_.world; ++r) {
        auto& p = peers_[static_cast<std::size_t>(r)];
        if (!p) continue;
        try {
          send_all(p->fd.fd, f, deadline, p->who);
        } catch (const Error& e) {
          lose(r, e.what());
        }
      }
      return from_root;
    }
    auto f = wait_frame(master_, deadline);
    if (!f) throw Error("cluster: rank 0 (" + o_.master_addr + ":" + std::to_string(o_.master_port) +
                        ") sent nothing within the step timeout or closed the connection");
    if (f->first.type != MessageType::Data) throw Error("cluster: rank 0 sent an unexpected message type");
    return f->second;
  }

 private:
  void lose(int r, const std::string& why) {
    auto& p = peers_[static_cast<std::size_t>(r)];
    if (p) why_[static_cast<std::size_t>(r)] = p->who + ": " + why;
    p.reset();
  }

  void serve() {
    peers_.resize(static_cast<std::size_t>(o_.world));
    why_.assign(static_cast<std::size_t>(o_.world), "never joined");
    names_.assign(static_cast<std::size_t>(o_.world), "");
    names_[0] = o_.name;
    why_[0] = "";
    Fd listener(::socket(AF_INET6, SOCK_STREAM, 0));
    bool v6 = listener.fd >= 0;
    if (!v6) listener = Fd(::socket(AF_INET, SOCK_STREAM, 0));
    if (listener.fd < 0) throw Error(std::string("cluster: socket: ") + std::strerror(errno));
    int one = 1, zero = 0;
    ::setsockopt(listener.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int rc;
    if (v6) {
      ::setsockopt(listener.fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_addr = in6addr_any;
      a.sin6_port = htons(static_cast<std::uint16_t>(o_.master_port));
      rc = ::bind(listener.fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    } else {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_ANY);
      a.sin_port = htons(static_cast<std::uint16_t>(o_.master_port));
      rc = ::bind(listener.fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    }
    if (rc != 0 || ::listen(listener.fd, 1024) != 0)
      throw Error("cluster: rank 0 cannot listen on MASTER_PORT " + std::to_string(o_.master_port) + ": " +
                  std::strerror(errno) + " (another job, or torchrun's own store, on that port? set "
                  "FABSCOPE_CLUSTER_PORT)");
    set_nonblocking(listener.fd);
    local_addr_ = o_.master_addr;

    const auto deadline = Clock::now() + o_.join_timeout;
    std::vector<std::unique_ptr<Conn>> pending;
    int joined = 1;
    while (joined < o_.world) {
      const int left = ms_left(deadline);
      if (left == 0) break;
      std::vector<pollfd> pfds{{listener.fd, POLLIN, 0}};
      for (auto& c : pending) pfds.push_back({c->fd.fd, POLLIN, 0});
      ::poll(pfds.data(), pfds.size(), std::min(left, 1000));
      while (true) {
        int fd = ::accept(listener.fd, nullptr, nullptr);
        if (fd < 0) break;
        set_nonblocking(fd);
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        auto c = std::make_unique<Conn>();
        c->fd = Fd(fd);
        c->who = peer_of(fd);
        c->deadline = Clock::now() + std::chrono::seconds(10);
        pending.push_back(std::move(c));
      }
      std::vector<std::unique_ptr<Conn>> keep;
      for (auto& c : pending) {
        try {
          auto f = c->poll_frame();
          if (!f) {
            if (c->closed) throw Error(c->who + ": closed the connection before saying hello");
            if (Clock::now() > c->deadline) throw Error(c->who + ": said no hello within 10 s");
            keep.push_back(std::move(c));
            continue;
          }
          if (f->first.type != MessageType::Hello) throw Error(c->who + ": first message is not a hello");
          Hello h = parse_hello(f->second, c->who);
          std::string refuse;
          if (!token_equal(h.token, o_.token)) refuse = "wrong token (not this job's FABSCOPE_CLUSTER_TOKEN)";
          else if (h.world != o_.world)
            refuse = "WORLD_SIZE " + std::to_string(h.world) + ", rank 0 has " + std::to_string(o_.world);
          else if (h.rank <= 0 || h.rank >= o_.world) refuse = "RANK " + std::to_string(h.rank) + " out of range";
          else if (peers_[static_cast<std::size_t>(h.rank)])
            refuse = "RANK " + std::to_string(h.rank) + " already joined from " +
                     peers_[static_cast<std::size_t>(h.rank)]->who;
          if (!refuse.empty()) {
            if (h.rank > 0 && h.rank < o_.world && !peers_[static_cast<std::size_t>(h.rank)])
              why_[static_cast<std::size_t>(h.rank)] = c->who + " refused: " + refuse;
            try {
              send_all(c->fd.fd, frame(MessageType::Reject, 0, json{{"reason", refuse}}.dump()),
                       Clock::now() + std::chrono::seconds(2), c->who);
            } catch (const Error&) {
            }
            throw Error(c->who + " (" + (h.name.empty() ? "?" : h.name) + "): refused: " + refuse);
          }
          send_all(c->fd.fd, frame(MessageType::Welcome, 0, "{}"), Clock::now() + std::chrono::seconds(5), c->who);
          c->who = "rank " + std::to_string(h.rank) + " (" + h.name + ")";
          names_[static_cast<std::size_t>(h.rank)] = h.name;
          why_[static_cast<std::size_t>(h.rank)] = "";
          peers_[static_cast<std::size_t>(h.rank)] = std::move(c);
          ++joined;
        } catch (const Error& e) {
          // A stray or broken peer is logged and dropped; it never stops the others.
          std::cerr << "fabscope cluster: " << e.what() << "\n";
        }
      }
      pending = std::move(keep);
    }
  }

  void join() {
    const auto deadline = Clock::now() + o_.join_timeout;
    const std::string where = o_.master_addr + ":" + std::to_string(o_.master_port);
    std::string last = "no attempt";
    while (true) {
      addrinfo hints{};
      hints.ai_socktype = SOCK_STREAM;
      addrinfo* res = nullptr;
      int g = ::getaddrinfo(o_.master_addr.c_str(), std::to_string(o_.master_port).c_str(), &hints, &res);
      if (g != 0) {
        last = std::string("cannot resolve MASTER_ADDR: ") + gai_strerror(g);
      } else {
        for (addrinfo* ai = res; ai; ai = ai->ai_next) {
          Fd fd(::socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol));
          if (fd.fd < 0) continue;
          if (::connect(fd.fd, ai->ai_addr, ai->ai_addrlen) == 0) {
            master_.fd = std::move(fd);
            break;
          }
          last = std::strerror(errno);
        }
        ::freeaddrinfo(res);
      }
      if (master_.fd.fd >= 0) break;
      if (Clock::now() >= deadline)
        throw Error("cluster: rank " + std::to_string(o_.rank) + " could not reach rank 0 at " + where + " within " +
                    std::to_string(o_.join_timeout.count() / 1000) + " s: " + last);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    int one = 1;
    ::setsockopt(master_.fd.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    set_nonblocking(master_.fd.fd);
    master_.who = "rank 0 (" + where + ")";
    local_addr_ = local_of(master_.fd.fd);
    Hello h{o_.token, FABSCOPE_VERSION, o_.rank, o_.world, o_.name};
    send_all(master_.fd.fd, frame(MessageType::Hello, o_.rank, encode_hello(h)), deadline, master_.who);
    auto f = wait_frame(master_, Clock::now() + o_.join_timeout);
    if (!f) throw Error("cluster: rank 0 at " + where + " did not answer the hello");
    if (f->first.type == MessageType::Reject) {
      json j = parse_payload(f->second, master_.who);
      throw Error("cluster: rank 0 at " + where + " refused rank " + std::to_string(o_.rank) + ": " +
                  (j.contains("reason") && j["reason"].is_string() ? j["reason"].get<std::string>() : "no reason"));
    }
    if (f->first.type != MessageType::Welcome) throw Error("cluster: rank 0 at " + where + " answered oddly");
  }

  TcpOptions o_;
  Conn master_;
  std::vector<std::unique_ptr<Conn>> peers_;
  std::vector<std::string> why_, names_;
  std::string local_addr_;
};

}  // namespace

std::unique_ptr<Exchange> make_tcp_exchange(const TcpOptions& opts) { return std::make_unique<TcpExchange>(opts); }

}  // namespace fabscope::cluster
