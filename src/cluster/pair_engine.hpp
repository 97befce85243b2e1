#pragma once
// What measures one pair. The cluster needs both directions between two nodes, one pair at a
// time per node; the engine opens its endpoint at start so its address can travel in the node
// summary.
//   tcp   a TCP stream each way (pair_tcp.cpp): what NCCL's socket transport gets, and a working
//         stand-in where a node has no RDMA; a shaped or degraded NIC shows in it.
//   rdma  the `fabscope rdma` engine (pair_rdma.cpp): RDMA WRITE bandwidth through RDMA CM, one
//         direction after the other, each node serving its own rdma::Server; what NCCL's IB/RoCE
//         transport uses.
#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace fabscope::cluster {

struct PairSide {
  std::optional<double> rx_gbps;  // peer -> me, measured here (tcp: the receiver counts)
  std::string error;
  std::optional<double> tx_gbps;  // me -> peer, measured here (rdma WRITE: the writer counts)
};

class PairEngine {
 public:
  virtual ~PairEngine() = default;
  virtual std::string name() const = 0;
  virtual std::string address() const = 0;  // "ip:port" peers connect to
  // initiator: the lower rank of the pair (connects, sends first). Bounded by duration plus a
  // fixed connect/accept allowance; never throws, errors come back in PairSide.
  virtual PairSide run(const std::string& peer_address, bool initiator, std::chrono::milliseconds duration) = 0;
  // The job's pair secret (rank 0 draws it and sends it in the plan): a pair connection that
  // does not carry it is refused, so no stranger can take a pair's place. Set before run().
  virtual void set_secret(const std::string& secret) { secret_ = secret; }
  const std::string& secret() const { return secret_; }

 private:
  std::string secret_;
};

// The first non-loopback IPv4 address: the pair address when the launcher gives none (MPI).
std::string default_pair_host();

// host: the address peers use to reach this node ("" = default_pair_host()). setup: how long
// a pair waits for the connection and its hello, and how long each stream may overrun the
// duration before the pair is cut off.
std::unique_ptr<PairEngine> make_tcp_engine(const std::string& host,
                                            std::chrono::milliseconds setup = std::chrono::seconds(15));

// The rdma engine on this node, or why there is none: no RDMA device or ACTIVE port (chosen as
// `fabscope rdma` chooses it, for the address host, from the live node), the libraries cannot
// be loaded, the server cannot listen. note: the device ("rxe0:1 on eth0") or the reason,
// "rdma.<id>: ..." where a `fabscope rdma` finding says it.
struct RdmaEngineSetup {
  std::unique_ptr<PairEngine> engine;
  std::string note;
};
RdmaEngineSetup make_rdma_engine(const std::string& host);  // "" = default_pair_host()
// The most one rdma pair can take beyond twice the duration: per direction, the wait for the
// peer's connection and the session watchdog (pair_rdma.cpp), for the exchange's step timeout.
constexpr std::chrono::seconds kRdmaPairAllowance{2 * (30 + 30)};

}  // namespace fabscope::cluster
