// The session's life (ranks, streams, scratch, buffers), its waits under the watchdog, and the
// cross-rank exchanges of host values (settings, device list, times, #wrong), which travel over
// NCCL itself so the three launchers share them.
#include "bench/gpu/session.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <thread>

#include "bench/buffers.hpp"
#include "bench/environment.hpp"
#include "bench/gpu/compute_load.hpp"
#include "bench/gpu/mpi_boot.hpp"
#include "bench/nvml_link.hpp"
#include "bench/efficiency.hpp"
#include "bench/sweep.hpp"
#include "core/error.hpp"
#include "probe/probe.hpp"
#include "probe/versions.hpp"

namespace fabscope::bench::gpu {

void cuda_check(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) throw Error(what + ": " + cudaGetErrorString(e));
}

namespace {
std::string hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}
}  // namespace

GpuSession::GpuSession(const Options& o) : nccl_(nccl()), opts_(o) {
  host_ = hostname();
  if (nccl_.GetVersion(&nccl_version_) != ncclSuccess) nccl_version_ = 0;
  watchdog_ = std::make_unique<Watchdog>([this](const std::string& step, double waited) { on_watchdog(step, waited); });
  std::string why;
  int ndev = visible_gpus(&why);
  if (ndev == 0) throw Error("no GPU: " + why);
  launch_ = detect_launch(o.launcher, process_env(), o.nccl_port);
  bootstrap(ndev);
  setup_ranks();
  gather_devices();
}

void GpuSession::setup_ranks() {
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
    mpi_finalize();
    mpi_active() = false;
  }
}

std::string GpuSession::nccl_last_error() const {
  if (!nccl_.GetLastError) return {};
  const char* last = nccl_.GetLastError(nullptr);
  return last ? last : "";
}

void GpuSession::set_pending(const std::string& s) {
  std::lock_guard<std::mutex> lock(pending_mu_);
  pending_ = s;
}

std::string GpuSession::rank_label(const Rank& r) const {
  return std::to_string(r.rank) + " (" + host_ + " GPU " + std::to_string(r.device) + ")";
}

void GpuSession::nccl_check(ncclResult_t rc, const Rank* r, const char* what) {
  if (rc != ncclSuccess && rc != ncclInProgress)
    throw Error(nccl_error(nccl_, rc, r ? r->comm : nullptr, what) + (r ? " on rank " + std::to_string(r->rank) : ""));
}

