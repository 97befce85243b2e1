// The tcp pair engine: the initiator connects, proves it belongs to the job (the pair secret of
// rank 0's plan) and streams for the duration, shuts its side down, then receives the
// responder's stream; each side measures what it received, from the first byte to the end of
// the stream. Every step ends by a deadline: the setup allowance for connect and hello, the
// duration plus the allowance for each stream.
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "cluster/pair_engine.hpp"
#include "core/error.hpp"
#include "core/socket.hpp"

namespace fabscope::cluster {

namespace {

using Clock = std::chrono::steady_clock;
constexpr char kPreamble[8] = {'F', 'S', 'C', 'L', 'P', 'A', 'I', 'R'};
constexpr char kAccepted[8] = {'F', 'S', 'C', 'L', 'O', 'K', 'A', 'Y'};

std::string first_ipv4() {
  ifaddrs* ifs = nullptr;
  std::string out = "127.0.0.1";
  if (getifaddrs(&ifs) != 0) return out;
  for (ifaddrs* i = ifs; i; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || (i->ifa_flags & IFF_LOOPBACK)) continue;
    char buf[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, buf, sizeof buf);
    out = buf;
    break;
  }
  freeifaddrs(ifs);
  return out;
}

std::string err(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// Streams for duration (sending only while the peer reads: never past the end); "" or the error.
std::string stream_out(int fd, std::chrono::milliseconds duration) {
  static std::vector<char> buf(1 << 20, 'f');
  const auto end = Clock::now() + duration;
  while (Clock::now() < end) {
    ssize_t n = ::send(fd, buf.data(), buf.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, net::ms_left(end));
      continue;
    }
    return err("send");
  }
  ::shutdown(fd, SHUT_WR);
  return "";
}

// Receives the peer's stream until it ends; the whole stream must end by the deadline (a peer
// trickling a byte at a time is cut off there, not kept alive by each byte).
PairSide stream_in(int fd, net::Deadline deadline) {
  static std::vector<char> buf(1 << 20);
  std::uint64_t bytes = 0;
  Clock::time_point first{};
  while (true) {
    ssize_t n = ::recv(fd, buf.data(), buf.size(), MSG_DONTWAIT);
    if (n > 0) {
      if (bytes == 0) first = Clock::now();
      bytes += static_cast<std::uint64_t>(n);
      continue;
    }
    if (n == 0) break;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return {std::nullopt, err("recv"), std::nullopt};
    const int left = net::ms_left(deadline);
    if (left == 0)
      return {std::nullopt, "the peer's stream did not end by the pair's deadline (" + std::to_string(bytes) +
                                " bytes received)", std::nullopt};
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, left);
  }
  const double s = std::chrono::duration<double>(Clock::now() - first).count();
  if (bytes == 0 || s <= 0) return {std::nullopt, "the peer sent nothing", std::nullopt};
  return {bytes * 8.0 / s / 1e9, "", std::nullopt};
}

// The initiator's first message: the preamble, the job's pair secret and a newline. Only a peer
// that knows the secret (it travels in rank 0's plan) is measured.
std::size_t pair_hello_size(std::string_view b) {
  const std::size_t n = std::min(b.size(), sizeof kPreamble);
  if (std::memcmp(b.data(), kPreamble, n) != 0) throw Error("not a fabscope pair test");
  const auto nl = b.find('\n', sizeof kPreamble);
  return nl == std::string_view::npos ? 0 : nl + 1;
}

class TcpEngine : public PairEngine {
 public:
  TcpEngine(const std::string& host, std::chrono::milliseconds setup) : setup_(setup) {
    try {
      listener_ = net::listen_tcp("", 0, 16, true);
    } catch (const Error& e) {
      throw Error(std::string("cluster tcp engine: ") + e.what());
    }
    address_ = (host.empty() ? first_ipv4() : host) + ":" + std::to_string(net::local_port(listener_.get()));
  }
  std::string name() const override { return "tcp"; }
  std::string address() const override { return address_; }

  PairSide run(const std::string& peer, bool initiator, std::chrono::milliseconds duration) override {
    if (secret().empty()) return {std::nullopt, "no pair secret from rank 0's plan", std::nullopt};
    return initiator ? initiate(peer, duration) : respond(duration);
  }

 private:
  PairSide initiate(const std::string& peer, std::chrono::milliseconds duration) {
    auto colon = peer.rfind(':');
    int port = 0;
    if (colon == std::string::npos || (port = std::atoi(peer.c_str() + colon + 1)) <= 0 || port > 65535)
      return {std::nullopt, "peer address '" + peer + "' has no port", std::nullopt};
    const auto setup = net::after(setup_);
    std::string why;
    net::Fd fd;
    // The peer may open its side a moment later: retry until the setup deadline.
    while (!(fd = net::connect_tcp(peer.substr(0, colon), port, setup, why, true))) {
      if (net::ms_left(setup) == 0) return {std::nullopt, "connect to " + peer + ": " + why, std::nullopt};
      ::usleep(100000);
    }
    std::string ack;
    if (auto e = net::send_all(fd.get(), std::string(kPreamble, sizeof kPreamble) + secret() + "\n", setup); !e.empty())
      return {std::nullopt, "pair hello to " + peer + ": " + e, std::nullopt};
    if (auto e = net::recv_exact(fd.get(), sizeof kAccepted, ack, setup); !e.empty())
      return {std::nullopt, peer + " did not accept the pair test: " + e, std::nullopt};
    if (std::memcmp(ack.data(), kAccepted, sizeof kAccepted) != 0)
      return {std::nullopt, peer + " answered the pair hello oddly", std::nullopt};
    if (auto e = stream_out(fd.get(), duration); !e.empty()) return {std::nullopt, e, std::nullopt};
    return stream_in(fd.get(), net::after(duration + setup_));
  }

  PairSide respond(std::chrono::milliseconds duration) {
    const auto setup = net::after(setup_);
    net::Gate gate(listener_.get(), {16, sizeof kPreamble + 257, setup_}, pair_hello_size);
    int strangers = 0;
    std::string last;
    auto dropped = [&](const std::string& who, const std::string& why) { ++strangers, last = who + ": " + why; };
    while (true) {
      auto a = gate.next(setup, dropped);
      if (!a) {
        std::string out = "the peer did not connect within " + std::to_string(setup_.count() / 1000.0).substr(0, 4) + " s";
        if (strangers) out += " (" + std::to_string(strangers) + " other connection(s) refused, last " + last + ")";
        return {std::nullopt, out, std::nullopt};
      }
      const std::string_view got = std::string_view(a->message).substr(sizeof kPreamble);
      if (!net::secret_equal(got.substr(0, got.size() - 1), secret())) {
        dropped(a->peer, "without this job's pair secret");
        continue;
      }
      if (!net::send_all(a->fd.get(), std::string(kAccepted, sizeof kAccepted), setup).empty()) continue;
      // The initiator streams for the duration: its stream must be over by then plus the allowance.
      PairSide out = stream_in(a->fd.get(), net::after(duration + setup_));
      if (out.error.empty())
        if (std::string e = stream_out(a->fd.get(), duration); !e.empty()) out.error = e;
      return out;
    }
  }

  net::Fd listener_;
  std::chrono::milliseconds setup_;
  std::string address_;
};

}  // namespace

std::string default_pair_host() { return first_ipv4(); }

std::unique_ptr<PairEngine> make_tcp_engine(const std::string& host, std::chrono::milliseconds setup) {
  return std::make_unique<TcpEngine>(host, setup);
}

}  // namespace fabscope::cluster
