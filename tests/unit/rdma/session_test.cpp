// The session machinery without an RDMA device: the control connection (bounded, watchdog),
// an unreachable server, and both sides explaining a failure through the control connection.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "core/socket.hpp"
#include "rdma/control.hpp"
#include "rdma/findings.hpp"
#include "rdma/rdma.hpp"

using namespace fabscope;
using namespace fabscope::rdma;

namespace {
std::pair<Control, Control> pair_of() {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) throw std::runtime_error("socketpair");
  return {Control(sv[0]), Control(sv[1])};
}
}  // namespace

TEST(RdmaControl, Messages_CrossAsJsonLines) {
  auto [a, b] = pair_of();
  Watchdog wd("client", 2);
  wd.begin("t");
  a.send(json{{"run", 65536}}, wd);
  a.send(json{{"progress", 3}}, wd);
  EXPECT_EQ(b.recv(wd)["run"], 65536);
  EXPECT_EQ(b.recv(wd)["progress"], 3);
  EXPECT_FALSE(b.poll());
}

TEST(RdmaControl, SilentPeer_TimesOutNamingTheStep) {
  auto [a, b] = pair_of();
  Watchdog wd("client", 0.3);
  wd.begin("hello");
  auto t0 = std::chrono::steady_clock::now();
  try {
    b.recv(wd);
    FAIL() << "no throw";
  } catch (const Failure& f) {
    EXPECT_EQ(f.finding.id, "rdma.timeout");
    EXPECT_NE(f.finding.message.find("client, step hello"), std::string::npos) << f.finding.message;
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}

TEST(RdmaControl, PeerError_IsThrownAsThePeersFinding) {
  auto [a, b] = pair_of();
  Watchdog wd("server", 2);
  Finding f;
  f.id = "rdma.memlock";
  f.severity = Severity::Fail;
  f.message = "cannot lock";
  a.send(json{{"error", f}}, wd);
  try {
    b.recv(wd);
    FAIL() << "no throw";
  } catch (const PeerFailure& e) {
    EXPECT_EQ(e.finding.id, "rdma.memlock");
  }
}

TEST(RdmaControl, Garbage_IsAControlFailureNotACrash) {
  auto [a, b] = pair_of();
  Watchdog wd("server", 2);
  const char junk[] = "GET / HTTP/1.0\r\n\r\n";
  ASSERT_GT(write(a.fd(), junk, sizeof junk - 1), 0);
  try {
    b.recv(wd);
    FAIL() << "no throw";
  } catch (const Failure& e) {
    EXPECT_EQ(e.finding.id, "rdma.control_lost");
    EXPECT_NE(e.finding.evidence.find("GET / HTTP"), std::string::npos) << e.finding.evidence;
  }
}

TEST(RdmaControl, ClosedPeer_IsAControlFailure) {
  auto [a, b] = pair_of();
  Watchdog wd("client", 2);
  { Control gone = std::move(a); }
  try {
    b.recv(wd);
    FAIL() << "no throw";
  } catch (const Failure& e) {
    EXPECT_EQ(e.finding.id, "rdma.control_lost");
    EXPECT_NE(e.finding.evidence.find("closed"), std::string::npos);
  }
}

TEST(RdmaSession, NoServer_IsUnreachableWithTheNoServerFinding) {
  int port;
  {
    Options o;
    o.tcp_port = 0;
    Server s(o);  // bind, note the port, close: nothing listens there afterwards
    port = s.tcp_port();
  }
  Options o;
  o.tcp_port = port;
  o.timeout_s = 2;
  try {
    run("127.0.0.1", o);
    FAIL() << "no throw";
  } catch (const Unreachable& u) {
    ASSERT_FALSE(u.result.findings.empty());
    EXPECT_EQ(u.result.findings[0].id, "rdma.no_server");
    EXPECT_FALSE(u.result.completed);
  }
}

TEST(RdmaSession, UnresolvableHost_IsUnreachable) {
  Options o;
  o.timeout_s = 1;
  EXPECT_THROW(run("no-such-host.invalid", o), Unreachable);
}

TEST(RdmaSession, ServerPortInUse_IsAnErrorNamingIt) {
  Options o;
  o.tcp_port = 0;
  Server a(o);
  o.tcp_port = a.tcp_port();
  try {
    Server b(o);
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(o.tcp_port)), std::string::npos) << e.what();
  }
}

TEST(RdmaSession, Stop_EndsAWaitingServer) {
  Options o;
  o.tcp_port = 0;
  Server s(o);
  std::thread t([&] { std::this_thread::sleep_for(std::chrono::milliseconds(100)); s.stop(); });
  auto r = s.serve_one(0);
  t.join();
  EXPECT_FALSE(r);
}

TEST(RdmaSession, NoRdmaDevice_BothSidesExplainIt) {
  std::error_code ec;
  if (std::filesystem::exists("/sys/class/infiniband", ec) && !std::filesystem::is_empty("/sys/class/infiniband", ec))
    GTEST_SKIP() << "this machine has RDMA devices; the VM test covers real sessions";
  Options o;
  o.tcp_port = 0;
  o.timeout_s = 5;
  Server s(o);
  std::optional<Result> served;
  std::thread t([&] { served = s.serve_one(20); });
  o.tcp_port = s.tcp_port();
  Result r = run("127.0.0.1", o);
  t.join();
  EXPECT_FALSE(r.completed);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id, "rdma.no_device");
  EXPECT_EQ(r.verdict.rfind("FAIL", 0), 0u);
  ASSERT_TRUE(served);
  EXPECT_FALSE(served->completed);
  ASSERT_FALSE(served->findings.empty());
  // The client's failure, quoted as what the client said: never taken as the server's own.
  EXPECT_EQ(served->findings[0].id, "rdma.peer_failed");
  EXPECT_NE(served->findings[0].message.find("the client said: rdma.no_device"), std::string::npos)
      << served->findings[0].message;
}

