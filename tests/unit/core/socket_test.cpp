// The socket layer on loopback: deadlines that hold against a peer trickling bytes, the
// pre-authentication gate's bounds (bytes, time, pending connections) and its pause on EMFILE.
#include "core/socket.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <ctime>
#include <thread>
#include <vector>

#include "core/error.hpp"

using namespace fabscope;
using namespace std::chrono_literals;

namespace {

// A 4-byte length prefix frames the first message (a stand-in for the real protocols).
std::size_t length_prefixed(std::string_view b) {
  if (b.size() < 4) return 0;
  if (b.substr(0, 2) != "LN") throw Error("bad magic");
  return 4 + static_cast<std::size_t>(std::stoi(std::string(b.substr(2, 2))));
}

struct Server {
  net::Fd fd = net::listen_tcp("127.0.0.1", 0, 64, true);
  int port = net::local_port(fd.get());
};

net::Fd dial(int port) {
  std::string why;
  auto fd = net::connect_tcp("127.0.0.1", port, net::after(5s), why);
  EXPECT_TRUE(fd) << why;
  return fd;
}

}  // namespace

TEST(Socket, ConnectRefusedSaysSo) {
  Server s;
  const int port = s.port;
  s.fd.reset();
  std::string why;
  EXPECT_FALSE(net::connect_tcp("127.0.0.1", port, net::after(2s), why));
  EXPECT_NE(why.find("refused"), std::string::npos) << why;
}

TEST(Socket, ConnectToAFullBacklogStopsAtTheDeadline) {
  // A listener that never accepts, its queue full: further SYNs are dropped, as by a host that
  // does not answer. A blocking connect would wait for the kernel's retries (minutes).
  net::Fd l(::socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(l.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(l.get(), 0), 0);
  const int port = net::local_port(l.get());
  std::vector<net::Fd> fill;
  std::string why;
  // Fill the queue (its size depends on the kernel): until one connect times out.
  for (int i = 0; i < 8; ++i) {
    auto fd = net::connect_tcp("127.0.0.1", port, net::after(300ms), why);
    if (!fd) break;
    fill.push_back(std::move(fd));
  }
  ASSERT_LT(fill.size(), 8u) << "the backlog never filled";
  const auto t0 = net::Clock::now();
  EXPECT_FALSE(net::connect_tcp("127.0.0.1", port, net::after(500ms), why));
  EXPECT_EQ(why, "connect timed out");
  EXPECT_LT(net::Clock::now() - t0, 30s);  // bound of the test, not a performance claim
}

TEST(Socket, RecvExactIsCutAtTheOverallDeadlineWhileBytesTrickle) {
  Server s;
  net::Fd client = dial(s.port);
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    while (!stop) {
      (void)::send(client.get(), "x", 1, MSG_NOSIGNAL);
      std::this_thread::sleep_for(50ms);
    }
  });
  std::string why;
  net::Fd conn;
  for (int i = 0; i < 100 && !conn; ++i) {
    conn = net::Fd(::accept(s.fd.get(), nullptr, nullptr));
    if (!conn) std::this_thread::sleep_for(20ms);
  }
  ASSERT_TRUE(conn);
  std::string out;
  why = net::recv_exact(conn.get(), 1 << 20, out, net::after(400ms));
  stop = true;
  trickle.join();
  EXPECT_EQ(why.rfind("timed out after ", 0), 0u) << why;
  EXPECT_FALSE(out.empty());  // bytes did come: an idle timeout would never have fired
}

TEST(Socket, SendAllTimesOutWhenThePeerNeverReads) {
  Server s;
  net::Fd client = dial(s.port);
  const std::string big(64 << 20, 'x');
  EXPECT_EQ(net::send_all(client.get(), big, net::after(300ms)).rfind("timed out after sending", 0), 0u);
}

TEST(Gate, PassesTheFirstCompleteMessageAndKeepsWhatFollows) {
  Server s;
  net::Gate g(s.fd.get(), {}, length_prefixed);
  net::Fd c = dial(s.port);
  ASSERT_EQ(net::send_all(c.get(), "LN05helloMORE", net::after(2s)), "");
  auto a = g.next(net::after(5s), nullptr);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->message, "LN05hello");
  EXPECT_EQ(a->rest.substr(0, 4), "MORE");
  EXPECT_EQ(a->peer.rfind("127.0.0.1:", 0), 0u);
}

