// The nccl pair engine (GPU builds): per pair, a 2-rank communicator of one GPU on each node
// (rank 0 the initiator, whose ncclUniqueId came to the responder through the cluster's
// exchange), then ncclSend/ncclRecv of one large buffer, rank 0 -> 1 and then 1 -> 0. Each
// direction: one warm-up transfer, one timed transfer that sizes the loop (the sender sends the
// count to the receiver through NCCL, so both run the same number of transfers), then the loop;
// each end times it on its own clock from its first call to its stream's end. The receiver's
// rate is the direction's (pair_round.cpp takes rx first), the sender's is its tx. Nothing
// waits unbounded: the communicator is non-blocking where NCCL has ncclCommInitRankConfig (2.14),
// every wait polls with a deadline, and a pair past it is aborted (ncclCommAbort).
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdlib>
#include <cstring>
#include <thread>

#include "bench/gpu/nccl_api.hpp"
#include "cluster/pair_engine.hpp"
#include "core/error.hpp"

namespace fabscope::cluster {

namespace {

using Clock = std::chrono::steady_clock;
namespace gpu = bench::gpu;

constexpr auto kSetup = std::chrono::seconds(60);  // the communicator with the peer
constexpr auto kDrain = std::chrono::seconds(30);  // a calibration step, or past the duration

struct PairFailure {
  std::string what;
};

std::string cuda_text(cudaError_t e) { return cudaGetErrorString(e); }

std::string version_text(int v) {
  // NCCL_VERSION_CODE: major*10000 + minor*100 + patch since 2.9, major*1000 + minor*100 + patch before.
  const int major = v >= 10000 ? v / 10000 : v / 1000, minor = v >= 10000 ? v / 100 % 100 : v / 100 % 10;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(v % 100);
}

class NcclPairEngine final : public PairEngine {
 public:
  NcclPairEngine(const gpu::NcclApi& api, int device, std::size_t bytes, void* buf, void* count_dev,
                 cudaStream_t stream)
      : api_(api), device_(device), bytes_(bytes), buf_(buf), count_dev_(count_dev), stream_(stream) {}
  ~NcclPairEngine() override {
    cudaSetDevice(device_);
    cudaStreamDestroy(stream_);
    cudaFree(buf_);
    cudaFree(count_dev_);
  }

  std::string name() const override { return "nccl"; }
  std::string address() const override { return ""; }  // the rendezvous is pair_token's

  std::string pair_token(bool initiator) override {
    if (!initiator) return "";
    ncclUniqueId id;
    if (api_.GetUniqueId(&id) != ncclSuccess) return "";
    std::array<unsigned char, kNcclIdBytes> raw{};
    static_assert(sizeof id.internal == kNcclIdBytes);
    std::memcpy(raw.data(), id.internal, kNcclIdBytes);
    return nccl_id_hex(raw);
  }

  PairSide run(const std::string& token, bool initiator, std::chrono::milliseconds duration) override {
    PairSide side;
    std::array<unsigned char, kNcclIdBytes> raw{};
    if (!nccl_id_from_hex(token, raw)) {
      side.error = "the NCCL unique id from the exchange is not 256 hex digits";
      return side;
    }
    ncclUniqueId id;
    std::memcpy(id.internal, raw.data(), kNcclIdBytes);
    ncclComm_t comm = nullptr;
    try {
      check_cuda(cudaSetDevice(device_), "cudaSetDevice");
      comm = init(id, initiator ? 0 : 1);
      const double first = direction(comm, initiator ? 0 : 1, initiator, duration);  // 0 -> 1
      const double second = direction(comm, initiator ? 0 : 1, !initiator, duration);  // 1 -> 0
      (initiator ? side.tx_gbps : side.rx_gbps) = first;
      (initiator ? side.rx_gbps : side.tx_gbps) = second;
      api_.CommDestroy(comm);
    } catch (const PairFailure& f) {
      side = PairSide{};
      side.error = f.what;
      if (comm) api_.CommAbort(comm);
    }
    return side;
  }

