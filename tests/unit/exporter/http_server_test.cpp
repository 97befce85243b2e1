#include "exporter/http.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>
#include <utility>

#include "core/error.hpp"

namespace fabscope::exporter {
namespace {

// A server on 127.0.0.1 (any free port) answering "hello" on every path, in a thread.
class Server {
 public:
  explicit Server(ServerOptions opts = {})
      : Server(opts, [](const HttpRequest& req, std::uint64_t) {
          HttpResponse r;
          r.body = std::make_shared<const std::string>("hello " + req.path + "\n");
          return r;
        }) {}
  Server(ServerOptions opts, HttpServer::Handler handler) {
    opts.listen = {"127.0.0.1", 0};
    if (!opts.clock_ms) opts.clock_ms = [c = clock_] { return c->load(); };  // chosen instants
    server_ = std::make_unique<HttpServer>(opts, std::move(handler));
    server_->bind();
    thread_ = std::thread([this] { server_->run(stop_); });
  }
  ~Server() {
    stop_ = true;
    thread_.join();
  }
  std::uint16_t port() const { return server_->port(); }
  ServerStats stats() const { return server_->stats(); }  // read after the test's exchanges
  // The server's clock (milliseconds): it stands still unless a test moves it, so no deadline
  // passes because the machine is slow.
  void set_clock_ms(std::int64_t ms) { clock_->store(ms); }