TEST(Gate, ASlowStrangerDoesNotDelayARealPeer) {
  Server s;
  net::Gate g(s.fd.get(), {}, length_prefixed);
  net::Fd stranger = dial(s.port);
  ASSERT_EQ(net::send_all(stranger.get(), "LN9", net::after(2s)), "");  // and then nothing
  net::Fd real = dial(s.port);
  ASSERT_EQ(net::send_all(real.get(), "LN02ok", net::after(2s)), "");
  auto a = g.next(net::after(10s), nullptr);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->message, "LN02ok");
}

// A connection from `ipv4` (host order, a 127/8 address) to the loopback port.
net::Fd dial_from(std::uint32_t ipv4, int port) {
  net::Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in from{};
  from.sin_family = AF_INET;
  from.sin_addr.s_addr = htonl(ipv4);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<std::uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
      ::connect(fd.get(), reinterpret_cast<sockaddr*>(&to), sizeof to) != 0)
    return net::Fd();
  return fd;
}

// At the cap, the address holding the most pending connections loses its oldest: a peer alone on
// its address stays although it waited longest.
TEST(Gate, AtTheCap_TheAddressHoldingTheMostLosesItsOldest) {
  Server s;
  net::Gate g(s.fd.get(), {4, 64, 5000ms, 16}, length_prefixed);
  std::vector<std::string> drops;
  auto on_drop = [&](const std::string& peer, const std::string&) { drops.push_back(peer); };
  std::vector<net::Fd> conns;
  conns.push_back(dial_from(0x7f000001, s.port));  // alone on 127.0.0.1, the oldest
  EXPECT_FALSE(g.next(net::after(200ms), on_drop));
  for (int i = 0; i < 3; ++i) conns.push_back(dial_from(0x7f000002, s.port));
  EXPECT_FALSE(g.next(net::after(200ms), on_drop));
  EXPECT_TRUE(drops.empty());
  conns.push_back(dial_from(0x7f000003, s.port));
  EXPECT_FALSE(g.next(net::after(200ms), on_drop));
  ASSERT_EQ(drops.size(), 1u);
  EXPECT_EQ(drops[0].rfind("127.0.0.2:", 0), 0u) << drops[0];
  EXPECT_EQ(g.pending(), 4u);
}

// Silent connections from one address take at most its share of the pending slots: each one over
// it drops that address's oldest, and a real peer from another address still gets through.
TEST(Gate, OneAddressHoldsAtMostItsShare_ItsOldestGoesFirst) {
  Server s;
  net::Gate g(s.fd.get(), {64, 64, 5000ms, 2}, length_prefixed);
  std::vector<std::string> drops;
  auto on_drop = [&](const std::string& peer, const std::string& why) { drops.push_back(peer + " " + why); };
  std::vector<net::Fd> silent;
  for (int i = 0; i < 5; ++i) silent.push_back(dial(s.port));  // 127.0.0.1, never a byte
  EXPECT_FALSE(g.next(net::after(500ms), on_drop));
  EXPECT_EQ(g.pending(), 2u);
  ASSERT_EQ(drops.size(), 3u);
  EXPECT_NE(drops[0].find("evicted: 2 connections from 127.0.0.1 were waiting"), std::string::npos) << drops[0];
  net::Fd real = dial_from(0x7f000002, s.port);  // 127.0.0.2
  ASSERT_TRUE(real);
  ASSERT_EQ(net::send_all(real.get(), "LN02ok", net::after(2s)), "");
  auto a = g.next(net::after(10s), on_drop);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->message, "LN02ok");
  EXPECT_EQ(drops.size(), 3u) << "the other address's connection dropped someone";
}

TEST(Gate, DropsAFirstMessageOverTheBoundWithoutReadingIt) {
  Server s;
  net::Gate g(s.fd.get(), {8, 64, 5000ms}, length_prefixed);
  std::vector<std::string> drops;
  net::Fd c = dial(s.port);
  ASSERT_EQ(net::send_all(c.get(), "LN99" + std::string(99, 'x'), net::after(2s)), "");
  EXPECT_FALSE(g.next(net::after(500ms), [&](const std::string&, const std::string& why) { drops.push_back(why); }));
  ASSERT_EQ(drops.size(), 1u);
  EXPECT_NE(drops[0].find("more than the 64 allowed"), std::string::npos) << drops[0];
  EXPECT_EQ(g.pending(), 0u);
}

