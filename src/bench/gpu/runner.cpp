// The harness: one loop for every collective descriptor. Per size and placement it checks the
// result against the reference, warms up, then times batches with CUDA events (optionally one
// CUDA graph per batch) until the stop rule is met. Cross-rank numbers (times, #wrong, device
// names, the settings fingerprint) travel over NCCL itself, so the three launchers share it.
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "bench/efficiency.hpp"
#include "bench/gpu/compute_load.hpp"
#include "bench/gpu/kernels.hpp"
#include "bench/gpu/mpi_boot.hpp"
#include "bench/gpu/nccl_api.hpp"
#include "bench/nccltests_json.hpp"
#include "bench/nvml_link.hpp"
#include "bench/output.hpp"
#include "bench/progress.hpp"
#include "bench/reference.hpp"
#include "bench/run.hpp"
#include "bench/watchdog.hpp"
#include "core/error.hpp"
#include "probe/probe.hpp"
#include "probe/versions.hpp"

extern char** environ;

namespace fabscope::bench {

namespace {

using gpu::NcclApi;

std::atomic<bool> g_mpi_active{false};

void cuda_check(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) throw Error(what + ": " + cudaGetErrorString(e));
}

ncclDataType_t nccl_type(DataType t) {
  switch (t) {
    case DataType::Int8: return ncclInt8;
    case DataType::Uint8: return ncclUint8;
    case DataType::Int32: return ncclInt32;
    case DataType::Uint32: return ncclUint32;
    case DataType::Int64: return ncclInt64;
    case DataType::Uint64: return ncclUint64;
    case DataType::Half: return ncclFloat16;
    case DataType::Float: return ncclFloat32;
    case DataType::Double: return ncclFloat64;
    case DataType::Bfloat16: return ncclBfloat16;
  }
  return ncclFloat32;
}

ncclRedOp_t nccl_op(RedOp op) {
  switch (op) {
    case RedOp::Sum: return ncclSum;
    case RedOp::Prod: return ncclProd;
    case RedOp::Max: return ncclMax;
    case RedOp::Min: return ncclMin;
    case RedOp::Avg: return ncclAvg;
  }
  return ncclSum;
}

std::string hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

// One device record per rank, gathered with ncclAllGather for the "Using devices" block.
struct DeviceRecord {
  char host[96];
  char pci[32];
  char name[96];
  std::int32_t pid;
  std::int32_t device;
  std::int32_t rank;
  std::int32_t pad;
};
static_assert(sizeof(DeviceRecord) == 240);

constexpr std::size_t kReduceSlots = 8;  // doubles per cross-rank reduction

struct Rank {
  int rank = 0;
  int device = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  char* send = nullptr;
  char* recv = nullptr;
  std::size_t send_cap = 0, recv_cap = 0;  // bytes
  double* d_reduce = nullptr;              // kReduceSlots doubles
  double* h_reduce = nullptr;              // pinned
  unsigned long long* d_wrong = nullptr;
  unsigned long long* h_wrong = nullptr;   // pinned
  cudaGraphExec_t graph = nullptr;
  BufferPlan plan;
  bool nccl_memory = false;                // send/recv from ncclMemAlloc (else cudaMalloc)
  void* send_reg = nullptr;                // -R: ncclCommRegister handles or symmetric windows
  void* recv_reg = nullptr;
  std::vector<cudaEvent_t> iter_events;    // -I: one before each iteration and one after the last
  double* d_iter = nullptr;                // -I: per-iteration times, for the max over ranks
  double* h_iter = nullptr;                // pinned
  std::size_t iter_cap = 0;
};

// One timed batch: the per-call time of the timer, the host time to queue one call (wall timer)
// and, with -I, every iteration's time (the largest over ranks).
struct BatchTime {
  double time_us = 0;
  double cpu_us = -1;
  std::vector<double> iter_us;
};

class GpuSession final : public Session {
 public:
  explicit GpuSession(const Options& o);
  ~GpuSession() override;
  Report run(const Options& o, const std::function<void(const Report&, const SizeResult&)>& row) override;
  int rank() const override { return ranks_.front().rank; }
  int nranks() const override { return nranks_; }
  bool prints() const override { return prints_; }
  int nodes() const override { return nodes_; }

 private:
  void on_watchdog(const std::string& step, double waited);
  void set_pending(const std::string& s) {
    std::lock_guard<std::mutex> lock(pending_mu_);
    pending_ = s;
  }
  std::string rank_label(const Rank& r) const {
    return std::to_string(r.rank) + " (" + host_ + " GPU " + std::to_string(r.device) + ")";
  }
  void nccl_check(ncclResult_t rc, const Rank* r, const char* what) {
    if (rc != ncclSuccess && rc != ncclInProgress)
      throw Error(gpu::nccl_error(nccl_, rc, r ? r->comm : nullptr, what) +
                  (r ? " on rank " + std::to_string(r->rank) : ""));
  }
  ncclResult_t init_rank(ncclComm_t* comm, int n, ncclUniqueId id, int rank) {
    if (!nccl_.CommInitRankConfig) return nccl_.CommInitRank(comm, n, id, rank);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
    // nccl-tests 2.19.6 sets it on NCCL 2.28+; the same communicators measure the same.
    if (nccl_version_ >= NCCL_VERSION(2, 28, 0)) config.nvlinkCentricSched = 1;
#endif
    return nccl_.CommInitRankConfig(comm, n, id, rank, &config);
  }
  void set_device(const Rank& r) { cuda_check(cudaSetDevice(r.device), "cudaSetDevice(" + std::to_string(r.device) + ")"); }
  // Waits for every local stream. spin: poll without sleeping (a timed batch ends when the host
  // sees it end, as nccl-tests' spin on cudaStreamQuery; a sleep would be timed).
  void wait_all(const std::string& step, bool spin = false);
  void park_if_aborted();
  void all_reduce(std::size_t n, ncclDataType_t type, ncclRedOp_t op, const std::string& step);
  std::vector<double> reduce_sum(const std::vector<std::vector<double>>& per_rank, const std::string& step);
  std::vector<double> reduce_iter_max(std::vector<std::vector<double>> per_rank, const std::string& step);
  void gather_devices();
  void ensure_buffers(const Options& o, const std::vector<std::uint64_t>& sizes);
  void free_buffers(Rank& r);
  void register_buffers(const Options& o);
  void issue(const Options& o, bool in_place, int iterations, int skip_rank,
             std::chrono::steady_clock::time_point* first_done = nullptr, bool events = false);
  void issue_one(const Options& o, Rank& r, bool in_place, std::size_t shift);
  std::int64_t check(const Options& o, bool in_place);
  BatchTime timed_batch(const Options& o, bool in_place, int iterations, bool graph, int skip_rank, const std::string& step);
  std::vector<double> reduce(const std::vector<std::vector<double>>& per_rank, ncclRedOp_t op, const std::string& step);
  double combine(const std::vector<double>& per_rank, const std::string& step);
  void capture(const Options& o, bool in_place, int iterations);
  void drop_graphs();
  Timing measure(const Options& o, const SizeResult& res, bool in_place, bool& hang_armed);