 private:
  void check_cuda(cudaError_t e, const char* what) const {
    if (e != cudaSuccess) throw PairFailure{std::string(what) + ": " + cuda_text(e)};
  }

  // Until the communicator's last call has finished (ncclSuccess), or a failure, or the deadline.
  void wait_comm(ncclComm_t comm, Clock::time_point deadline, const std::string& what) const {
    for (;;) {
      ncclResult_t state = ncclSuccess;
      ncclResult_t rc = api_.CommGetAsyncError(comm, &state);
      if (rc != ncclSuccess) throw PairFailure{gpu::nccl_error(api_, rc, comm, "ncclCommGetAsyncError")};
      if (state == ncclSuccess) return;
      if (state != ncclInProgress) throw PairFailure{gpu::nccl_error(api_, state, comm, what.c_str())};
      if (Clock::now() > deadline) throw PairFailure{what + ": not done by its deadline, aborted"};
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  ncclComm_t init(const ncclUniqueId& id, int rank) const {
    ncclComm_t comm = nullptr;
    if (!api_.CommInitRankConfig) {  // NCCL before 2.14: blocking, no deadline of ours
      ncclResult_t rc = api_.CommInitRank(&comm, 2, id, rank);
      if (rc != ncclSuccess) throw PairFailure{gpu::nccl_error(api_, rc, comm, "ncclCommInitRank")};
      return comm;
    }
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclResult_t rc = api_.CommInitRankConfig(&comm, 2, id, rank, &config);
    if (rc != ncclSuccess && rc != ncclInProgress) {
      if (comm) api_.CommAbort(comm);
      throw PairFailure{gpu::nccl_error(api_, rc, nullptr, "ncclCommInitRankConfig")};
    }
    try {
      wait_comm(comm, Clock::now() + kSetup, "the 2-rank communicator with the peer");
    } catch (const PairFailure&) {
      api_.CommAbort(comm);
      throw;
    }
    return comm;
  }

  // A non-blocking communicator may answer a call with ncclInProgress: the next call waits.
  void enqueue(ncclComm_t comm, ncclResult_t rc, const char* what) const {
    if (rc == ncclInProgress) wait_comm(comm, Clock::now() + kDrain, what);
    else if (rc != ncclSuccess) throw PairFailure{gpu::nccl_error(api_, rc, comm, what)};
  }

  void wait_stream(ncclComm_t comm, Clock::time_point deadline, const char* what) const {
    for (;;) {
      cudaError_t e = cudaStreamQuery(stream_);
      if (e == cudaSuccess) return;
      if (e != cudaErrorNotReady) throw PairFailure{std::string(what) + ": " + cuda_text(e)};
      ncclResult_t state = ncclSuccess;
      if (api_.CommGetAsyncError(comm, &state) == ncclSuccess && state != ncclSuccess && state != ncclInProgress)
        throw PairFailure{gpu::nccl_error(api_, state, comm, what)};
      if (Clock::now() > deadline) throw PairFailure{std::string(what) + ": not done by its deadline, aborted"};
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }

  void transfers(ncclComm_t comm, int peer, bool sending, long n) const {
    for (long i = 0; i < n; ++i)
      enqueue(comm,
              sending ? api_.Send(buf_, bytes_, ncclChar, peer, comm, stream_)
                      : api_.Recv(buf_, bytes_, ncclChar, peer, comm, stream_),
              sending ? "ncclSend" : "ncclRecv");
  }

  // One direction; returns the rate this end measured, in Gbit/s.
  double direction(ncclComm_t comm, int my_rank, bool sending, std::chrono::milliseconds duration) {
    const int peer = 1 - my_rank;
    transfers(comm, peer, sending, 1);  // warm-up: connections are set up on first use
    wait_stream(comm, Clock::now() + kSetup, "the first transfer");
    auto t0 = Clock::now();
    transfers(comm, peer, sending, 1);
    wait_stream(comm, Clock::now() + kDrain, "the calibration transfer");
    const double one_s = std::chrono::duration<double>(Clock::now() - t0).count();
    long n = 0;
    if (sending) {
      host_count_ = nccl_transfer_count(std::chrono::duration<double>(duration).count(), one_s);
      check_cuda(cudaMemcpyAsync(count_dev_, &host_count_, sizeof host_count_, cudaMemcpyHostToDevice, stream_),
                 "cudaMemcpyAsync");
      enqueue(comm, api_.Send(count_dev_, sizeof host_count_, ncclChar, peer, comm, stream_), "ncclSend");
    } else {
      enqueue(comm, api_.Recv(count_dev_, sizeof host_count_, ncclChar, peer, comm, stream_), "ncclRecv");
      check_cuda(cudaMemcpyAsync(&host_count_, count_dev_, sizeof host_count_, cudaMemcpyDeviceToHost, stream_),
                 "cudaMemcpyAsync");
    }
    wait_stream(comm, Clock::now() + kDrain, "the transfer count");
    n = host_count_;
    if (n < 2 || n > 100'000) throw PairFailure{"the peer sent a transfer count of " + std::to_string(n)};
    t0 = Clock::now();
    transfers(comm, peer, sending, n);
    wait_stream(comm, t0 + duration + kDrain, sending ? "the timed sends" : "the timed receives");
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    return static_cast<double>(bytes_) * static_cast<double>(n) * 8.0 / s / 1e9;
  }

  const gpu::NcclApi& api_;
  int device_;
  std::size_t bytes_;
  void* buf_;
  void* count_dev_;
  cudaStream_t stream_;
  long host_count_ = 0;
};

}  // namespace

bool nccl_engine_built() { return true; }

NcclEngineSetup make_nccl_engine(std::size_t bytes) {
  const gpu::NcclApi* api = nullptr;
  try {
    api = &gpu::nccl();
  } catch (const Error& e) {
    return {nullptr, "", e.what()};
  }
  int count = 0;
  if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess || count == 0)
    return {nullptr, "", e != cudaSuccess ? "no CUDA GPU: " + cuda_text(e) : "no CUDA GPU is visible"};
  int device = 0;
  if (const char* lr = std::getenv("LOCAL_RANK"); lr && *lr) {
    char* end = nullptr;
    const long v = std::strtol(lr, &end, 10);
    if (*end || v < 0 || v >= count)
      return {nullptr, "", "LOCAL_RANK=" + std::string(lr) + " names no GPU of the " + std::to_string(count) + " visible"};
    device = static_cast<int>(v);
  }
  if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess) return {nullptr, "", "cudaSetDevice: " + cuda_text(e)};
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, device);
  char bus[32] = "";
  cudaDeviceGetPCIBusId(bus, sizeof bus, device);
  void* buf = nullptr;
  void* count_dev = nullptr;
  cudaStream_t stream = nullptr;
  if (cudaError_t e = cudaMalloc(&buf, bytes); e != cudaSuccess)
    return {nullptr, "", "cudaMalloc of " + std::to_string(bytes) + " bytes: " + cuda_text(e)};
  cudaMemset(buf, 0, bytes);
  if (cudaMalloc(&count_dev, sizeof(long)) != cudaSuccess ||
      cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    cudaFree(buf);
    cudaFree(count_dev);
    return {nullptr, "", "cannot allocate the transfer count or the stream on GPU " + std::to_string(device)};
  }
  cudaDeviceSynchronize();
  int version = 0;
  api->GetVersion(&version);
  NcclEngineSetup out;
  out.engine = std::make_unique<NcclPairEngine>(*api, device, bytes, buf, count_dev, stream);
  out.device = "GPU " + std::to_string(device) + " " + prop.name + " (" + bus + "), NCCL " + version_text(version);
  return out;
}

}  // namespace fabscope::cluster
