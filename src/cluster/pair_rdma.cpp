// The rdma pair engine: every node serves an rdma::Server (control port chosen by the kernel,
// RDMA CM on the same number); a pair runs `fabscope rdma`'s WRITE bandwidth test one direction
// after the other. The initiator writes to the responder first while the responder serves, then
// the roles swap. Each side reports the direction it wrote (the writer counts, as ib_write_bw).
#include <arpa/inet.h>

#include "cluster/pair_engine.hpp"
#include "core/root.hpp"
#include "probe/probe.hpp"
#include "rdma/choose.hpp"
#include "rdma/lib.hpp"
#include "rdma/rdma.hpp"

namespace fabscope::cluster {

namespace {

// fabscope rdma's bandwidth message size (perftest's default): the pairs are comparable with
// a hand-run `fabscope rdma` or ib_write_bw between the same nodes.
constexpr std::uint64_t kMessageBytes = 65536;
// Outstanding WRITEs: 16 x 64 KiB = 1 MiB in flight, the bandwidth-delay product of 400 Gb/s at
// 20 us round trip, so one QP still fills a fast link. perftest's 128 (8 MiB) would take a slow
// node longer to drain than the watchdog allows (8 MiB at 4 Mbit/s: 17 s, and a completion is
// signalled only every 64 WRITEs): the pair would fail instead of measuring slow.
constexpr int kTxDepth = 16;
// Watchdog of each session: no progress for this long ends it with rdma.timeout. Longer than
// `fabscope rdma`'s 10 s: the peer may still be closing its test of the other direction when
// this side's hello arrives (seconds between loaded TCG guests).
constexpr double kWatchdogS = 30;
// How long the serving side waits for its peer's test to connect.
constexpr double kAcceptWaitS = 30;

std::string first_failure(const rdma::Result& r, const std::string& fallback) {
  for (const auto& f : r.findings)
    if (f.severity == Severity::Fail) return f.id + ": " + f.message;
  return fallback;
}

class RdmaEngine : public PairEngine {
 public:
  // node: this node's probe, taken once; every session chooses its port from it (a probe per
  // session cost seconds on a loaded guest and stalled the peer waiting for the welcome).
  RdmaEngine(const std::string& host, std::shared_ptr<const NodeInfo> node, std::unique_ptr<rdma::Server> server)
      : node_(std::move(node)), server_(std::move(server)),
        address_(host + ":" + std::to_string(server_->tcp_port())) {}
  std::string name() const override { return "rdma"; }
  std::string address() const override { return address_; }
  void set_secret(const std::string& secret) override {
    PairEngine::set_secret(secret);
    server_->set_token(secret);
  }

  PairSide run(const std::string& peer, bool initiator, std::chrono::milliseconds duration) override {
    PairSide out;
    const auto colon = peer.rfind(':');
    int port = 0;
    if (colon == std::string::npos || colon == 0 ||
        (port = std::atoi(peer.c_str() + colon + 1)) <= 0 || port > 65535) {
      out.error = "peer rdma address '" + peer + "' is not host:port";
      return out;
    }
    const std::string host = peer.substr(0, colon);
    auto write = [&] {
      rdma::Options o;
      o.sizes_bytes = {kMessageBytes};
      o.tx_depth = kTxDepth;
      o.duration_s = std::chrono::duration<double>(duration).count();
      o.tcp_port = port;
      o.timeout_s = kWatchdogS;
      o.token = secret();
      try {
        rdma::Result r = rdma::run(host, o, *node_);
        if (r.completed && !r.sizes.empty() && r.sizes.front().seconds > 0) out.tx_gbps = r.sizes.front().gbps;
        else out.error = first_failure(r, "the rdma test to " + peer + " did not complete");
      } catch (const rdma::Unreachable& u) {
        out.error = first_failure(u.result, u.what());
      } catch (const std::exception& e) {
        out.error = std::string("rdma test to ") + peer + ": " + e.what();
      }
    };
    // The peer's write to us: its own result carries any failure of it; here only "it never came".
    // Only the peer's connection is served: a test a previous peer gave up on (a connect that
    // completed after its client timed out) can sit in the backlog and would steal the session.
    // The peer connects from its pair address (the route to ours leaves from it on one subnet).
    auto serve = [&] {
      std::optional<rdma::Result> r;
      try {
        r = server_->serve_one_from(host, kAcceptWaitS);
      } catch (const std::exception& e) {
        out.error += (out.error.empty() ? "" : "; ") + std::string("serving the peer's test: ") + e.what();
        return;
      }
      if (!r)
        out.error += (out.error.empty() ? "" : "; ") + std::string("the peer's rdma test did not connect within ") +
                     std::to_string(static_cast<int>(kAcceptWaitS)) + " s";
      else if (!r->completed)  // the peer's side reports it too; this side's view helps tell why
        out.error += (out.error.empty() ? "" : "; ") + std::string("serving the peer's test: ") +
                     first_failure(*r, "did not complete");
    };
    if (initiator) write(), serve();
    else serve(), write();
    return out;
  }

 private:
  std::shared_ptr<const NodeInfo> node_;
  std::unique_ptr<rdma::Server> server_;
  std::string address_;
};

}  // namespace

RdmaEngineSetup make_rdma_engine(const std::string& host_arg) {
  RdmaEngineSetup s;
  const std::string host = host_arg.empty() ? default_pair_host() : host_arg;
#ifndef FABSCOPE_RDMA_HEADERS
  s.note = "this fabscope was built without rdma-core headers (libibverbs-dev, librdmacm-dev)";
  return s;
#else
  in_addr a{};
  if (inet_pton(AF_INET, host.c_str(), &a) != 1) {
    s.note = "the pair address '" + host + "' is not an IPv4 address (FABSCOPE_CLUSTER_PAIR_ADDR)";
    return s;
  }
  // The live node, whatever --root says: the test runs on this node's devices.
  rdma::Chosen c;
  std::shared_ptr<const NodeInfo> node;
  try {
    node = std::make_shared<const NodeInfo>(probe::collect(core::Root("/")));
    c = rdma::choose(*node, {"", std::nullopt, std::nullopt, host, "the other nodes", false});
  } catch (const std::exception& e) {
    s.note = std::string("probing the RDMA devices failed: ") + e.what();
    return s;
  }
  for (const auto& f : c.problems)
    if (f.severity == Severity::Fail) {
      s.note = f.id + ": " + f.message;
      return s;
    }
  if (const auto& lib = rdma::lib(); !lib.error.empty()) {
    s.note = lib.error;
    return s;
  }
  if (!rdma::lib().cm) {
    s.note = "librdmacm.so.1 is not loadable (install librdmacm1)";
    return s;
  }
  try {
    rdma::Options o;
    o.tcp_port = 0;  // the kernel's choice: several ranks may share a host
    o.timeout_s = kWatchdogS;
    s.engine = std::make_unique<RdmaEngine>(host, node, std::make_unique<rdma::Server>(o, node));
  } catch (const std::exception& e) {
    s.note = std::string("the rdma server cannot listen: ") + e.what();
    return s;
  }
  const auto& e = c.endpoint;
  s.note = e.device + ":" + std::to_string(e.port) + (e.netdev.empty() ? "" : " on " + e.netdev);
  return s;
#endif
}

}  // namespace fabscope::cluster
