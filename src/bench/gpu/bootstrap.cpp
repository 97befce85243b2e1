// Communicators for each launcher. local: one process creates a communicator per visible GPU in
// one group, as nccl-tests does. mpi: MPI carries only the NCCL unique id (rank 0 creates it)
// and the node-local rank that picks the GPU. torchrun: NCCL's own bootstrap through
// NCCL_COMM_ID, no other rendezvous.
#include <cstdlib>
#include <cstring>
#include <ostream>

#include "bench/gpu/mpi_boot.hpp"
#include "bench/gpu/session.hpp"
#include "core/error.hpp"

namespace fabscope::bench {

namespace gpu {

std::atomic<bool>& mpi_active() {
  static std::atomic<bool> active{false};
  return active;
}

ncclResult_t GpuSession::init_rank(ncclComm_t* comm, int n, ncclUniqueId id, int rank) {
  if (!nccl_.CommInitRankConfig) return nccl_.CommInitRank(comm, n, id, rank);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
  // nccl-tests 2.19.6 sets it on NCCL 2.28+; the same communicators measure the same.
  if (nccl_version_ >= NCCL_VERSION(2, 28, 0)) config.nvlinkCentricSched = 1;
#endif
  return nccl_.CommInitRankConfig(comm, n, id, rank, &config);
}

void GpuSession::bootstrap(int ndev) {
  const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
  std::string visible = std::to_string(ndev) + " GPU(s) visible on " + host_ +
                        (cvd ? std::string(" (CUDA_VISIBLE_DEVICES=") + cvd + ")" : "");
  if (launch_.kind == Launcher::Local) create_local_comms(ndev, visible);
  else create_job_comm(ndev, visible);
}

void GpuSession::create_local_comms(int ndev, const std::string& visible) {
  int n = opts_.gpus > 0 ? opts_.gpus : ndev;
  if (n > ndev) throw Error("--gpus " + std::to_string(n) + " asks for more GPUs than the " + visible);
  nranks_ = n;
  ranks_.resize(n);
  std::vector<int> devs(n);
  std::vector<ncclComm_t> comms(n);
  for (int i = 0; i < n; ++i) ranks_[i].rank = ranks_[i].device = devs[i] = i;
  set_pending("ranks 0.." + std::to_string(n - 1) + " on " + host_);
  watchdog_->arm("communicator creation over " + std::to_string(n) + " GPUs", opts_.timeout_s);
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
}

void GpuSession::create_job_comm(int ndev, const std::string& visible) {
  if (opts_.gpus > 1)
    throw UsageError("bench: --gpus " + std::to_string(opts_.gpus) + ": with the " + launcher_name(launch_.kind) +
                     " launcher every rank drives one GPU; start more ranks instead");
  ncclUniqueId id;
  std::memset(&id, 0, sizeof id);
  Rank r;
  if (launch_.kind == Launcher::Mpi) {
    auto w = mpi_init();
    mpi_ = true;
    mpi_active() = true;
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
    mpi_bcast_from_root(&id, sizeof id);
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
                 opts_.timeout_s);
  ncclResult_t rc = init_rank(&ranks_[0].comm, nranks_, id, ranks_[0].rank);
  watchdog_->disarm();
  park_if_aborted();
  nccl_check(rc, &ranks_[0], "ncclCommInitRank");
  prints_ = ranks_[0].rank == 0;
}

}  // namespace gpu

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

std::unique_ptr<Session> Session::open(const Options& o) { return std::make_unique<gpu::GpuSession>(o); }

void abort_mpi_job_if_active(const std::string& error, std::ostream& err, int code) {
  if (!gpu::mpi_active()) return;
  err << "fabscope bench: error: " << error << "\n" << std::flush;
  gpu::mpi_abort(code);
}

}  // namespace fabscope::bench