  const NcclApi& nccl_;
  Options opts_;
  LaunchInfo launch_;
  std::vector<Rank> ranks_;
  int nranks_ = 0;
  bool prints_ = false;
  bool mpi_ = false;
  std::string host_;
  std::vector<DeviceInfo> devices_;
  int nodes_ = 1;
  std::mutex pending_mu_;
  std::string pending_;
  std::string pending_all_;  // every local rank's label
  std::unique_ptr<Watchdog> watchdog_;
  double delay_us_ = 100;    // spin ahead of each timed batch (timed_batch)
  int graph_launches_ = 1;   // a batch = this many launches of the captured graph
  std::uint64_t iter_ = 0;   // iterations issued for the current size: picks the buffer offset
  int nccl_version_ = 0;
  Registration registered_ = Registration::None;
};

GpuSession::GpuSession(const Options& o) : nccl_(gpu::nccl()), opts_(o) {
  host_ = hostname();
  if (nccl_.GetVersion(&nccl_version_) != ncclSuccess) nccl_version_ = 0;
  watchdog_ = std::make_unique<Watchdog>([this](const std::string& step, double waited) { on_watchdog(step, waited); });
  std::string why;
  int ndev = visible_gpus(&why);
  if (ndev == 0) throw Error("no GPU: " + why);
  launch_ = detect_launch(o.launcher, process_env(), o.nccl_port);
  const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
  std::string visible = std::to_string(ndev) + " GPU(s) visible on " + host_ +
                        (cvd ? std::string(" (CUDA_VISIBLE_DEVICES=") + cvd + ")" : "");

  if (launch_.kind == Launcher::Local) {
    int n = o.gpus > 0 ? o.gpus : ndev;
    if (n > ndev) throw Error("--gpus " + std::to_string(n) + " asks for more GPUs than the " + visible);
    nranks_ = n;
    ranks_.resize(n);
    std::vector<int> devs(n);
    std::vector<ncclComm_t> comms(n);
    for (int i = 0; i < n; ++i) ranks_[i].rank = ranks_[i].device = devs[i] = i;
    set_pending("ranks 0.." + std::to_string(n - 1) + " on " + host_);
    watchdog_->arm("communicator creation over " + std::to_string(n) + " GPUs", o.timeout_s);
    ncclResult_t rc = ncclSuccess;
    if (nccl_.CommInitRankConfig) {
      // As nccl-tests creates them: one id, a group of ncclCommInitRankConfig (so the settings
      // nccl-tests passes apply here too).
      ncclUniqueId id;
      rc = nccl_.GetUniqueId(&id);
      if (rc == ncclSuccess) rc = nccl_.GroupStart();
      for (int i = 0; i < n && rc == ncclSuccess; ++i) {
        cuda_check(cudaSetDevice(devs[i]), "cudaSetDevice(" + std::to_string(devs[i]) + ")");
        rc = init_rank(&comms[i], n, id, i);
      }
      ncclResult_t end = nccl_.GroupEnd();
      if (rc == ncclSuccess) rc = end;
    } else {
      rc = nccl_.CommInitAll(comms.data(), n, devs.data());
    }
    watchdog_->disarm();
    park_if_aborted();
    nccl_check(rc, nullptr, "ncclCommInitRank (local GPUs)");
    for (int i = 0; i < n; ++i) ranks_[i].comm = comms[i];
    prints_ = true;
  } else {
    if (o.gpus > 1)
      throw UsageError("bench: --gpus " + std::to_string(o.gpus) + ": with the " + launcher_name(launch_.kind) +
                       " launcher every rank drives one GPU; start more ranks instead");
    ncclUniqueId id;
    std::memset(&id, 0, sizeof id);
    Rank r;
    if (launch_.kind == Launcher::Mpi) {
      auto w = gpu::mpi_init();
      mpi_ = true;
      g_mpi_active = true;
      bool env_knows = launch_.evidence.find('=') != std::string::npos;
      if (env_knows && w.size != launch_.world)
        throw Error("the launcher started " + std::to_string(launch_.world) + " ranks (" + launch_.evidence +
                    ") but MPI_Init reports a world of " + std::to_string(w.size) +
                    ": this fabscope was built against a different MPI than the mpirun that started it");
      r.rank = w.rank;
      nranks_ = w.size;
      r.device = w.local_rank;
      if (r.device >= ndev)
        throw Error("rank " + std::to_string(w.rank) + " is rank " + std::to_string(w.local_rank) +
                    " on its node but only " + visible + "; start at most " + std::to_string(ndev) + " ranks per node");
      if (r.rank == 0) nccl_check(nccl_.GetUniqueId(&id), nullptr, "ncclGetUniqueId");
      gpu::mpi_bcast_from_root(&id, sizeof id);
    } else {  // torchrun
      r.rank = launch_.rank;
      nranks_ = launch_.world;
      r.device = launch_.local_rank;
      if (r.device >= ndev)
        throw Error("LOCAL_RANK=" + std::to_string(launch_.local_rank) + " needs GPU " +
                    std::to_string(launch_.local_rank) + " but only " + visible +
                    "; use --nproc_per_node=" + std::to_string(ndev) + " or fewer");
      // NCCL's own bootstrap: with NCCL_COMM_ID set, ncclGetUniqueId derives the same id on every
      // rank from the address, and rank 0's ncclCommInitRank hosts the bootstrap root there.
      if (!launch_.comm_id_from_user) setenv("NCCL_COMM_ID", launch_.nccl_comm_id.c_str(), 1);
      nccl_check(nccl_.GetUniqueId(&id), nullptr, "ncclGetUniqueId (NCCL_COMM_ID)");
    }
    ranks_.push_back(r);
    set_device(ranks_[0]);
    set_pending("rank " + rank_label(ranks_[0]));
    watchdog_->arm("ncclCommInitRank (" + std::to_string(nranks_) + " ranks" +
                       (launch_.kind == Launcher::Torchrun ? ", NCCL_COMM_ID=" + launch_.nccl_comm_id : std::string()) +
                       ") waiting for every rank to join",
                   o.timeout_s);
    ncclResult_t rc = init_rank(&ranks_[0].comm, nranks_, id, ranks_[0].rank);
    watchdog_->disarm();
    park_if_aborted();
    nccl_check(rc, &ranks_[0], "ncclCommInitRank");
    prints_ = ranks_[0].rank == 0;
  }

  for (auto& r : ranks_) {
    set_device(r);
    int count = 0;
    nccl_check(nccl_.CommCount(r.comm, &count), &r, "ncclCommCount");
    if (count != nranks_)
      throw Error("the communicator has " + std::to_string(count) + " ranks but the launcher promised " +
                  std::to_string(nranks_) + " (mismatched world sizes)");
    cuda_check(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking), "cudaStreamCreate");
    cuda_check(cudaEventCreate(&r.start), "cudaEventCreate");
    cuda_check(cudaEventCreate(&r.stop), "cudaEventCreate");
    std::size_t scratch = std::max<std::size_t>(kReduceSlots * sizeof(double),
                                                sizeof(DeviceRecord) * (static_cast<std::size_t>(nranks_) + 1));
    cuda_check(cudaMalloc(reinterpret_cast<void**>(&r.d_reduce), scratch), "cudaMalloc (scratch)");
    cuda_check(cudaMallocHost(reinterpret_cast<void**>(&r.h_reduce), scratch), "cudaMallocHost");
    cuda_check(cudaMalloc(reinterpret_cast<void**>(&r.d_wrong), sizeof(unsigned long long)), "cudaMalloc");
    cuda_check(cudaMallocHost(reinterpret_cast<void**>(&r.h_wrong), sizeof(unsigned long long)), "cudaMallocHost");
  }
  gather_devices();
}

