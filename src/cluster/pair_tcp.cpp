// The tcp pair engine: the initiator connects and streams for the duration, shuts its side
// down, then receives the responder's stream; each side measures what it received, from the
// first byte to the end of the stream.
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

namespace fabscope::cluster {

namespace {

using Clock = std::chrono::steady_clock;
constexpr char kPreamble[8] = {'F', 'S', 'C', 'L', 'P', 'A', 'I', 'R'};
constexpr auto kSetup = std::chrono::seconds(15);  // connect/accept allowance beyond the duration

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

void set_timeout(int fd, std::chrono::milliseconds t) {
  timeval tv{static_cast<time_t>(t.count() / 1000), static_cast<suseconds_t>((t.count() % 1000) * 1000)};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

std::string err(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// Streams for duration; returns "" or the error.
std::string stream_out(int fd, std::chrono::milliseconds duration) {
  static std::vector<char> buf(1 << 20, 'f');
  const auto end = Clock::now() + duration;
  while (Clock::now() < end) {
    ssize_t n = ::send(fd, buf.data(), buf.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return err("send");
    }
  }
  ::shutdown(fd, SHUT_WR);
  return "";
}

PairSide stream_in(int fd) {
  static std::vector<char> buf(1 << 20);
  std::uint64_t bytes = 0;
  Clock::time_point first{};
  while (true) {
    ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
    if (n > 0) {
      if (bytes == 0) first = Clock::now();
      bytes += static_cast<std::uint64_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return {std::nullopt, err("recv")};
    break;
  }
  const double s = std::chrono::duration<double>(Clock::now() - first).count();
  if (bytes == 0 || s <= 0) return {std::nullopt, "the peer sent nothing"};
  return {bytes * 8.0 / s / 1e9, ""};
}

class TcpEngine : public PairEngine {
 public:
  explicit TcpEngine(const std::string& host) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (listener_ < 0) throw Error(err("cluster tcp engine: socket"));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t len = sizeof a;
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listener_, 16) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      throw Error(err("cluster tcp engine: listen"));
    address_ = (host.empty() ? first_ipv4() : host) + ":" + std::to_string(ntohs(a.sin_port));
  }
  ~TcpEngine() override { ::close(listener_); }
  std::string name() const override { return "tcp"; }
  std::string address() const override { return address_; }

  PairSide run(const std::string& peer, bool initiator, std::chrono::milliseconds duration) override {
    const auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(duration + kSetup);
    if (initiator) {
      auto colon = peer.rfind(':');
      if (colon == std::string::npos) return {std::nullopt, "peer address '" + peer + "' has no port"};
      addrinfo hints{};
      hints.ai_family = AF_INET;
      hints.ai_socktype = SOCK_STREAM;
      addrinfo* res = nullptr;
      if (getaddrinfo(peer.substr(0, colon).c_str(), peer.substr(colon + 1).c_str(), &hints, &res) != 0 || !res)
        return {std::nullopt, "cannot resolve " + peer};
      int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      set_timeout(fd, limit);
      std::string e;
      const auto deadline = Clock::now() + kSetup;
      while (::connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
        e = "connect to " + peer + ": " + std::strerror(errno);
        if (Clock::now() >= deadline) break;
        ::close(fd);
        fd = ::socket(AF_INET, SOCK_STREAM, 0);
        set_timeout(fd, limit);
        ::usleep(100000);
        e.clear();
      }
      freeaddrinfo(res);
      if (!e.empty()) {
        ::close(fd);
        return {std::nullopt, e};
      }
      PairSide out;
      if (::send(fd, kPreamble, sizeof kPreamble, MSG_NOSIGNAL) != sizeof kPreamble) out.error = err("send");
      if (out.error.empty()) out.error = stream_out(fd, duration);
      if (out.error.empty()) out = stream_in(fd);
      ::close(fd);
      return out;
    }
    pollfd p{listener_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::chrono::milliseconds(kSetup).count())) <= 0)
      return {std::nullopt, "the peer did not connect within " + std::to_string(kSetup.count()) + " s"};
    int fd = ::accept(listener_, nullptr, nullptr);
    if (fd < 0) return {std::nullopt, err("accept")};
    set_timeout(fd, limit);
    char pre[sizeof kPreamble];
    std::size_t got = 0;
    while (got < sizeof pre) {
      ssize_t n = ::recv(fd, pre + got, sizeof pre - got, 0);
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    PairSide out;
    if (got != sizeof pre || std::memcmp(pre, kPreamble, sizeof pre) != 0) {
      out.error = "a connection that is not a fabscope pair test";
    } else {
      out = stream_in(fd);
      if (out.error.empty()) {
        std::string e = stream_out(fd, duration);
        if (!e.empty()) out.error = e;
      }
    }
    ::close(fd);
    return out;
  }

 private:
  int listener_ = -1;
  std::string address_;
};

}  // namespace

std::string default_pair_host() { return first_ipv4(); }

std::unique_ptr<PairEngine> make_tcp_engine(const std::string& host) { return std::make_unique<TcpEngine>(host); }

}  // namespace fabscope::cluster
