#pragma once
// The point-to-point RDMA engine: one side serves, the other runs a test against it.
// Used by `fabscope rdma` and, in-process, by the cluster mode for pairwise tests.
//
//   rdma::Server server(opts);           // binds the TCP control port at once
//   std::thread t([&] { server.serve(1, on_result); });
//   rdma::Result r = rdma::run("10.0.0.2", opts);
//
// libibverbs.so.1 and librdmacm.so.1 are opened with dlopen on first use. Failures the network
// or the node causes (completion errors, RDMA CM events, a port down, memlock too low, the
// watchdog) end the session with findings in the Result (completed = false); usage errors
// throw UsageError, an unreachable peer or unusable local setup throws Unreachable or Error.
#include <functional>
#include <memory>
#include <string>

#include "core/error.hpp"
#include "core/node_info.hpp"
#include "rdma/types.hpp"

namespace fabscope::rdma {

// The peer could not be reached over TCP (name, route, refused, timed out). The Result it
// carries has the finding that explains it; `fabscope rdma` exits 3.
class Unreachable : public Error {
 public:
  Unreachable(const std::string& what, Result partial) : Error(what), result(std::move(partial)) {}
  Result result;
};

// Runs the test of opts against a server on host (name or address), port opts.tcp_port.
Result run(const std::string& host, const Options& opts);
// The same, choosing the local port from node (a probe taken earlier) instead of probing the
// live node again: for callers that run many sessions (the cluster's pairs).
Result run(const std::string& host, const Options& opts, const NodeInfo& node);

class Server {
 public:
  // Listens on opts.bind_address:opts.tcp_port (TCP); throws Error naming the address when
  // the port cannot be bound.
  explicit Server(const Options& opts);
  // Every session chooses the local port from node instead of probing the live node again.
  Server(const Options& opts, std::shared_ptr<const NodeInfo> node);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  int tcp_port() const;  // the bound port (opts.tcp_port, or the kernel's choice for 0)

  // Waits for one client (forever when wait_s <= 0) and runs its session. The result of a
  // failed session has completed = false and findings; nullopt when no client came in time.
  std::optional<Result> serve_one(double wait_s = 0);
  // The same, taking only a connection from peer_ipv4 (others are closed unserved): a client
  // that gave up on an earlier test can still sit in the listen backlog.
  std::optional<Result> serve_one_from(const std::string& peer_ipv4, double wait_s);
  // serve_one() `sessions` times (0 = until stop()), calling on_result after each.
  void serve(int sessions, const std::function<void(const Result&)>& on_result);
  // Serve only clients whose hello carries this token (before serving; "" = any client).
  void set_token(const std::string& token);
  void stop();  // from another thread: serve()/serve_one() return after the current session

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fabscope::rdma