GpuSession::~GpuSession() {
  drop_graphs();
  for (auto& r : ranks_) {
    cudaSetDevice(r.device);
    if (r.stream) cudaStreamSynchronize(r.stream);
    free_buffers(r);
    if (r.comm) nccl_.CommDestroy(r.comm);
    cudaFree(r.d_reduce);
    cudaFree(r.d_iter);
    cudaFreeHost(r.h_iter);
    for (auto e : r.iter_events) cudaEventDestroy(e);
    cudaFree(r.d_wrong);
    cudaFreeHost(r.h_reduce);
    cudaFreeHost(r.h_wrong);
    if (r.start) cudaEventDestroy(r.start);
    if (r.stop) cudaEventDestroy(r.stop);
    if (r.stream) cudaStreamDestroy(r.stream);
  }
  watchdog_.reset();
  if (mpi_) {
    gpu::mpi_finalize();
    g_mpi_active = false;
  }
}

void GpuSession::on_watchdog(const std::string& step, double waited) {
  std::string stuck;
  {
    std::lock_guard<std::mutex> lock(pending_mu_);
    stuck = pending_;
  }
  std::fprintf(stderr,
               "fabscope bench: watchdog: %s still waiting after %.0f s in %s; aborting the NCCL communicator(s)\n"
               "fabscope bench: stuck rank(s): %s. A rank that never reached this step, died, or cannot be "
               "reached keeps the others waiting; NCCL_DEBUG=INFO shows which.\n",
               stuck.c_str(), waited, step.c_str(), stuck.c_str());
  std::fflush(stderr);
  // ncclCommAbort releases kernels stuck waiting for a peer; give it a grace period, then exit.
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::thread([this, done] {
    for (auto& r : ranks_)
      if (r.comm) nccl_.CommAbort(r.comm);
    *done = true;
  }).detach();
  for (int i = 0; i < 100 && !*done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::fflush(stdout);
  std::_Exit(2);
}

void GpuSession::wait_all(const std::string& step, bool spin) {
  if (pending_all_.empty())
    for (const auto& r : ranks_) pending_all_ += (pending_all_.empty() ? "" : ", ") + rank_label(r);
  set_pending("rank " + pending_all_);
  watchdog_->arm(step, opts_.timeout_s);
  auto t0 = std::chrono::steady_clock::now();
  // Which ranks still run, as a count and a flag per rank: the poll itself builds no strings,
  // so the end of a timed batch is seen within one cudaStreamQuery.
  std::vector<char> done(ranks_.size(), 0);
  std::size_t remaining = ranks_.size(), named = remaining;
  for (std::uint64_t poll = 0;; ++poll) {
    for (std::size_t i = 0; i < ranks_.size(); ++i) {
      if (done[i]) continue;
      cudaError_t e = cudaStreamQuery(ranks_[i].stream);
      if (e == cudaSuccess) {
        done[i] = 1;
        --remaining;
      } else if (e != cudaErrorNotReady) {
        watchdog_->disarm();
        cuda_check(e, step + " on rank " + std::to_string(ranks_[i].rank));
      }
    }
    if (remaining == 0) break;
    if (remaining != named) {  // tell the watchdog who is left
      std::string pending;
      for (std::size_t i = 0; i < ranks_.size(); ++i)
        if (!done[i]) pending += (pending.empty() ? "" : ", ") + rank_label(ranks_[i]);
      set_pending("rank " + pending);
      named = remaining;
    }
    if (poll % 64 == 63) {
      for (std::size_t i = 0; i < ranks_.size(); ++i) {
        if (done[i]) continue;
        ncclResult_t async = ncclSuccess;
        nccl_.CommGetAsyncError(ranks_[i].comm, &async);
        if (async != ncclSuccess && async != ncclInProgress) {
          watchdog_->disarm();
          nccl_check(async, &ranks_[i], step.c_str());
        }
      }
    }
    if (spin || std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(2)) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  watchdog_->disarm();
  park_if_aborted();
}

void GpuSession::park_if_aborted() {
  // The abort released the stream; the watchdog thread is about to exit the process. Never
  // report results of an aborted step.
  while (watchdog_->fired()) std::this_thread::sleep_for(std::chrono::seconds(1));
}

// In-place reduction of n elements at d_reduce on every local rank.
void GpuSession::all_reduce(std::size_t n, ncclDataType_t type, ncclRedOp_t op, const std::string& step) {
  nccl_check(nccl_.GroupStart(), nullptr, "ncclGroupStart");
  for (auto& r : ranks_) {
    set_device(r);
    nccl_check(nccl_.AllReduce(r.d_reduce, r.d_reduce, n, type, op, r.comm, r.stream), &r, "ncclAllReduce");
  }
  nccl_check(nccl_.GroupEnd(), nullptr, "ncclGroupEnd");
  for (auto& r : ranks_) {
    set_device(r);
    cuda_check(cudaMemcpyAsync(r.h_reduce, r.d_reduce, n * 8, cudaMemcpyDeviceToHost, r.stream), "cudaMemcpyAsync");
  }
  wait_all(step);
}

std::vector<double> GpuSession::reduce_sum(const std::vector<std::vector<double>>& per_rank, const std::string& step) {
  return reduce(per_rank, ncclSum, step);
}

std::vector<double> GpuSession::reduce(const std::vector<std::vector<double>>& per_rank, ncclRedOp_t op,
                                       const std::string& step) {
  std::size_t n = per_rank.front().size();
  if (n > kReduceSlots) throw Error("internal: reduction of " + std::to_string(n) + " values at " + step);
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    auto& r = ranks_[i];
    set_device(r);
    std::memcpy(r.h_reduce, per_rank[i].data(), n * sizeof(double));
    cuda_check(cudaMemcpyAsync(r.d_reduce, r.h_reduce, n * sizeof(double), cudaMemcpyHostToDevice, r.stream), "cudaMemcpyAsync");
  }
  all_reduce(n, ncclFloat64, op, step);
  return std::vector<double>(ranks_[0].h_reduce, ranks_[0].h_reduce + n);
}

// One number per local rank -> the job's number under -a (nccl-tests' average modes).
double GpuSession::combine(const std::vector<double>& per_rank, const std::string& step) {
  std::vector<std::vector<double>> vals;
  ncclRedOp_t op = ncclSum;
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    double v = per_rank[i];
    if (opts_.average == Average::Rank0 && ranks_[i].rank != 0) v = 0;
    vals.push_back({v});
  }
  if (opts_.average == Average::Min) op = ncclMin;
  if (opts_.average == Average::Max) op = ncclMax;
  double v = reduce(vals, op, step)[0];
  return opts_.average == Average::Mean ? v / nranks_ : v;
}