 private:
  std::shared_ptr<std::atomic<std::int64_t>> clock_ = std::make_shared<std::atomic<std::int64_t>>(1000000);
  std::atomic<bool> stop_{false};
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
};

class Client {
 public:
  // rcvbuf > 0: the socket's receive buffer, set before the connect (a small window keeps a
  // response that is never read stuck in the server's writing state).
  explicit Client(std::uint16_t port, int receive_timeout_s = 5, int rcvbuf = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{receive_timeout_s, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (rcvbuf > 0) setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~Client() { ::close(fd_); }
  bool connected() const { return connected_; }
  void send(const std::string& s) { ::send(fd_, s.data(), s.size(), MSG_NOSIGNAL); }
  // Half-close: no more requests (FIN), the client still reads.
  void shutdown_write() { ::shutdown(fd_, SHUT_WR); }
  // Reads one response: head, then Content-Length bytes (none for HEAD).
  // Bytes past the response stay buffered for the next call (pipelining).
  // Linear in the response's size: the head is looked for once, then the body is read in large
  // pieces (a test's own quadratic reading must not be what a deadline measures).
  std::string response(bool head_only = false) {
    std::vector<char> buf(1 << 20);
    std::size_t end = std::string::npos, total = 0, searched = 0;
    while (true) {
      if (end == std::string::npos) {
        end = pending_.find("\r\n\r\n", searched > 3 ? searched - 3 : 0);
        searched = pending_.size();
        if (end != std::string::npos) {
          auto cl = pending_.find("Content-Length: ");
          std::size_t len = head_only || cl == std::string::npos || cl > end ? 0 : std::stoul(pending_.substr(cl + 16));
          total = end + 4 + len;
        }
      }
      if (end != std::string::npos && pending_.size() >= total) {
        std::string r = pending_.substr(0, total);
        pending_.erase(0, total);
        return r;
      }
      ssize_t n = ::recv(fd_, buf.data(), buf.size(), 0);
      if (n <= 0) return std::exchange(pending_, "");
      pending_.append(buf.data(), static_cast<std::size_t>(n));
    }
  }
  // Reads and drops up to n bytes (what arrived, at least one byte unless the server closed).
  std::size_t drain(std::size_t n) {
    std::vector<char> buf(std::min<std::size_t>(n, 1 << 20));
    ssize_t got = ::recv(fd_, buf.data(), buf.size(), 0);
    return got > 0 ? static_cast<std::size_t>(got) : 0;
  }
  // True when the server closes the connection within ms milliseconds (reading what comes first).
  bool closed_within(int ms) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    char buf[4096];
    while (std::chrono::steady_clock::now() < end) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
    }
    return false;
  }
  // True when the server closed the connection (recv returns 0 or a reset).
  bool closed_by_server() {
    char c;
    ssize_t n = ::recv(fd_, &c, 1, 0);
    return n == 0 || (n < 0 && errno == ECONNRESET);
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::string pending_;
};

TEST(HttpServer, Get_AnswersWithContentLength) {
  Server s;
  Client c(s.port());
  c.send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  auto r = c.response();
  EXPECT_EQ(r.substr(0, 15), "HTTP/1.1 200 OK");
  EXPECT_NE(r.find("Content-Length: 15\r\n"), std::string::npos) << r;
  EXPECT_NE(r.find("\r\n\r\nhello /metrics\n"), std::string::npos);
}

// A response's tail (the fabric's rendered families, kept by the snapshot) follows its body as
// one response: counted in Content-Length, sent whole even when the socket takes it in pieces
// (8 MiB is more than loopback's buffers), left out with the body for HEAD.
TEST(HttpServer, Tail_FollowsTheBodyInOneResponse) {
  std::string big(8 << 20, 'x');
  for (std::size_t i = 0; i < big.size(); i += 4096) big[i] = static_cast<char>('a' + (i / 4096) % 26);
  auto tail = std::make_shared<const std::string>(big);
  Server s({}, [tail](const HttpRequest& req, std::uint64_t) {
    HttpResponse r;
    r.body = std::make_shared<const std::string>("node " + req.path + "\n");
    r.tail = tail;
    return r;
  });
  // The server's clock stands still (no deadline can pass) and the client reads linearly and
  // waits up to 120 s for each piece: the pass does not depend on the machine's speed.
  Client c(s.port(), 120);
  c.send("GET /metrics HTTP/1.1\r\n\r\nHEAD /metrics HTTP/1.1\r\n\r\nGET /again HTTP/1.1\r\n\r\n");
  const std::string r = c.response();
  const std::size_t body_at = r.find("\r\n\r\n") + 4;
  EXPECT_NE(r.find("Content-Length: " + std::to_string(14 + big.size()) + "\r\n"), std::string::npos);
  EXPECT_EQ(r.substr(body_at), "node /metrics\n" + big);
  const std::string head = c.response(true);
  EXPECT_EQ(head.find("node"), std::string::npos);
  const std::string again = c.response();  // after HEAD, the next response starts cleanly
  ASSERT_EQ(again.substr(0, 15), "HTTP/1.1 200 OK");
  EXPECT_EQ(again.substr(again.find("\r\n\r\n") + 4), "node /again\n" + big);
}

TEST(HttpServer, KeepAlive_ServesSeveralRequestsOnOneConnection) {
  Server s;
  Client c(s.port());
  for (int i = 0; i < 3; ++i) {
    c.send("GET /healthz HTTP/1.1\r\n\r\n");
    EXPECT_NE(c.response().find("hello /healthz"), std::string::npos) << i;
  }
}

TEST(HttpServer, PipelinedRequests_AreAnsweredInOrder) {
  Server s;
  Client c(s.port());
  c.send("GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n");
  EXPECT_NE(c.response().find("hello /a"), std::string::npos);
  EXPECT_NE(c.response().find("hello /b"), std::string::npos);
}

TEST(HttpServer, Head_SendsNoBody) {
  Server s;
  Client c(s.port());
  c.send("HEAD /metrics HTTP/1.1\r\n\r\nGET /after HTTP/1.1\r\n\r\n");
  auto head = c.response(true);
  EXPECT_EQ(head.find("hello"), std::string::npos);
  EXPECT_NE(c.response().find("hello /after"), std::string::npos);  // the next response starts cleanly
}

// A client that sends a whole request and then half-closes (FIN) must get its answer every time:
// the server used to close on the EOF before serving the request already in its buffer.
TEST(HttpServer, HalfClosedClient_StillGetsTheResponse) {
  Server s;
  int answered = 0;
  for (int i = 0; i < 50; ++i) {
    Client c(s.port());
    ASSERT_TRUE(c.connected());
    c.send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    c.shutdown_write();
    auto r = c.response();
    if (r.find("\r\n\r\nhello /metrics\n") != std::string::npos) ++answered;
    EXPECT_TRUE(c.closed_by_server()) << i;
  }
  EXPECT_EQ(answered, 50);
}

TEST(HttpServer, HalfClosedClient_PipelinedRequestsAreAllAnswered) {
  Server s;
  Client c(s.port());
  c.send("GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n");
  c.shutdown_write();
  EXPECT_NE(c.response().find("hello /a"), std::string::npos);
  EXPECT_NE(c.response().find("hello /b"), std::string::npos);
  EXPECT_TRUE(c.closed_by_server());
}

TEST(HttpServer, HalfClosedClient_WithAPartialRequestIsClosed) {
  Server s;
  Client c(s.port());
  c.send("GET /a HTTP/1.1\r\nHost:");
  c.shutdown_write();
  EXPECT_EQ(c.response(), "");
  EXPECT_TRUE(c.closed_by_server());
}

TEST(HttpServer, ConnectionClose_IsHonoured) {
  Server s;
  Client c(s.port());
  c.send("GET / HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_NE(c.response().find("Connection: close"), std::string::npos);
  EXPECT_TRUE(c.closed_by_server());
}

TEST(HttpServer, OversizeRequest_Gets431AndIsClosed) {
  Server s;
  Client c(s.port());
  c.send("GET / HTTP/1.1\r\nX-Big: " + std::string(9000, 'a'));
  EXPECT_EQ(c.response().substr(0, 12), "HTTP/1.1 431");
  EXPECT_TRUE(c.closed_by_server());
}

TEST(HttpServer, Garbage_Gets400AndIsClosed) {
  Server s;
  Client c(s.port());
  c.send(std::string("\x16\x03\x01\x02\x00 nonsense\r\n\r\n", 18));
  EXPECT_EQ(c.response().substr(0, 12), "HTTP/1.1 400");
  EXPECT_TRUE(c.closed_by_server());
}

TEST(HttpServer, SlowClient_IsClosedAfterTheRequestTimeout) {
  ServerOptions o;
  o.request_timeout_ms = 300;
  Server s(o);
  Client c(s.port(), 60);
  c.send("GET /metrics HTTP/1.1\r\n");  // and never the end of the head
  // The server's clock stands still: the connection stays, whatever the machine's speed.
  EXPECT_FALSE(c.closed_within(500));
  // Then its time is up. The server may have taken the connection after the clock moved (its
  // time counts from then): the clock moves by the timeout again until it is closed.
  bool closed = false;
  for (int step = 1; step <= 3 && !closed; ++step) {
    s.set_clock_ms(1000000 + 300 * step);
    closed = c.closed_within(2000);
  }
  EXPECT_TRUE(closed);
}

TEST(HttpServer, AtTheConnectionLimit_IdleClientsAreEvictedForNewOnes) {
  ServerOptions o;
  o.max_connections = 4;
  Server s(o);
  std::vector<std::unique_ptr<Client>> idle;
  for (int i = 0; i < 8; ++i) {
    idle.push_back(std::make_unique<Client>(s.port()));
    idle.back()->send("GET /slow");  // a request that never completes
  }
  Client scraper(s.port());
  scraper.send("GET /metrics HTTP/1.1\r\n\r\n");
  EXPECT_NE(scraper.response().find("hello /metrics"), std::string::npos);
  EXPECT_GE(s.stats().evicted, 5u);
  EXPECT_LE(s.stats().open, 4u);
}

bool poll_until(const std::function<bool()>& cond, std::chrono::seconds limit = std::chrono::seconds(60)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return cond();
}

// Clients that pipeline scrapes of a large page and never read fill every slot in the writing
// state; a new connection (Prometheus's next scrape) still gets its answer: the writer whose
// response has moved no byte for the longest makes room.
TEST(HttpServer, SlowReaders_AtTheLimit_TheMostStalledWriterMakesRoomForANewScrape) {
  ServerOptions o;
  o.max_connections = 8;
  auto page = std::make_shared<const std::string>(16u << 20, 'm');  // more than any socket buffers
  std::atomic<int> answered{0};
  Server s(o, [&](const HttpRequest&, std::uint64_t) {
    ++answered;
    HttpResponse r;
    r.body = page;
    return r;
  });
  std::vector<std::unique_ptr<Client>> stuck;
  for (int i = 0; i < 8; ++i) {
    stuck.push_back(std::make_unique<Client>(s.port(), 5, 4096));
    ASSERT_TRUE(stuck.back()->connected());
    std::string pipelined;
    for (int k = 0; k < 4; ++k) pipelined += "GET /metrics HTTP/1.1\r\n\r\n";
    stuck.back()->send(pipelined);
  }
  // Every slot is writing a response its client never reads.
  ASSERT_TRUE(poll_until([&] { return answered.load() >= 8; }));
  Client scraper(s.port(), 60);
  ASSERT_TRUE(scraper.connected());
  scraper.send("GET /metrics HTTP/1.1\r\n\r\n");
  const std::string r = scraper.response();
  ASSERT_EQ(r.substr(0, 15), "HTTP/1.1 200 OK");
  EXPECT_EQ(r.size() - (r.find("\r\n\r\n") + 4), page->size());
  EXPECT_GE(s.stats().evicted, 1u);
}

// Which connection makes room, at chosen instants: the one waiting longest for a request, else
// the writer whose response has moved no byte for the longest.
TEST(HttpServer, EvictionVictim_LongestWaitingForARequest_ElseLongestWithoutProgress) {
  EXPECT_EQ(http_eviction_victim({}), -1);
  EXPECT_EQ(http_eviction_victim({{true, 0, 500}, {false, 900, 0}, {false, 400, 0}, {true, 0, 100}}), 2);
  EXPECT_EQ(http_eviction_victim({{true, 0, 500}, {true, 0, 100}, {true, 0, 300}}), 1);
  // A writer that moved a byte just now stays; one stalled since it began goes.
  EXPECT_EQ(http_eviction_victim({{true, 0, 10000}, {true, 0, 2000}}), 1);
}

// The write timeout counts from the response's last progress: a client that keeps reading a
// large response is never cut, however long the whole takes by the server's clock.
TEST(HttpServer, WriteTimeout_CountsFromTheLastProgress_ASteadyReaderIsNeverCut) {
  ServerOptions o;
  o.write_timeout_ms = 10000;
  auto page = std::make_shared<const std::string>(32u << 20, 'p');
  Server s(o, [page](const HttpRequest&, std::uint64_t) {
    HttpResponse r;
    r.body = page;
    return r;
  });
  Client c(s.port(), 60, 65536);
  c.send("GET /metrics HTTP/1.1\r\n\r\n");
  std::size_t got = 0;
  std::int64_t t = 1000000;
  // 0.5 s of the server's clock per MiB read: 16 s in all, past the 10 s a whole response had.
  // The server is never more than the socket buffers (a few MiB) behind the reader, so its last
  // progress is never 10 s old.
  while (got < page->size()) {
    const std::size_t n = c.drain(1 << 20);
    if (n == 0) break;
    const std::size_t before = got;
    got += n;
    if (got / (1 << 20) != before / (1 << 20)) s.set_clock_ms(t += 500);
  }
  EXPECT_GE(got, page->size()) << "cut after " << got << " bytes";
  EXPECT_LE(got, page->size() + 256);  // and the head
  EXPECT_GE(t - 1000000, 15000);
}

// A response that moves no byte for the write timeout is cut.
TEST(HttpServer, WriteTimeout_AStalledResponseIsCut) {
  ServerOptions o;
  o.write_timeout_ms = 10000;
  auto page = std::make_shared<const std::string>(16u << 20, 's');
  std::atomic<int> answered{0};
  Server s(o, [&](const HttpRequest&, std::uint64_t) {
    ++answered;
    HttpResponse r;
    r.body = page;
    return r;
  });
  Client c(s.port(), 60, 4096);
  c.send("GET /metrics HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(poll_until([&] { return answered.load() == 1; }));
  // Stalled since it began: its time is up. (The server may have read its clock for the
  // response after the test moved it: the clock moves by the timeout again until it is cut.)
  bool cut = false;
  for (int step = 1; step <= 3 && !cut; ++step) {
    s.set_clock_ms(1000000 + 10000 * step);
    cut = poll_until([&] { return s.stats().rejected >= 1; }, std::chrono::seconds(2));
  }
  EXPECT_TRUE(cut);
  const std::string r = c.response();  // what the kernel still held, then the end
  EXPECT_LT(r.size(), page->size()) << "the stalled response was sent whole";
}

TEST(HttpServer, ListenAddress_ParsesTheThreeForms) {
  auto a = parse_listen_address(":9417");
  EXPECT_EQ(a.host, "");
  EXPECT_EQ(a.port, 9417);
  auto b = parse_listen_address("127.0.0.1:80");
  EXPECT_EQ(b.host, "127.0.0.1");
  auto c = parse_listen_address("[::1]:9417");
  EXPECT_EQ(c.host, "::1");
  EXPECT_EQ(c.port, 9417);
}

TEST(HttpServer, ListenAddress_RejectsBadPortsAndHostsNamingTheValue) {
  for (const char* bad : {"9417", ":99999", ":-1", "host.example:9417", "::1:9417", ":"}) {
    try {
      parse_listen_address(bad);
      ADD_FAILURE() << bad;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

TEST(HttpServer, PortInUse_ThrowsNamingTheAddress) {
  Server s;
  ServerOptions o;
  o.listen = {"127.0.0.1", s.port()};
  HttpServer second(o, [](const HttpRequest&, std::uint64_t) { return HttpResponse{}; });
  try {
    second.bind();
    FAIL() << "bound twice";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(s.port())), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fabscope::exporter
