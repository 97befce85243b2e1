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
#include "core/strings.hpp"
#include "core/error.hpp"
#include "core/socket.hpp"

namespace fabscope::cluster {

namespace {

using Clock = net::Clock;
using net::ms_left;

// Pre-authentication bounds of rank 0: a hello is one small frame, sent with the connect.
constexpr net::GateLimits kHelloLimits{64, kHeaderBytes + kMaxHelloBytes, std::chrono::milliseconds(5000)};
// Lines on stderr about refused or dropped connections: at most this many per window.
constexpr std::size_t kStrangerLines = 10;
constexpr std::chrono::seconds kStrangerLinesWindow{10};

void send_all(int fd, const std::string& bytes, Clock::time_point deadline, const std::string& to) {
  if (std::string e = net::send_all(fd, bytes, deadline); !e.empty()) throw Error(to + ": send " + e);
}

std::string frame(MessageType type, int rank, const std::string& payload) {
  if (payload.size() > kMaxPayloadBytes)
    throw Error("cluster exchange: a message of " + std::to_string(payload.size()) + " bytes exceeds the " +
                std::to_string(kMaxPayloadBytes) + " allowed");
  auto h = encode_header({type, static_cast<std::uint32_t>(rank), static_cast<std::uint32_t>(payload.size())});
  return std::string(reinterpret_cast<const char*>(h.data()), h.size()) + payload;
}

// A connection with a receive buffer: frames are cut out as their bytes arrive. It never reads
// past the frame it is assembling, so the buffer is bounded by one frame.
struct Conn {
  net::Fd fd;
  std::string who;   // "10.0.0.5:41234" then "rank 3 (node-c)"
  std::string in;
  bool closed = false;
  // Reads what is there; returns a complete frame when one is buffered. Throws Error on a
  // malformed header (naming the peer).
  std::optional<std::pair<Header, std::string>> poll_frame() {
    char buf[65536];
    while (!closed) {
      std::size_t need = kHeaderBytes;
      if (in.size() >= kHeaderBytes)
        need += parse_header(reinterpret_cast<const unsigned char*>(in.data()), kHeaderBytes, who).payload_bytes;
      if (in.size() >= need) break;
      ssize_t n = ::recv(fd.get(), buf, std::min(sizeof buf, need - in.size()), MSG_DONTWAIT);
      if (n > 0) {
        in.append(buf, static_cast<std::size_t>(n));
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
    pollfd p{c.fd.get(), POLLIN, 0};
    const int left = ms_left(deadline);
    if (left == 0) return std::nullopt;
    ::poll(&p, 1, left);
  }
}

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
      send_all(master_.fd.get(), frame(MessageType::Data, o_.rank, mine), deadline, "rank 0");
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
      for (int r : waiting) pfds.push_back({peers_[static_cast<std::size_t>(r)]->fd.get(), POLLIN, 0});
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
          send_all(p->fd.get(), f, deadline, p->who);
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
    net::Fd listener;
    try {
      listener = net::listen_tcp("", o_.master_port, 1024, false);
    } catch (const Error& e) {
      throw Error(std::string("cluster: rank 0 ") + e.what() + " (MASTER_PORT; another job, or torchrun's own store, "
                  "on that port? set FABSCOPE_CLUSTER_PORT)");
    }
    local_addr_ = o_.master_addr;
    // Every connection says hello first: only a header and a small hello are read from it before
    // its token is checked, for at most kHelloLimits' time, at most 64 at once (oldest dropped).
    net::Gate gate(listener.get(), kHelloLimits, hello_frame_size);
    // A stray or broken peer is logged and dropped; it never stops the others. Lines about
    // connections that are not ranks are rate-limited: a stranger connecting in a loop costs a
    // few lines, then one saying how many were left out.
    net::LogLimiter limiter(kStrangerLines, kStrangerLinesWindow);
    auto say = [&limiter](const std::string& line) {
      std::size_t left_out = 0;
      if (!limiter.allow(Clock::now(), left_out)) return;
      if (left_out)
        std::cerr << "fabscope cluster: (" << left_out << " more refused or dropped connections not shown)\n";
      std::cerr << "fabscope cluster: " << line << "\n";
    };
    auto log = [&say](const std::string& who, const std::string& why) {
      say(core::printable(who) + ": " + core::printable(why));
    };
    const auto deadline = Clock::now() + o_.join_timeout;
    int joined = 1;
    while (joined < o_.world) {
      auto a = gate.next(deadline, log);
      if (!a) break;
      auto c = std::make_unique<Conn>();
      c->fd = std::move(a->fd);
      c->who = a->peer;
      c->in = std::move(a->rest);
      try {
        Hello h = parse_hello(a->message.substr(kHeaderBytes), c->who);
        if (!token_equal(h.token, o_.token)) {
          // A peer without the token never replaces the reason a rank is missing (a stranger
          // could hide why a real rank failed); it only adds a note to one never heard of.
          if (h.rank > 0 && h.rank < o_.world && why_[static_cast<std::size_t>(h.rank)] == "never joined")
            why_[static_cast<std::size_t>(h.rank)] =
                "never joined (" + c->who + " claimed this rank but was refused: wrong token)";
          refuse(*c, "wrong token (not this job's FABSCOPE_CLUSTER_TOKEN)");
          throw Error(c->who + ": refused: wrong token");
        }
        std::string why;
        if (h.world != o_.world)
          why = "WORLD_SIZE " + std::to_string(h.world) + ", rank 0 has " + std::to_string(o_.world);
        else if (h.rank <= 0 || h.rank >= o_.world) why = "RANK " + std::to_string(h.rank) + " out of range";
        else if (peers_[static_cast<std::size_t>(h.rank)])
          why = "RANK " + std::to_string(h.rank) + " already joined from " + peers_[static_cast<std::size_t>(h.rank)]->who;
        if (!why.empty()) {
          if (h.rank > 0 && h.rank < o_.world && !peers_[static_cast<std::size_t>(h.rank)])
            why_[static_cast<std::size_t>(h.rank)] = c->who + " refused: " + why;
          refuse(*c, why);
          throw Error(c->who + " (" + (h.name.empty() ? "?" : h.name) + "): refused: " + why);
        }
        send_all(c->fd.get(), frame(MessageType::Welcome, 0, "{}"), Clock::now() + std::chrono::seconds(5), c->who);
        c->who = "rank " + std::to_string(h.rank) + " (" + h.name + ")";
        names_[static_cast<std::size_t>(h.rank)] = h.name;
        why_[static_cast<std::size_t>(h.rank)] = "";
        peers_[static_cast<std::size_t>(h.rank)] = std::move(c);
        ++joined;
      } catch (const Error& e) {
        say(core::printable(e.what()));
      }
    }
    if (limiter.left_out())
      std::cerr << "fabscope cluster: (" << limiter.left_out() << " more refused or dropped connections not shown)\n";
  }