void GpuSession::gather_devices() {
  nccl_check(nccl_.GroupStart(), nullptr, "ncclGroupStart");
  for (auto& r : ranks_) {
    set_device(r);
    DeviceRecord rec;
    std::memset(&rec, 0, sizeof rec);
    std::snprintf(rec.host, sizeof rec.host, "%.95s", host_.c_str());
    cudaDeviceGetPCIBusId(rec.pci, sizeof rec.pci, r.device);
    for (char* c = rec.pci; *c; ++c) *c = static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, r.device) == cudaSuccess) std::snprintf(rec.name, sizeof rec.name, "%.95s", prop.name);
    rec.pid = static_cast<std::int32_t>(getpid());
    rec.device = r.device;
    rec.rank = r.rank;
    char* base = reinterpret_cast<char*>(r.d_reduce);
    cuda_check(cudaMemcpy(base, &rec, sizeof rec, cudaMemcpyHostToDevice), "cudaMemcpy");
    nccl_check(nccl_.AllGather(base, base + sizeof rec, sizeof rec, ncclUint8, r.comm, r.stream), &r, "ncclAllGather");
  }
  nccl_check(nccl_.GroupEnd(), nullptr, "ncclGroupEnd");
  wait_all("ncclAllGather of the device list");
  std::vector<DeviceRecord> recs(nranks_);
  set_device(ranks_[0]);
  cuda_check(cudaMemcpy(recs.data(), reinterpret_cast<char*>(ranks_[0].d_reduce) + sizeof(DeviceRecord),
                        sizeof(DeviceRecord) * nranks_, cudaMemcpyDeviceToHost),
             "cudaMemcpy");
  std::set<std::string> hosts;
  for (const auto& rec : recs) {
    DeviceInfo d;
    d.rank = rec.rank;
    d.host = std::string(rec.host, strnlen(rec.host, sizeof rec.host));
    d.pid = rec.pid;
    d.cuda_device = rec.device;
    d.pci_bus_id = std::string(rec.pci, strnlen(rec.pci, sizeof rec.pci));
    d.name = std::string(rec.name, strnlen(rec.name, sizeof rec.name));
    hosts.insert(d.host);
    devices_.push_back(d);
  }
  nodes_ = static_cast<int>(hosts.size());
}

void GpuSession::free_buffers(Rank& r) {
  set_device(r);
  if (registered_ == Registration::Symmetric && nccl_.CommWindowDeregister) {
    if (r.send_reg) nccl_.CommWindowDeregister(r.comm, r.send_reg);
    if (r.recv_reg) nccl_.CommWindowDeregister(r.comm, r.recv_reg);
  } else if (registered_ == Registration::Local && nccl_.CommDeregister) {
    if (r.send_reg) nccl_.CommDeregister(r.comm, r.send_reg);
    if (r.recv_reg) nccl_.CommDeregister(r.comm, r.recv_reg);
  }
  r.send_reg = r.recv_reg = nullptr;
  for (char* p : {r.send, r.recv}) {
    if (!p) continue;
    if (r.nccl_memory) nccl_.MemFree(p);
    else cudaFree(p);
  }
  r.send = r.recv = nullptr;
  r.send_cap = r.recv_cap = 0;
}

void GpuSession::ensure_buffers(const Options& o, const std::vector<std::uint64_t>& sizes) {
  const auto& d = describe(o.collective);
  std::size_t ts = type_size(o.type);
  // The largest send and receive buffers any of the sizes needs on this rank (at least 256 B).
  auto needed = [&](const Rank& r) {
    std::size_t send = 256, recv = 256;
    for (auto b : sizes) {
      BufferPlan p = d.plan(b / ts, ts, nranks_, r.rank);
      send = std::max(send, p.send_count * ts);
      recv = std::max(recv, std::max(p.recv_count, p.inplace_elements()) * ts);
    }
    return std::pair{send, recv};
  };
  bool any = false;
  for (auto& r : ranks_) {
    auto [send, recv] = needed(r);
    if (send <= r.send_cap && recv <= r.recv_cap && registered_ == o.registration) continue;
    any = true;
  }
  if (!any) return;
  // Every rank reallocates (and re-registers: a symmetric window is a collective call).
  for (auto& r : ranks_) free_buffers(r);
  registered_ = Registration::None;
  for (auto& r : ranks_) {
    auto [send, recv] = needed(r);
    set_device(r);
    std::size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    if (send + recv > free_b)
      throw Error("the largest size needs " + size_label(send + recv) + " of buffers on GPU " +
                  std::to_string(r.device) + " but only " + size_label(free_b) + " is free; lower -e/--maxbytes");
    // ncclMemAlloc where NCCL has it (2.19+), as nccl-tests allocates: memory NCCL can register
    // for every transport, symmetric windows included.
    r.nccl_memory = nccl_.MemAlloc && nccl_.MemFree;
    if (r.nccl_memory) {
      nccl_check(nccl_.MemAlloc(reinterpret_cast<void**>(&r.send), send), &r, "ncclMemAlloc (send buffer)");
      nccl_check(nccl_.MemAlloc(reinterpret_cast<void**>(&r.recv), recv), &r, "ncclMemAlloc (receive buffer)");
    } else {
      cuda_check(cudaMalloc(reinterpret_cast<void**>(&r.send), send), "cudaMalloc (" + size_label(send) + ")");
      cuda_check(cudaMalloc(reinterpret_cast<void**>(&r.recv), recv), "cudaMalloc (" + size_label(recv) + ")");
    }
    r.send_cap = send;
    r.recv_cap = recv;
  }
  register_buffers(o);
}

void GpuSession::register_buffers(const Options& o) {
  if (o.registration == Registration::None) return;
  std::string version = probe::nccl_version_string(nccl_version_);
  if (o.registration == Registration::Symmetric) {
    if (!nccl_.CommWindowRegister || !nccl_.CommWindowDeregister || nccl_version_ < NCCL_VERSION(2, 27, 0))
      throw Error("-R 2 (symmetric registration) needs NCCL 2.27 or newer; this NCCL is " + version +
                  " (-R 1 registers locally)");
    if (!ranks_.front().nccl_memory)
      throw Error("-R 2 needs buffers from ncclMemAlloc, which this NCCL (" + version + ") lacks");
  } else if (!nccl_.CommRegister || !nccl_.CommDeregister) {
    throw Error("-R 1 (local registration) needs NCCL 2.19 or newer; this NCCL is " + version);
  }
  // A window is created by every rank together: one group over the local ranks.
  nccl_check(nccl_.GroupStart(), nullptr, "ncclGroupStart");
  for (auto& r : ranks_) {
    set_device(r);
    if (o.registration == Registration::Symmetric) {
      constexpr int kWinCollSymmetric = 0x01;  // NCCL_WIN_COLL_SYMMETRIC
      nccl_check(nccl_.CommWindowRegister(r.comm, r.send, r.send_cap, &r.send_reg, kWinCollSymmetric), &r,
                 "ncclCommWindowRegister (send buffer)");
      nccl_check(nccl_.CommWindowRegister(r.comm, r.recv, r.recv_cap, &r.recv_reg, kWinCollSymmetric), &r,
                 "ncclCommWindowRegister (receive buffer)");
    } else {
      nccl_check(nccl_.CommRegister(r.comm, r.send, r.send_cap, &r.send_reg), &r, "ncclCommRegister (send buffer)");
      nccl_check(nccl_.CommRegister(r.comm, r.recv, r.recv_cap, &r.recv_reg), &r, "ncclCommRegister (receive buffer)");
    }
  }
  nccl_check(nccl_.GroupEnd(), nullptr, "ncclGroupEnd (buffer registration)");
  registered_ = o.registration;
}

