#pragma once
// A compute load beside the measured collectives (`fabscope tune --compute-load PCT`): training
// overlaps communication with compute, and NCCL's blocks then share the SMs with it. While a
// ComputeLoad lives, a host thread keeps, on every given GPU, an FMA kernel running on a stream of
// its own: ceil(PCT% of the SMs) blocks of 1024 threads, each a chain of dependent FMAs for 1 ms,
// relaunched back to back (two in flight, so there is no gap). It reads and writes no memory
// besides one word, so it takes SM issue slots and warps, not HBM bandwidth. NCCL's blocks
// still fit beside a load block (an SM holds 64 warps on sm_80/sm_90), so they run slower rather
// than wait.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace fabscope::bench::gpu {

class ComputeLoad {
 public:
  // Starts the load on each device. pct in (0, 100]. Throws fabscope::Error on a CUDA error.
  ComputeLoad(const std::vector<int>& devices, double pct);
  ~ComputeLoad();
  ComputeLoad(const ComputeLoad&) = delete;
  ComputeLoad& operator=(const ComputeLoad&) = delete;
  // Stops feeding kernels and waits for the last ones; returns the share of the wall time the
  // first device had a load kernel running (measured with events), or throws the first CUDA
  // error the feeding thread met.
  double stop();
  int blocks() const { return blocks_; }

 private:
  struct Dev;
  void start(const std::vector<int>& devices, double pct);
  void feed();
  void release();
  std::vector<Dev*> devs_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::string error_;
  int blocks_ = 0;
  bool stopped_ = false;
  double busy_share_ = 0;
};

}  // namespace fabscope::bench::gpu