namespace {

bool no_rdma_device() {
  std::error_code ec;
  return !std::filesystem::exists("/sys/class/infiniband", ec) || std::filesystem::is_empty("/sys/class/infiniband", ec);
}

// A raw TCP client of the server's control port.
net::Fd raw_client(int port) {
  std::string why;
  net::Fd fd = net::connect_tcp("127.0.0.1", port, net::after(std::chrono::seconds(5)), why);
  EXPECT_TRUE(fd) << why;
  return fd;
}

}  // namespace

TEST(RdmaControl, TricklingBytes_DoNotKeepTheWatchdogAlive) {
  auto [a, b] = pair_of();
  std::atomic<bool> done{false}, stop{false};
  std::thread t([&, fd = a.fd()] {
    // 100 bytes, one every 20 ms, never a newline: each comes well within the 0.3 s timeout.
    for (int i = 0; i < 100 && !stop; ++i) {
      (void)write(fd, "x", 1);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    done = true;
  });
  Watchdog wd("server", 0.3);
  wd.begin("hello");
  std::string id;
  try {
    b.recv(wd);
  } catch (const Failure& f) {
    id = f.finding.id;
  }
  const bool cut_while_trickling = !done;
  stop = true;
  t.join();
  EXPECT_EQ(id, "rdma.timeout");
  EXPECT_TRUE(cut_while_trickling) << "the watchdog fired only after the bytes stopped";
}

TEST(RdmaControl, PeerError_IsQuotedNotTaken) {
  Finding f;
  f.id = "rdma.memlock";
  f.severity = Severity::Fail;
  f.message = std::string(1000, 'm');
  f.docs = "javascript:alert(1)";
  f.remedy = "run this";
  const Finding ours = from_peer(f, "client");
  EXPECT_EQ(ours.id, "rdma.peer_failed");
  EXPECT_EQ(ours.docs.find("javascript"), std::string::npos);
  EXPECT_EQ(ours.remedy.find("run this"), std::string::npos);
  EXPECT_NE(ours.message.find("the client said: rdma.memlock: mmm"), std::string::npos);
  EXPECT_LT(ours.message.size(), 400u);
  f.severity = Severity::Fail;
  EXPECT_EQ(peer_note(f, "server").severity, Severity::Warn);  // a peer's note never fails us
  EXPECT_EQ(peer_note(f, "server").id, "rdma.peer_note");
}

TEST(RdmaSession, AStrangersError_IsQuotedWithoutATokenAndDroppedWithOne) {
  const std::string planted =
      R"j({"error":{"id":"rdma.x","severity":"fail","subject":"s","message":"planted","evidence":"",)j"
      R"j("remedy":"","docs":"javascript:alert(1)"}})j"
      "\n";
  for (const std::string token : {"", "s3cret"}) {
    Options o;
    o.tcp_port = 0;
    o.timeout_s = 2;
    o.token = token;
    Server s(o);
    std::optional<Result> served;
    std::thread t([&] { served = s.serve_one(1.5); });
    net::Fd c = raw_client(s.tcp_port());
    ASSERT_EQ(net::send_all(c.get(), planted, net::after(std::chrono::seconds(2))), "");
    t.join();
    if (token.empty()) {
      // No token: anyone may start a session; what it says is quoted, never our own finding.
      ASSERT_TRUE(served);
      ASSERT_EQ(served->findings.size(), 1u);
      EXPECT_EQ(served->findings[0].id, "rdma.peer_failed");
      EXPECT_NE(served->findings[0].message.find("the client said: rdma.x: planted"), std::string::npos);
      EXPECT_EQ(json(*served).dump().find("javascript"), std::string::npos);
    } else {
      EXPECT_FALSE(served) << "an unauthenticated error became a session result";
    }
  }
}

TEST(RdmaSession, WithAToken_AStrangerIsRefusedAndTheRealClientServed) {
  if (!no_rdma_device()) GTEST_SKIP() << "this machine has RDMA devices; the VM test covers real sessions";
  Options o;
  o.tcp_port = 0;
  o.timeout_s = 5;
  o.token = "s3cret";
  Server s(o);
  std::optional<Result> served;
  std::thread t([&] { served = s.serve_one(20); });
  o.tcp_port = s.tcp_port();
  {
    // A hello without the token: refused, told so, and not served.
    net::Fd c = raw_client(o.tcp_port);
    ASSERT_EQ(net::send_all(c.get(), R"({"hello":{"magic":"fabscope.rdma","version":1}})" "\n",
                            net::after(std::chrono::seconds(2))),
              "");
    std::string got;
    (void)net::recv_exact(c.get(), 10, got, net::after(std::chrono::seconds(5)));
    EXPECT_EQ(got.substr(0, 10), R"({"refused")");
  }
  // Without a device the client fails before its hello and sends its error: with the wrong
  // token that is dropped, with the right one it is the session's (quoted) result.
  Options wrong = o;
  wrong.token = "guess";
  EXPECT_EQ(run("127.0.0.1", wrong).findings.at(0).id, "rdma.no_device");
  Result r = run("127.0.0.1", o);
  t.join();
  EXPECT_EQ(r.findings.at(0).id, "rdma.no_device");
  ASSERT_TRUE(served);
  EXPECT_EQ(served->findings.at(0).id, "rdma.peer_failed");
}