// One operation of one rank. shift moves both buffers by whole sizes from one iteration to the
// next (nccl-tests' offset rotation through the allocation, against cache effects).
void GpuSession::issue_one(const Options& o, Rank& r, bool in_place, std::size_t shift) {
  const BufferPlan& p = r.plan;
  const std::size_t ts = type_size(o.type);
  const ncclDataType_t dt = nccl_type(o.type);
  const char* sp = (in_place ? r.recv + p.inplace_send_offset * ts : r.send) + shift;
  char* rp = (in_place ? r.recv + p.inplace_recv_offset * ts : r.recv) + shift;
  const std::size_t n = p.param_count;
  const int rank = r.rank, nr = nranks_;
  ncclResult_t rc = ncclSuccess;
  const char* call = "ncclAllReduce";
  switch (o.collective) {
    case Collective::AllReduce: rc = nccl_.AllReduce(sp, rp, n, dt, nccl_op(o.op), r.comm, r.stream); break;
    case Collective::AllGather: call = "ncclAllGather"; rc = nccl_.AllGather(sp, rp, n, dt, r.comm, r.stream); break;
    case Collective::ReduceScatter:
      call = "ncclReduceScatter";
      rc = nccl_.ReduceScatter(sp, rp, n, dt, nccl_op(o.op), r.comm, r.stream);
      break;
    case Collective::Broadcast: call = "ncclBroadcast"; rc = nccl_.Broadcast(sp, rp, n, dt, o.root, r.comm, r.stream); break;
    case Collective::Reduce: call = "ncclReduce"; rc = nccl_.Reduce(sp, rp, n, dt, nccl_op(o.op), o.root, r.comm, r.stream); break;
    case Collective::AlltoAll:
      call = "ncclAlltoAll";
      if (nccl_.AlltoAll) {
        rc = nccl_.AlltoAll(sp, rp, n, dt, r.comm, r.stream);
      } else {
        call = "ncclSend/ncclRecv (alltoall)";
        rc = nccl_.GroupStart();
        for (int peer = 0; peer < nr && rc == ncclSuccess; ++peer) {
          rc = nccl_.Send(sp + peer * n * ts, n, dt, peer, r.comm, r.stream);
          if (rc == ncclSuccess) rc = nccl_.Recv(rp + peer * n * ts, n, dt, peer, r.comm, r.stream);
        }
        ncclResult_t end = nccl_.GroupEnd();
        if (rc == ncclSuccess) rc = end;
      }
      break;
    case Collective::SendRecv:
      call = "ncclSend/ncclRecv";
      rc = nccl_.GroupStart();
      if (rc == ncclSuccess) rc = nccl_.Send(sp, n, dt, (rank + 1) % nr, r.comm, r.stream);
      if (rc == ncclSuccess) rc = nccl_.Recv(rp, n, dt, (rank - 1 + nr) % nr, r.comm, r.stream);
      if (ncclResult_t end = nccl_.GroupEnd(); rc == ncclSuccess) rc = end;
      break;
    case Collective::Gather:
    case Collective::Scatter: {
      bool gather = o.collective == Collective::Gather;
      call = gather ? "ncclGather" : "ncclScatter";
      if (n == 0) break;
      auto fn = gather ? nccl_.Gather : nccl_.Scatter;
      if (fn) {
        rc = fn(sp, rp, n, dt, o.root, r.comm, r.stream);
        break;
      }
      // NCCL before 2.28: the root's receives (gather) or sends (scatter), one per rank.
      call = gather ? "ncclSend/ncclRecv (gather)" : "ncclSend/ncclRecv (scatter)";
      rc = nccl_.GroupStart();
      if (gather) {
        if (rc == ncclSuccess) rc = nccl_.Send(sp, n, dt, o.root, r.comm, r.stream);
        for (int peer = 0; rank == o.root && peer < nr && rc == ncclSuccess; ++peer)
          rc = nccl_.Recv(rp + peer * n * ts, n, dt, peer, r.comm, r.stream);
      } else {
        for (int peer = 0; rank == o.root && peer < nr && rc == ncclSuccess; ++peer)
          rc = nccl_.Send(sp + peer * n * ts, n, dt, peer, r.comm, r.stream);
        if (rc == ncclSuccess) rc = nccl_.Recv(rp, n, dt, o.root, r.comm, r.stream);
      }
      if (ncclResult_t end = nccl_.GroupEnd(); rc == ncclSuccess) rc = end;
      break;
    }
    case Collective::AlltoAllv: {
      call = "ncclSend/ncclRecv (alltoallv)";
      std::uint64_t total = static_cast<std::uint64_t>(n) * nr * ts;
      rc = nccl_.GroupStart();
      const char* s = sp;
      char* d = rp;
      for (int peer = 0; peer < nr && rc == ncclSuccess; ++peer) {
        std::size_t sc = alltoallv_peer_bytes(rank, peer, nr, total) / ts;
        std::size_t rcnt = alltoallv_peer_bytes(peer, rank, nr, total) / ts;
        if (sc) rc = nccl_.Send(s, sc, dt, peer, r.comm, r.stream);
        s += sc * ts;
        if (rc == ncclSuccess && rcnt) rc = nccl_.Recv(d, rcnt, dt, peer, r.comm, r.stream);
        d += rcnt * ts;
      }
      if (ncclResult_t end = nccl_.GroupEnd(); rc == ncclSuccess) rc = end;
      break;
    }
    case Collective::HyperCube:
      break;  // staged over every local rank at once: issue()
  }
  if (rc != ncclSuccess && rc != ncclInProgress) nccl_check(rc, &r, call);
}

void GpuSession::issue(const Options& o, bool in_place, int iterations, int skip_rank,
                       std::chrono::steady_clock::time_point* first_done, bool events) {
  const BufferPlan& p0 = ranks_.front().plan;
  const std::size_t ts = type_size(o.type);
  // Rotation step and count: whole operation footprints that fit in both allocations.
  std::size_t unit = std::max({p0.send_count, p0.recv_count, p0.inplace_elements()}) * ts;
  std::size_t cap = std::min(ranks_.front().send_cap, ranks_.front().recv_cap);
  std::size_t steps = unit ? std::max<std::size_t>(1, cap / unit) : 1;
  // One rank per process calls NCCL directly, as nccl-tests does with one GPU per thread; a
  // group is needed only to drive several GPUs from one thread.
  const bool group = ranks_.size() > 1;
  const bool hypercube = o.collective == Collective::HyperCube;
  for (int it = 0; it < iterations; ++it) {
    const std::size_t shift = unit * (iter_ % steps);
    ++iter_;
    if (events)
      for (auto& r : ranks_) {
        if (group) set_device(r);
        cuda_check(cudaEventRecord(r.iter_events[it], r.stream), "cudaEventRecord");
      }
    if (hypercube) {
      // Recursive doubling: at step `mask` each rank swaps its mask-sized run of blocks with
      // rank ^ mask. Every step is its own group over the local ranks: a step sends what the
      // step before received.
      const std::size_t n = p0.param_count, block = n * ts;
      for (auto& r : ranks_) {
        if (r.rank == skip_rank) continue;
        char* rb = (in_place ? r.recv + r.plan.inplace_recv_offset * ts : r.recv) + shift;
        const char* sb = (in_place ? r.recv + r.plan.inplace_send_offset * ts : r.send) + shift;
        if (group) set_device(r);
        if (rb + r.rank * block != sb && block)
          cuda_check(cudaMemcpyAsync(rb + r.rank * block, sb, block, cudaMemcpyDeviceToDevice, r.stream),
                     "cudaMemcpyAsync (hypercube)");
      }
      for (int mask = 1; mask < nranks_; mask <<= 1) {
        nccl_check(nccl_.GroupStart(), nullptr, "ncclGroupStart");
        for (auto& r : ranks_) {
          if (r.rank == skip_rank) continue;
          char* rb = (in_place ? r.recv + r.plan.inplace_recv_offset * ts : r.recv) + shift;
          int sblk = r.rank & ~(mask - 1), rblk = sblk ^ mask, peer = r.rank ^ mask;
          ncclResult_t rc = nccl_.Send(rb + sblk * block, n * mask, nccl_type(o.type), peer, r.comm, r.stream);
          if (rc == ncclSuccess) rc = nccl_.Recv(rb + rblk * block, n * mask, nccl_type(o.type), peer, r.comm, r.stream);
          nccl_check(rc, &r, "ncclSend/ncclRecv (hypercube)");
        }
        nccl_check(nccl_.GroupEnd(), nullptr, "ncclGroupEnd");
      }
    } else {
      if (group) nccl_check(nccl_.GroupStart(), nullptr, "ncclGroupStart");
      for (auto& r : ranks_)
        if (r.rank != skip_rank) issue_one(o, r, in_place, shift);
      if (group) nccl_check(nccl_.GroupEnd(), nullptr, "ncclGroupEnd");
    }
    if (it == 0 && first_done) *first_done = std::chrono::steady_clock::now();
  }
  if (events)
    for (auto& r : ranks_) {
      if (group) set_device(r);
      cuda_check(cudaEventRecord(r.iter_events[iterations], r.stream), "cudaEventRecord");
    }
}