void GpuSession::set_device(const Rank& r) {
  cuda_check(cudaSetDevice(r.device), "cudaSetDevice(" + std::to_string(r.device) + ")");
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

void GpuSession::gather_devices() {
  nccl_check(nccl_.GroupStart(), nullptr, "ncclGroupStart");
  for (auto& r : ranks_) {
    set_device(r);
    char pci[32] = {};
    cudaDeviceGetPCIBusId(pci, sizeof pci, r.device);
    cudaDeviceProp prop;
    std::string name;
    if (cudaGetDeviceProperties(&prop, r.device) == cudaSuccess) name = prop.name;
    DeviceRecord rec = make_device_record(host_, pci, name, static_cast<int>(getpid()), r.device, r.rank);
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
  for (const auto& rec : recs) devices_.push_back(device_info(rec));
  nodes_ = count_nodes(devices_);
}

// Ranks started with different flags would wait for each other forever: compare first.
void GpuSession::compare_settings() {
  std::uint64_t fp = settings_fingerprint(opts_);
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

void GpuSession::ensure_buffers(const std::vector<std::uint64_t>& sizes) {
  const auto& d = describe(opts_.collective);
  const std::size_t ts = type_size(opts_.type);
  bool any = false;
  for (auto& r : ranks_) {
    BufferBytes need = buffers_for(d, sizes, ts, nranks_, r.rank);
    if (need.send > r.send_cap || need.recv > r.recv_cap || registered_ != opts_.registration) any = true;
  }
  if (!any) return;
  // Every rank reallocates (and re-registers: a symmetric window is a collective call).
  for (auto& r : ranks_) free_buffers(r);
  registered_ = Registration::None;
  for (auto& r : ranks_) {
    BufferBytes need = buffers_for(d, sizes, ts, nranks_, r.rank);
    set_device(r);
    std::size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    if (need.send + need.recv > free_b)
      throw Error("the largest size needs " + size_label(need.send + need.recv) + " of buffers on GPU " +
                  std::to_string(r.device) + " but only " + size_label(free_b) + " is free; lower -e/--maxbytes");
    // ncclMemAlloc where NCCL has it (2.19+), as nccl-tests allocates: memory NCCL can register
    // for every transport, symmetric windows included.
    r.nccl_memory = nccl_.MemAlloc && nccl_.MemFree;
    if (r.nccl_memory) {
      nccl_check(nccl_.MemAlloc(reinterpret_cast<void**>(&r.send), need.send), &r, "ncclMemAlloc (send buffer)");
      nccl_check(nccl_.MemAlloc(reinterpret_cast<void**>(&r.recv), need.recv), &r, "ncclMemAlloc (receive buffer)");
    } else {
      cuda_check(cudaMalloc(reinterpret_cast<void**>(&r.send), need.send), "cudaMalloc (" + size_label(need.send) + ")");
      cuda_check(cudaMalloc(reinterpret_cast<void**>(&r.recv), need.recv), "cudaMalloc (" + size_label(need.recv) + ")");
    }
    r.send_cap = need.send;
    r.recv_cap = need.recv;
    // Every byte written once before anything is timed, as nccl-tests' warm-up over every size
    // up to the largest does: otherwise the first size whose offset rotation reaches memory not
    // used yet pays for it (fixed -n 20 at 128 MiB of a 1 GiB sweep: 10% slower on H200).
    cuda_check(cudaMemset(r.send, 0, need.send), "cudaMemset (send buffer)");
    cuda_check(cudaMemset(r.recv, 0, need.recv), "cudaMemset (receive buffer)");
    cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  }
  register_buffers();
}

void GpuSession::register_buffers() {
  const Registration want = opts_.registration;
  if (want == Registration::None) return;
  std::string version = probe::nccl_version_string(nccl_version_);
  if (want == Registration::Symmetric) {
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
    if (want == Registration::Symmetric) {
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
  registered_ = want;
}

// The report's environment, devices and (on the printing rank) this node's topology.
Report GpuSession::start_report() {
  Report rep;
  rep.options = opts_;
  rep.devices = devices_;
  RunFacts f;
  f.hostname = host_;
  f.launcher = launch_.kind;
  f.launch_evidence = launch_.evidence;
  f.nranks = nranks_;
  int v = 0;
  if (nccl_.GetVersion(&v) == ncclSuccess) f.nccl_version_code = v;
  if (cudaDriverGetVersion(&v) == cudaSuccess) f.cuda_driver_code = v;
  if (cudaRuntimeGetVersion(&v) == cudaSuccess) f.cuda_runtime_code = v;
  f.environ = process_environment();
  f.date_utc = utc_now();
  rep.env = make_environment(f);
  if (prints_) {
    NodeInfo node = probe::collect(core::Root::from_option(""));
    rep.env.nvidia_driver = node.versions.nvidia_driver;
    std::vector<std::string> used = pci_on_host(devices_, host_);
    rep.topo = topology_from(node, used, nodes_, used.empty() ? std::nullopt : nvml_nvlink_version(node, used.front()));
  }
  return rep;
}

Report GpuSession::run(const Options& o, const std::function<void(const Report&, const SizeResult&)>& row) {
  opts_ = o;
  check_job(o, nranks_);
  compare_settings();
  Report rep = start_report();
  auto sizes = sweep_sizes(o.sweep);
  ensure_buffers(sizes);
  std::unique_ptr<ComputeLoad> load;
  if (o.compute_load_pct > 0) {
    std::vector<int> devs;
    for (const auto& r : ranks_) devs.push_back(r.device);
    load = std::make_unique<ComputeLoad>(devs, o.compute_load_pct);
  }
  const auto& d = describe(o.collective);
  const std::size_t ts = type_size(o.type);
  bool hang_armed = o.debug_hang_rank >= 0;
  SweepSteps steps;
  steps.plan = [&](std::uint64_t bytes) {
    for (auto& r : ranks_) r.plan = d.plan(bytes / ts, ts, nranks_, r.rank);
    return ranks_.front().plan;
  };
  steps.measure = [&](const SizeResult& res, bool in_place) { return measure(res, in_place, hang_armed); };
  steps.row = row;
  steps.finish = [&](Report& r) {
    if (load) r.compute_load_busy_share = load->stop();
  };
  return run_sweep(o, sizes, std::move(rep), prints_, steps);
}

}  // namespace fabscope::bench::gpu
