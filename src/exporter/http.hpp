#pragma once
// A small single-threaded HTTP/1.1 server (epoll) for the exporter. It holds every connection in
// one event loop, so slow clients cost a few kilobytes each instead of a thread, and its memory
// is bounded: at most max_connections, each with a request buffer of at most
// limits.max_request_bytes and a response shared between the requests of one loop iteration.
// A new connection always gets a slot: at the limit, the connection waiting longest for a request
// makes room, else the one whose response has moved no byte for the longest (a client that
// pipelines scrapes and never reads), so neither idle or slow (slowloris) clients nor slow
// readers can lock out Prometheus. A request must be complete within request_timeout_ms; a
// response that moves no byte for write_timeout_ms is cut (a big response read steadily is
// never cut, however long it takes).
#include <atomic>
#include <cstdint>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "exporter/http_request.hpp"

namespace fabscope::exporter {

struct ListenAddress {
  std::string host;  // "" = every IPv4 interface; "::" every IPv6 (and IPv4 where dual-stack)
  std::uint16_t port = 0;
};
// "HOST:PORT", ":PORT", "[V6]:PORT". Throws fabscope::UsageError naming the value.
ListenAddress parse_listen_address(const std::string& text);

struct ServerOptions {
  ListenAddress listen;
  HttpLimits limits;
  std::size_t max_connections = 256;
  int request_timeout_ms = 10000;  // a complete request within this, from connect or last response
  int write_timeout_ms = 10000;    // a response moves at least one byte within this, each time
  // Milliseconds of a monotonic clock, read by the server's thread for every deadline; empty:
  // steady_clock. Tests put their own and choose the instants.
  std::function<std::int64_t()> clock_ms;
};

// One connection as the eviction sees it.
struct HttpSlot {
  bool writing = false;
  std::int64_t since_ms = 0;     // waiting for a request since
  std::int64_t progress_ms = 0;  // writing: when its response last moved a byte (or began)
};
// The connection that makes room for a new one at the limit: the one waiting longest for a
// request, else the writer whose response has moved no byte for the longest; ties: the first.
// -1 when there is none.
std::ptrdiff_t http_eviction_victim(const std::vector<HttpSlot>& slots);

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::shared_ptr<const std::string> body;
  // Sent right after body, as one response: a large part kept elsewhere (the fabric's rendered
  // families) goes out without being copied into body.
  std::shared_ptr<const std::string> tail;
  std::vector<std::pair<std::string, std::string>> headers;  // extra, e.g. Allow
};

struct ServerStats {
  std::uint64_t requests_ok = 0;   // 2xx
  std::uint64_t rejected = 0;      // 4xx/5xx answers and timeouts
  std::uint64_t evicted = 0;
  std::uint64_t open = 0;
};

// Serialises the status line and headers (Content-Length of body even for HEAD).
std::string response_head(const HttpResponse& r, bool keep_alive);
const char* reason_phrase(int status);

class HttpServer {
 public:
  // The handler answers a parsed request; batch is the same for requests handled in one loop
  // iteration, so that concurrent scrapes can share one collection.
  using Handler = std::function<HttpResponse(const HttpRequest&, std::uint64_t batch)>;

  HttpServer(ServerOptions opts, Handler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens. Throws fabscope::Error naming the address and the system error.
  void bind();
  std::uint16_t port() const;  // the bound port (useful with port 0)
  // Serves until stop becomes true (checked at least every 200 ms).
  void run(const std::atomic<bool>& stop);
  ServerStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fabscope::exporter