std::int64_t GpuSession::check(const Options& o, bool in_place) {
  const auto& d = describe(o.collective);
  std::size_t ts = type_size(o.type);
  RedOp in_op = ref::input_op(o.collective, o.op);
  iter_ = 0;  // the checked iteration uses the buffers' start
  for (auto& r : ranks_) {
    set_device(r);
    const BufferPlan& p = r.plan;
    char* input = in_place ? r.recv + p.inplace_send_offset * ts : r.send;
    std::size_t out_elems = in_place ? p.inplace_elements() : p.recv_count;
    // 0xff bytes: NaN in every float type and -1 / all-ones in the integer ones, values the
    // reference never expects, so an element NCCL did not write counts as wrong.
    cuda_check(cudaMemsetAsync(r.recv, 0xff, std::max<std::size_t>(out_elems * ts, 1), r.stream), "cudaMemsetAsync");
    cuda_check(gpu::launch_fill(input, o.type, p.send_count, in_op, r.rank, r.stream), "init kernel");
    cuda_check(cudaMemsetAsync(r.d_wrong, 0, sizeof(unsigned long long), r.stream), "cudaMemsetAsync");
  }
  issue(o, in_place, 1, -1);
  for (auto& r : ranks_) {
    set_device(r);
    const BufferPlan& p = r.plan;
    const char* out = in_place ? r.recv + p.inplace_recv_offset * ts : r.recv;
    gpu::VerifyArgs a{o.collective, o.op, o.type, nranks_, r.rank, o.root, p.param_count};
    cuda_check(gpu::launch_verify(out, p.recv_count, a, r.d_wrong, r.stream), "verify kernel");
    cuda_check(cudaMemcpyAsync(r.h_wrong, r.d_wrong, sizeof(unsigned long long), cudaMemcpyDeviceToHost, r.stream),
               "cudaMemcpyAsync");
  }
  wait_all(std::string(d.name) + " check");
  std::vector<std::vector<double>> vals;
  for (auto& r : ranks_) vals.push_back({static_cast<double>(*r.h_wrong)});
  return static_cast<std::int64_t>(reduce_sum(vals, "reduction of #wrong")[0]);
}

void GpuSession::capture(const Options& o, bool in_place, int iterations) {
  drop_graphs();
  for (auto& r : ranks_) {
    set_device(r);
    cuda_check(cudaStreamBeginCapture(r.stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  }
  // End every capture before instantiating: in thread-local capture mode the thread may not
  // instantiate while one of its streams is still capturing.
  std::vector<cudaGraph_t> graphs(ranks_.size(), nullptr);
  std::string failure;
  try {
    issue(o, in_place, iterations, -1);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    set_device(ranks_[i]);
    cudaError_t e = cudaStreamEndCapture(ranks_[i].stream, &graphs[i]);
    if (e != cudaSuccess && failure.empty()) failure = std::string("cudaStreamEndCapture: ") + cudaGetErrorString(e);
  }
  for (std::size_t i = 0; i < ranks_.size() && failure.empty(); ++i) {
    set_device(ranks_[i]);
    cudaError_t e = cudaGraphInstantiate(&ranks_[i].graph, graphs[i], 0);
    if (e != cudaSuccess) failure = std::string("cudaGraphInstantiate: ") + cudaGetErrorString(e);
  }
  for (auto g : graphs)
    if (g) cudaGraphDestroy(g);
  if (!failure.empty()) throw Error("CUDA graph capture: " + failure);
}

void GpuSession::drop_graphs() {
  for (auto& r : ranks_)
    if (r.graph) {
      cudaGraphExecDestroy(r.graph);
      r.graph = nullptr;
    }
}

BatchTime GpuSession::timed_batch(const Options& o, bool in_place, int iterations, bool graph, int skip_rank,
                                  const std::string& step) {
  BatchTime bt;
  const bool events = o.per_iter && !graph;
  if (events) {
    for (auto& r : ranks_) {
      set_device(r);
      while (r.iter_events.size() < static_cast<std::size_t>(iterations) + 1) {
        cudaEvent_t e;
        cuda_check(cudaEventCreate(&e), "cudaEventCreate");
        r.iter_events.push_back(e);
      }
    }
  }
  const bool gpu_timer = o.timer == Timer::Gpu;
  if (gpu_timer) {
    // A short spin kernel ahead of the start event: the GPU reaches the start event only after
    // the CPU has queued the first operation, so the launch latency of that operation is not
    // timed (the GPU-only time; --timer wall is nccl-tests' time, launch cost included).
    for (auto& r : ranks_) {
      set_device(r);
      cuda_check(gpu::launch_delay(delay_us_, r.stream), "delay kernel");
    }
  }
  // nccl-tests' timer: the host clock from before the first launch to the moment the host sees
  // the batch complete, so the cost of issuing each call is in the time as an application sees it.
  auto t0 = std::chrono::steady_clock::now();
  auto first = t0;
  if (gpu_timer) {
    for (auto& r : ranks_) {
      set_device(r);
      cuda_check(cudaEventRecord(r.start, r.stream), "cudaEventRecord");
    }
  }
  if (graph) {
    for (int g = 0; g < graph_launches_; ++g) {
      for (auto& r : ranks_) {
        if (ranks_.size() > 1) set_device(r);
        cuda_check(cudaGraphLaunch(r.graph, r.stream), "cudaGraphLaunch");
      }
      if (g == 0) first = std::chrono::steady_clock::now();
    }
  } else {
    issue(o, in_place, iterations, skip_rank, &first, events);
  }
  auto queued = std::chrono::steady_clock::now();
  if (gpu_timer) {
    for (auto& r : ranks_) {
      set_device(r);
      cuda_check(cudaEventRecord(r.stop, r.stream), "cudaEventRecord");
    }
    // Next batch: cover twice the time it took to queue the start events and the first operation.
    double queued_us = std::chrono::duration<double, std::micro>(first - t0).count();
    delay_us_ = std::clamp(2 * queued_us + 10, 20.0, 5000.0);
  }
  wait_all(step, /*spin=*/!gpu_timer);
  auto t1 = std::chrono::steady_clock::now();

  std::vector<double> per_rank;
  for (auto& r : ranks_) {
    if (gpu_timer) {
      float ms = 0;
      cuda_check(cudaEventElapsedTime(&ms, r.start, r.stop), "cudaEventElapsedTime");
      per_rank.push_back(static_cast<double>(ms) * 1000.0 / iterations);
    } else {
      per_rank.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / iterations);
    }
  }
  bt.time_us = combine(per_rank, "reduction of batch times after " + step);
  if (!gpu_timer) {
    std::vector<double> cpu(ranks_.size(), std::chrono::duration<double, std::micro>(queued - t0).count() / iterations);
    bt.cpu_us = combine(cpu, "reduction of queueing times after " + step);
  }
  if (events) {
    // Each iteration's time: the largest over the local ranks, then over every rank.
    std::vector<std::vector<double>> it(ranks_.size(), std::vector<double>(iterations));
    for (std::size_t i = 0; i < ranks_.size(); ++i) {
      for (int k = 0; k < iterations; ++k) {
        float ms = 0;
        cuda_check(cudaEventElapsedTime(&ms, ranks_[i].iter_events[k], ranks_[i].iter_events[k + 1]),
                   "cudaEventElapsedTime");
        it[i][k] = static_cast<double>(ms) * 1000.0;
      }
    }
    bt.iter_us = reduce_iter_max(std::move(it), "reduction of per-iteration times after " + step);
  }
  return bt;
}

std::vector<double> GpuSession::reduce_iter_max(std::vector<std::vector<double>> per_rank, const std::string& step) {
  std::size_t n = per_rank.front().size();
  for (auto& r : ranks_) {
    if (r.iter_cap >= n) continue;
    set_device(r);
    cudaFree(r.d_iter);
    cudaFreeHost(r.h_iter);
    r.d_iter = r.h_iter = nullptr;
    r.iter_cap = 0;
    cuda_check(cudaMalloc(reinterpret_cast<void**>(&r.d_iter), n * sizeof(double)), "cudaMalloc (-I times)");
    cuda_check(cudaMallocHost(reinterpret_cast<void**>(&r.h_iter), n * sizeof(double)), "cudaMallocHost (-I times)");
    r.iter_cap = n;
  }
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    auto& r = ranks_[i];
    set_device(r);
    std::memcpy(r.h_iter, per_rank[i].data(), n * sizeof(double));
    cuda_check(cudaMemcpyAsync(r.d_iter, r.h_iter, n * sizeof(double), cudaMemcpyHostToDevice, r.stream), "cudaMemcpyAsync");
  }
  nccl_check(nccl_.GroupStart(), nullptr, "ncclGroupStart");
  for (auto& r : ranks_)
    nccl_check(nccl_.AllReduce(r.d_iter, r.d_iter, n, ncclFloat64, ncclMax, r.comm, r.stream), &r, "ncclAllReduce");
  nccl_check(nccl_.GroupEnd(), nullptr, "ncclGroupEnd");
  for (auto& r : ranks_)
    cuda_check(cudaMemcpyAsync(r.h_iter, r.d_iter, n * sizeof(double), cudaMemcpyDeviceToHost, r.stream), "cudaMemcpyAsync");
  wait_all(step);
  return std::vector<double>(ranks_[0].h_iter, ranks_[0].h_iter + n);
}

