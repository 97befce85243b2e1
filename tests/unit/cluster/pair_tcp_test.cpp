// The tcp pair engine on loopback: only a peer carrying the job's pair secret is measured, a
// stranger who connects first takes no one's place, and a peer trickling bytes is cut off at
// the pair's overall deadline.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <atomic>
#include <thread>

#include "cluster/pair_engine.hpp"
#include "core/socket.hpp"

using namespace fabscope;
using namespace fabscope::cluster;
using namespace std::chrono_literals;

namespace {

constexpr const char* kSecret = "00112233445566778899aabbccddeeff";

int port_of(const PairEngine& e) { return std::stoi(e.address().substr(e.address().rfind(':') + 1)); }

net::Fd dial(const PairEngine& e) {
  std::string why;
  net::Fd fd = net::connect_tcp("127.0.0.1", port_of(e), net::after(5s), why);
  EXPECT_TRUE(fd) << why;
  return fd;
}

}  // namespace

TEST(TcpPair, BothDirectionsAreMeasuredWithTheSecret) {
  auto a = make_tcp_engine("127.0.0.1", 5s), b = make_tcp_engine("127.0.0.1", 5s);
  a->set_secret(kSecret);
  b->set_secret(kSecret);
  PairSide rb;
  std::thread t([&] { rb = b->run(a->address(), false, 200ms); });
  PairSide ra = a->run(b->address(), true, 200ms);
  t.join();
  EXPECT_EQ(ra.error, "");
  EXPECT_EQ(rb.error, "");
  EXPECT_TRUE(ra.rx_gbps && *ra.rx_gbps > 0);
  EXPECT_TRUE(rb.rx_gbps && *rb.rx_gbps > 0);
}

TEST(TcpPair, StrangersWhoConnectFirstTakeNoOnesPlace) {
  auto a = make_tcp_engine("127.0.0.1", 5s), b = make_tcp_engine("127.0.0.1", 5s);
  a->set_secret(kSecret);
  b->set_secret(kSecret);
  // Both wait in b's backlog before the pair starts: the magic alone was once enough.
  net::Fd guesser = dial(*b);
  ASSERT_EQ(net::send_all(guesser.get(), "FSCLPAIRffffffffffffffffffffffffffffffff\n", net::after(2s)), "");
  net::Fd silent = dial(*b);
  ASSERT_EQ(net::send_all(silent.get(), "FSCLPAIR", net::after(2s)), "");
  PairSide rb;
  std::thread t([&] { rb = b->run(a->address(), false, 200ms); });
  PairSide ra = a->run(b->address(), true, 200ms);
  t.join();
  EXPECT_EQ(ra.error, "");
  EXPECT_EQ(rb.error, "");
  EXPECT_TRUE(rb.rx_gbps && ra.rx_gbps);
  std::string got;
  EXPECT_NE(net::recv_exact(guesser.get(), 1, got, net::after(2s)), "");  // closed, never streamed to
}

TEST(TcpPair, ATricklingPeerIsCutOffAtTheOverallDeadline) {
  auto b = make_tcp_engine("127.0.0.1", 1s);
  b->set_secret(kSecret);
  PairSide rb;
  std::atomic<bool> returned{false};
  std::thread t([&] {
    rb = b->run("127.0.0.1:1", false, 300ms);
    returned = true;
  });
  net::Fd c = dial(*b);
  ASSERT_EQ(net::send_all(c.get(), std::string("FSCLPAIR") + kSecret + "\n", net::after(2s)), "");
  std::string ack;
  ASSERT_EQ(net::recv_exact(c.get(), 8, ack, net::after(5s)), "");
  EXPECT_EQ(ack, "FSCLOKAY");
  // One byte every 100 ms for up to 30 s: each well within any idle timeout.
  bool trickling = true;
  for (int i = 0; i < 300 && !returned; ++i) {
    (void)::send(c.get(), "x", 1, MSG_NOSIGNAL);
    std::this_thread::sleep_for(100ms);
    trickling = i < 299;
  }
  t.join();
  EXPECT_TRUE(trickling) << "the pair ended only when the bytes stopped";
  EXPECT_NE(rb.error.find("did not end by the pair's deadline"), std::string::npos) << rb.error;
}

TEST(TcpPair, WithoutASecretNothingRuns) {
  auto b = make_tcp_engine("127.0.0.1", 1s);
  EXPECT_NE(b->run("127.0.0.1:1", false, 100ms).error.find("no pair secret"), std::string::npos);
}
