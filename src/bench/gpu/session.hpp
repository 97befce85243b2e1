#pragma once
// The GPU session: the ranks this process drives (communicator, stream, events, buffers), the
// watchdog over every wait, the cross-rank reductions, and the harness that times one
// placement of one size (timing.cpp). Communicator creation per launcher is bootstrap.cpp; the
// sweep order, the report's assembly and the output are host code (sweep.cpp, environment.cpp,
// cli_run.cpp).
#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bench/collectives.hpp"
#include "bench/gpu/nccl_api.hpp"
#include "bench/launch.hpp"
#include "bench/run.hpp"
#include "bench/watchdog.hpp"

namespace fabscope::bench::gpu {

constexpr std::size_t kReduceSlots = 8;  // doubles per cross-rank reduction

void cuda_check(cudaError_t e, const std::string& what);

// Set while this process is a rank of an MPI job (bootstrap.cpp): an error must then abort the
// job, not only this process.
std::atomic<bool>& mpi_active();

struct Rank {
  int rank = 0;
  int device = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  char* send = nullptr;
  char* recv = nullptr;
  std::size_t send_cap = 0, recv_cap = 0;  // bytes
  double* d_reduce = nullptr;              // scratch: kReduceSlots doubles or the device records
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
  int nccl_version_code() const override { return nccl_version_; }
  std::string nccl_last_error() const override;

 private:
  // bootstrap.cpp: the ranks and their communicators for the launcher, ndev GPUs visible.
  void bootstrap(int ndev);
  void create_local_comms(int ndev, const std::string& visible);
  void create_job_comm(int ndev, const std::string& visible);
  ncclResult_t init_rank(ncclComm_t* comm, int n, ncclUniqueId id, int rank);

  // session.cpp
  void setup_ranks();
  void on_watchdog(const std::string& step, double waited);
  void set_pending(const std::string& s);
  std::string rank_label(const Rank& r) const;
  void nccl_check(ncclResult_t rc, const Rank* r, const char* what);
  void set_device(const Rank& r);
  // Waits for every local stream. spin: poll without sleeping (a timed batch ends when the host
  // sees it end, as nccl-tests' spin on cudaStreamQuery; a sleep would be timed).
  void wait_all(const std::string& step, bool spin = false);
  void park_if_aborted();
  void all_reduce(std::size_t n, ncclDataType_t type, ncclRedOp_t op, const std::string& step);
  std::vector<double> reduce(const std::vector<std::vector<double>>& per_rank, ncclRedOp_t op, const std::string& step);
  std::vector<double> reduce_iter_max(std::vector<std::vector<double>> per_rank, const std::string& step);
  // One number per local rank -> the job's number under -a (nccl-tests' average modes).
  double combine(const std::vector<double>& per_rank, const std::string& step);
  void compare_settings();
  void gather_devices();
  Report start_report();
  void ensure_buffers(const std::vector<std::uint64_t>& sizes);
  void free_buffers(Rank& r);
  void register_buffers();

  // timing.cpp: the harness over opts_ (the settings of the current run).
  void issue(bool in_place, int iterations, int skip_rank,
             std::chrono::steady_clock::time_point* first_done = nullptr, bool events = false);
  void fill_inputs(bool in_place);  // nccl-tests' initData: outputs poisoned, inputs set
  std::int64_t check(bool in_place);
  // One timed batch: prepare_batch, launch_batch, collect_batch (timing.cpp).
  struct BatchClock {
    std::chrono::steady_clock::time_point start, first, queued, done;
  };
  BatchTime timed_batch(bool in_place, int iterations, bool graph, int skip_rank, const std::string& step);
  void prepare_batch(int iterations, bool graph);
  BatchClock launch_batch(bool in_place, int iterations, bool graph, int skip_rank, const std::string& step);
  BatchTime collect_batch(int iterations, bool graph, const BatchClock& c, const std::string& step);
  void capture(bool in_place, int iterations);
  void drop_graphs();
  Timing measure(const SizeResult& res, bool in_place, bool& hang_armed);

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
  // The GPU timer's spin ahead of each batch: twice the time the last batch took to queue its
  // first call, plus slack, within these bounds (a longer spin only delays the batch).
  static constexpr double kDelaySlackUs = 10, kDelayMinUs = 20, kDelayMaxUs = 5000;
  double delay_us_ = 100;
  int graph_launches_ = 1;   // a batch = this many launches of the captured graph
  std::uint64_t iter_ = 0;   // iterations issued for the current size: picks the buffer offset
  int nccl_version_ = 0;
  Registration registered_ = Registration::None;
};

}  // namespace fabscope::bench::gpu