Timing GpuSession::measure(const Options& o, const SizeResult& res, bool in_place, bool& hang_armed) {
  const auto& d = describe(o.collective);
  std::string what = std::string(d.name) + " " + std::to_string(res.bytes) + " B " + (in_place ? "in-place" : "out-of-place");
  std::optional<std::int64_t> wrong;
  if (o.check && (!in_place || d.in_place_checked)) wrong = check(o, in_place);
  iter_ = 0;
  const StopRule& rule = o.stop;
  int skip = -1;
  if (hang_armed) {  // test hook: one rank leaves the others waiting in the first timed batch
    skip = o.debug_hang_rank;
    hang_armed = false;
  }
  int k;
  if (rule.adaptive) {
    double first = timed_batch(o, in_place, 1, false, skip, what + ", first iteration").time_us;
    int warm = o.warmup_explicit ? o.stop.fixed_warmup : warmup_iterations(rule, first);
    // The warm-up is timed too (not kept): a better estimate than the cold first iteration.
    double est_us = warm > 0 ? timed_batch(o, in_place, warm, false, -1, what + ", warm-up").time_us : first;
    k = batch_iterations(rule, est_us);
  } else {
    issue(o, in_place, rule.fixed_warmup, skip);
    wait_all(what + ", warm-up");
    k = rule.fixed_iters;
  }
  if (o.graphs) {
    // Graphs of at most kMaxGraphIters operations, launched as often as the batch needs:
    // capturing thousands of NCCL calls costs seconds.
    constexpr int kMaxGraphIters = 256;
    int per_graph = std::min(k, kMaxGraphIters);
    graph_launches_ = (k + per_graph - 1) / per_graph;
    k = per_graph * graph_launches_;
    capture(o, in_place, per_graph);
    for (auto& r : ranks_) {
      set_device(r);
      cuda_check(cudaGraphLaunch(r.graph, r.stream), "cudaGraphLaunch");
    }
    wait_all(what + ", graph warm-up");
  }
  iter_ = 0;  // timed iterations start at the buffers' start, as nccl-tests' do
  Estimator est(rule);
  double cpu_sum = 0;
  std::vector<double> iter_us;
  while (!est.done()) {
    BatchTime bt = timed_batch(o, in_place, k, o.graphs, -1, what);
    est.add_batch(bt.time_us, k);
    cpu_sum += bt.cpu_us * k;
    iter_us.insert(iter_us.end(), bt.iter_us.begin(), bt.iter_us.end());
  }
  drop_graphs();
  Timing t = make_timing(d, nranks_, algbw_bytes(d, ranks_.front().plan, type_size(o.type), nranks_), est.mean_us());
  t.wrong = wrong;
  t.iterations = est.iterations();
  t.batches = est.batches();
  t.rel_ci = est.rel_ci();
  if (o.timer == Timer::Wall && t.iterations > 0) t.cpu_time_us = cpu_sum / static_cast<double>(t.iterations);
  if (o.per_iter) t.per_iter = iter_stats(std::move(iter_us), o.per_iter_skip);
  return t;
}

