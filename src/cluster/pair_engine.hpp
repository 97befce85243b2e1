#pragma once
// What measures one pair. The cluster needs both directions between two nodes, one pair at a
// time per node; the engine opens its endpoint at start so its address can travel in the node
// summary.
//   tcp   a TCP stream each way (pair_tcp.cpp): what NCCL's socket transport gets, and a working
//         stand-in where a node has no RDMA; a shaped or degraded NIC shows in it.
//   rdma  the `fabscope rdma` engine (pair_rdma.cpp): RDMA WRITE bandwidth through RDMA CM, one
//         direction after the other, each node serving its own rdma::Server; what NCCL's IB/RoCE
//         transport uses.
//   nccl  NCCL itself (pair_nccl.cpp, GPU builds): a 2-rank communicator of one GPU on each node,
//         ncclSend/ncclRecv of a large buffer, one direction after the other; what a job's
//         point-to-point traffic gets over the transport NCCL picks between the nodes. Its
//         rendezvous (the initiator's ncclUniqueId) travels through the cluster's exchange.
#include <array>
#include <chrono>
#include <cstddef>
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
  // What the pair's other end needs before run() and only this end can make, sent through the
  // exchange (the peer gets it as peer_address): "" for engines whose address is enough (tcp,
  // rdma). nccl: the initiator's ncclUniqueId in hex (its bootstrap root starts listening here),
  // "" on the responder.
  virtual std::string pair_token(bool /*initiator*/) { return ""; }
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

// The nccl engine on this node, or why there is none: a build without CUDA and NCCL, no GPU, no
// loadable libnccl. device: "GPU 0 NVIDIA H100 80GB HBM3 (0000:1b:00.0), NCCL 2.28.3". The GPU
// is LOCAL_RANK's when set (one process per GPU), else the first visible one. bytes: the buffer
// of each send/recv.
constexpr std::size_t kNcclPairBytes = std::size_t{256} << 20;
struct NcclEngineSetup {
  std::unique_ptr<PairEngine> engine;
  std::string device;
  std::string note;  // without an engine: why
};
NcclEngineSetup make_nccl_engine(std::size_t bytes = kNcclPairBytes);
// Whether this build has the nccl engine at all (FABSCOPE_WITH_CUDA and a toolkit with NCCL).
bool nccl_engine_built();
// The most one nccl pair takes beyond twice the duration: the communicator's setup, and per
// direction the calibration and the drain of the last transfer (pair_nccl.cpp).
constexpr std::chrono::seconds kNcclPairAllowance{60 + 2 * 30};

// NCCL_UNIQUE_ID_BYTES (128, nccl.h since 2.0) travel as lowercase hex.
constexpr std::size_t kNcclIdBytes = 128;
std::string nccl_id_hex(const std::array<unsigned char, kNcclIdBytes>& id);
// false unless text is exactly 256 hex digits.
bool nccl_id_from_hex(const std::string& text, std::array<unsigned char, kNcclIdBytes>& id);
// Transfers of one direction so that they last about duration_s, from the time one took
// (calibration): at least 2, at most 100,000; 2 when one_transfer_s is not a positive number.
long nccl_transfer_count(double duration_s, double one_transfer_s);

}  // namespace fabscope::cluster