TEST(Gate, DropsATrickleAtTheFirstMessageDeadline) {
  Server s;
  net::Gate g(s.fd.get(), {8, 4096, 300ms}, length_prefixed);
  net::Fd c = dial(s.port);
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    (void)::send(c.get(), "LN99", 4, MSG_NOSIGNAL);
    while (!stop) {
      (void)::send(c.get(), "x", 1, MSG_NOSIGNAL);
      std::this_thread::sleep_for(20ms);
    }
  });
  std::vector<std::string> drops;
  // next() returns at its own deadline; the trickler must have been dropped before it.
  EXPECT_FALSE(g.next(net::after(1s), [&](const std::string&, const std::string& why) { drops.push_back(why); }));
  stop = true;
  trickle.join();
  ASSERT_EQ(drops.size(), 1u);
  EXPECT_NE(drops[0].find("no complete first message within 300 ms"), std::string::npos) << drops[0];
}

TEST(Gate, EvictsTheOldestPendingAtTheCap) {
  Server s;
  net::Gate g(s.fd.get(), {4, 4096, 10000ms}, length_prefixed);
  std::vector<net::Fd> idle;
  for (int i = 0; i < 6; ++i) idle.push_back(dial(s.port));
  std::vector<std::string> drops;
  auto on_drop = [&](const std::string&, const std::string& why) { drops.push_back(why); };
  // Poll until every idle connection was accepted (the kernel may hand them over in batches).
  for (int i = 0; i < 50 && drops.size() < 2; ++i) (void)g.next(net::after(50ms), on_drop);
  EXPECT_EQ(g.pending(), 4u);
  ASSERT_EQ(drops.size(), 2u);
  EXPECT_NE(drops[0].find("evicted"), std::string::npos);
  net::Fd real = dial(s.port);
  ASSERT_EQ(net::send_all(real.get(), "LN02ok", net::after(2s)), "");
  auto a = g.next(net::after(5s), on_drop);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->message, "LN02ok");
}

TEST(Gate, PausesAcceptingWhenOutOfDescriptors) {
  Server s;
  net::Gate g(s.fd.get(), {}, length_prefixed);
  net::Fd c = dial(s.port);
  // Lower this process's descriptor limit to what is open now: accept() fails with EMFILE.
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &old), 0);
  // The lowest free descriptor number is the next one the kernel hands out.
  const int lowest_free = ::dup(0);
  ASSERT_GE(lowest_free, 0);
  ::close(lowest_free);
  rlimit low = old;
  low.rlim_cur = static_cast<rlim_t>(lowest_free);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  std::clock_t cpu0 = std::clock();
  auto a = g.next(net::after(1s), nullptr);
  const double cpu_s = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &old), 0);
  EXPECT_FALSE(a);
  // Backing off 50 ms, 100 ms, ... : a handful of tries in the second, not a spin.
  EXPECT_GE(g.accept_backoffs(), 1);
  EXPECT_LE(g.accept_backoffs(), 10);
  EXPECT_LT(cpu_s, 0.5);
  // With descriptors back, the waiting connection is taken.
  ASSERT_EQ(net::send_all(c.get(), "LN02ok", net::after(2s)), "");
  a = g.next(net::after(5s), nullptr);
  ASSERT_TRUE(a);
}

TEST(Secret, EqualOnlyWhenIdentical) {
  EXPECT_TRUE(net::secret_equal("abc", "abc"));
  EXPECT_FALSE(net::secret_equal("abc", "abd"));
  EXPECT_FALSE(net::secret_equal("abc", "abcd"));
  EXPECT_FALSE(net::secret_equal("", "a"));
  const auto a = net::random_secret(), b = net::random_secret();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, b);
}

namespace fabscope::net {
namespace {

// Lines about strangers at chosen instants: `burst` per window, then counted; the next line
// allowed carries the count.
TEST(LogLimiter, AtMostBurstLinesPerWindow_TheRestCountedInTheNextLine) {
  LogLimiter l(3, std::chrono::seconds(10));
  const Clock::time_point t0{std::chrono::seconds(1000)};
  std::size_t left_out = 99;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(l.allow(t0 + std::chrono::seconds(i), left_out)) << i;
    EXPECT_EQ(left_out, 0u);
  }
  for (int i = 0; i < 500; ++i) EXPECT_FALSE(l.allow(t0 + std::chrono::seconds(5), left_out));
  EXPECT_EQ(l.left_out(), 500u);
  EXPECT_FALSE(l.allow(t0 + std::chrono::milliseconds(9999), left_out));
  ASSERT_TRUE(l.allow(t0 + std::chrono::seconds(10), left_out));
  EXPECT_EQ(left_out, 501u);
  EXPECT_EQ(l.left_out(), 0u);
}

}  // namespace
}  // namespace fabscope::net