// nccl-tests' time stamps: local time, "%Y-%m-%d %H:%M:%S".
std::string local_time_now() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Report GpuSession::run(const Options& o, const std::function<void(const Report&, const SizeResult&)>& row) {
  opts_ = o;
  const auto& d = describe(o.collective);
  if (d.has_root && o.root >= nranks_)
    throw UsageError("bench: --root " + std::to_string(o.root) + " but the job has " + std::to_string(nranks_) +
                     " ranks (0.." + std::to_string(nranks_ - 1) + ")");
  if (d.runs_on && !d.runs_on(nranks_))
    throw UsageError("bench: " + std::string(d.name) + " needs a power-of-two number of ranks (recursive "
                     "doubling); this job has " + std::to_string(nranks_));
  // Ranks started with different flags would wait for each other forever: compare first.
  std::uint64_t fp = settings_fingerprint(o);
  for (auto& r : ranks_) {
    set_device(r);
    std::uint64_t v[2] = {fp, ~fp};
    std::memcpy(r.h_reduce, v, sizeof v);
    cuda_check(cudaMemcpyAsync(r.d_reduce, r.h_reduce, sizeof v, cudaMemcpyHostToDevice, r.stream), "cudaMemcpyAsync");
  }
  all_reduce(2, ncclUint64, ncclMin, "comparison of the settings of every rank");
  std::uint64_t lo = 0, hi_inv = 0;
  std::memcpy(&lo, ranks_[0].h_reduce, 8);
  std::memcpy(&hi_inv, reinterpret_cast<char*>(ranks_[0].h_reduce) + 8, 8);
  if (lo != fp || ~hi_inv != fp)
    throw Error("the ranks were started with different settings (collective, type, op, sizes or "
                "iteration flags differ); start every rank with the same command line");

  Report rep;
  rep.options = o;
  rep.devices = devices_;
  rep.env.hostname = host_;
  rep.env.launcher = launcher_name(launch_.kind);
  rep.env.launch_evidence = launch_.evidence;
  rep.env.nranks = nranks_;
  rep.env.processes = launch_.kind == Launcher::Local ? 1 : nranks_;
  int v = 0;
  if (nccl_.GetVersion(&v) == ncclSuccess) rep.env.nccl_version = probe::nccl_version_string(v);
  if (cudaDriverGetVersion(&v) == cudaSuccess) rep.env.cuda_driver = probe::cuda_version_string(v);
  if (cudaRuntimeGetVersion(&v) == cudaSuccess) rep.env.cuda_runtime = probe::cuda_version_string(v);
  rep.env.fabscope_version = FABSCOPE_VERSION;
  rep.env.date_utc = utc_now();
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    if (kv.rfind("NCCL_", 0) != 0) continue;
    auto eq = kv.find('=');
    if (eq != std::string::npos) rep.env.nccl_env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  if (prints_) {
    NodeInfo node = probe::collect(core::Root::from_option(""));
    rep.env.nvidia_driver = node.versions.nvidia_driver;
    std::vector<std::string> used;
    for (const auto& dev : devices_)
      if (dev.host == host_) used.push_back(dev.pci_bus_id);
    rep.topo = topology_from(node, used, nodes_, used.empty() ? std::nullopt : nvml_nvlink_version(used.front()));
  }

  auto sizes = sweep_sizes(o.sweep);
  ensure_buffers(o, sizes);
  std::unique_ptr<gpu::ComputeLoad> load;
  if (o.compute_load_pct > 0) {
    std::vector<int> devs;
    for (const auto& r : ranks_) devs.push_back(r.device);
    load = std::make_unique<gpu::ComputeLoad>(devs, o.compute_load_pct);
  }
  std::size_t ts = type_size(o.type);
  Progress progress(prints_ && o.progress, sizes.size() * static_cast<std::size_t>(o.cycles));
  bool hang_armed = o.debug_hang_rank >= 0;
  auto t0 = std::chrono::steady_clock::now();
  for (int cycle = 0; cycle < o.cycles; ++cycle) {
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      for (auto& r : ranks_) r.plan = d.plan(sizes[i] / ts, ts, nranks_, r.rank);
      SizeResult res;
      res.cycle = cycle;
      // nccl-tests' columns: size = the larger buffer, count = the count argument of the call.
      res.count = ranks_[0].plan.param_count;
      res.bytes = static_cast<std::uint64_t>(ranks_[0].plan.total) * ts;
      progress.update(cycle * sizes.size() + i, std::string(d.name) + " " + size_label(res.bytes));
      res.out_of_place = measure(o, res, false, hang_armed);
      if (o.in_place) res.in_place = measure(o, res, true, hang_armed);
      rep.results.push_back(res);
      if (prints_ && row) {
        progress.clear();
        row(rep, res);
      }
    }
  }
  progress.clear();
  if (load) rep.compute_load_busy_share = load->stop();
  rep.summary.sweep_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  summarise(rep);
  judge(rep);
  return rep;
}

}  // namespace

GpuSupport gpu_support() {
  GpuSupport s;
  s.built = true;
  s.mpi = gpu::mpi_built();
  return s;
}

int visible_gpus(std::string* why_none) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    if (why_none) {
      if (e == cudaErrorNoDevice || (e == cudaSuccess && n == 0))
        *why_none = "no CUDA GPU is visible (cudaGetDeviceCount: no CUDA-capable device; check nvidia-smi and "
                    "CUDA_VISIBLE_DEVICES)";
      else if (e == cudaErrorInsufficientDriver)
        *why_none = "the NVIDIA driver is missing or older than this CUDA runtime (cudaGetDeviceCount: " +
                    std::string(cudaGetErrorString(e)) + ")";
      else
        *why_none = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(e);
    }
    return 0;
  }
  return n;
}

std::unique_ptr<Session> Session::open(const Options& o) { return std::make_unique<GpuSession>(o); }

int run_cli(const Options& o, std::ostream& out, std::ostream& err) {
  try {
    NcclTestsJsonContext jctx;
    jctx.start_time = local_time_now();
    auto session = Session::open(o);
    bool header_done = false;
    auto row = [&](const Report& r, const SizeResult& s) {
      if (o.format != Format::Text) return;
      if (!header_done) {
        out << text_header(r);
        header_done = true;
      }
      out << text_row(r, s) << std::flush;
    };
    Report rep = session->run(o, row);
    if (session->prints()) {
      if (o.format == Format::Text) {
        if (!header_done) out << text_header(rep);
        out << text_summary(rep);
      } else if (o.format == Format::Json) {
        out << report_json(rep).dump(2) << "\n";
      } else {
        out << render_csv(rep);
      }
      if (!o.json_file.empty()) {
        std::ofstream f(o.json_file);
        f << report_json(rep).dump(2) << "\n";
        if (!f) err << "fabscope bench: cannot write " << o.json_file << "\n";
      }
      if (!o.csv_file.empty()) {
        std::ofstream f(o.csv_file);
        f << render_csv(rep);
        if (!f) err << "fabscope bench: cannot write " << o.csv_file << "\n";
      }
      if (!o.nccl_tests_json.empty()) {
        const auto& api = gpu::nccl();
        jctx.end_time = local_time_now();
        jctx.args = o.argv;
        for (char** e = environ; e && *e; ++e) jctx.env.emplace_back(*e);
        if (api.GetVersion(&jctx.nccl_version_code) != ncclSuccess) jctx.nccl_version_code = 0;
        if (api.GetLastError) {
          const char* last = api.GetLastError(nullptr);
          jctx.last_error = last ? last : "";
        }
        std::ofstream f(o.nccl_tests_json);
        f << nccl_tests_json(rep, jctx);
        if (!f) err << "fabscope bench: cannot write " << o.nccl_tests_json << "\n";
      }
    }
    out.flush();
    return rep.summary.wrong_total > 0 ? 2 : 0;
  } catch (const std::exception& e) {
    if (g_mpi_active) {  // the other ranks would wait in NCCL for this one: take the job down
      err << "fabscope bench: error: " << e.what() << "\n" << std::flush;
      gpu::mpi_abort(3);
    }
    throw;
  }
}

}  // namespace fabscope::bench