  // Tells a refused peer why (best effort, briefly).
  static void refuse(Conn& c, const std::string& why) {
    (void)net::send_all(c.fd.get(), frame(MessageType::Reject, 0, json{{"reason", why}}.dump()),
                        Clock::now() + std::chrono::seconds(2));
  }

  void join() {
    const auto deadline = Clock::now() + o_.join_timeout;
    const std::string where = o_.master_addr + ":" + std::to_string(o_.master_port);
    std::string last = "no attempt";
    // Rank 0 may start later: retry until the join deadline; each connect ends by it too (an
    // address that drops SYNs would hold a blocking connect for minutes).
    while (true) {
      master_.fd = net::connect_tcp(o_.master_addr, o_.master_port, deadline, last);
      if (master_.fd) break;
      if (Clock::now() >= deadline)
        throw Error("cluster: rank " + std::to_string(o_.rank) + " could not reach rank 0 at " + where + " within " +
                    std::to_string(o_.join_timeout.count() / 1000) + " s: " + last);
      std::this_thread::sleep_for(std::min<Clock::duration>(std::chrono::milliseconds(200), deadline - Clock::now()));
    }
    master_.who = "rank 0 (" + where + ")";
    local_addr_ = net::local_ip(master_.fd.get());
    Hello h{o_.token, FABSCOPE_VERSION, o_.rank, o_.world, o_.name};
    send_all(master_.fd.get(), frame(MessageType::Hello, o_.rank, encode_hello(h)), deadline, master_.who);
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
