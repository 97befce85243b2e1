#pragma once
// What measures one pair. The cluster needs both directions between two nodes, one pair at a
// time per node; the engine opens its endpoint at start so its address can travel in the node
// summary.
//   tcp   a TCP stream each way (pair_tcp.cpp): what NCCL's socket transport gets, and a working
//         stand-in where no RDMA engine is built in; a shaped or degraded NIC shows in it.
// The `fabscope rdma` engine (RDMA WRITE bandwidth through RDMA CM) plugs in here as "rdma".
#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace fabscope::cluster {

struct PairSide {
  std::optional<double> rx_gbps;  // peer -> me, measured here
  std::string error;
};

class PairEngine {
 public:
  virtual ~PairEngine() = default;
  virtual std::string name() const = 0;
  virtual std::string address() const = 0;  // "ip:port" peers connect to
  // initiator: the lower rank of the pair (connects, sends first). Bounded by duration plus a
  // fixed connect/accept allowance; never throws, errors come back in PairSide.
  virtual PairSide run(const std::string& peer_address, bool initiator, std::chrono::milliseconds duration) = 0;
};

// host: the address peers use to reach this node ("" = the first non-loopback IPv4 address).
std::unique_ptr<PairEngine> make_tcp_engine(const std::string& host);

}  // namespace fabscope::cluster
