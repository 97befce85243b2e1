#pragma once
// Entry points of the GPU side. Always declared; without CUDA and NCCL at build time the
// functions exist and say so (gpu_support().built == false, Session::open throws).
#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "bench/options.hpp"
#include "bench/report.hpp"

namespace fabscope::bench {

struct GpuSupport {
  bool built = false;    // compiled with the CUDA toolkit and NCCL headers
  bool mpi = false;      // compiled with MPI (the mpi launcher)
  std::string missing;   // what a user must install or rebuild with, when !built
};
GpuSupport gpu_support();

// GPUs the CUDA runtime sees (0 with a reason when none or no driver). Never throws.
int visible_gpus(std::string* why_none = nullptr);

// Communicators over the launcher's ranks, reused for several runs (the GPU tests run dozens of
// cases on one session; the CLI runs one).
class Session {
 public:
  // Detects the launcher, picks the GPUs, creates the NCCL communicators (under the watchdog).
  // Throws fabscope::Error (no GPU, fewer GPUs than asked, NCCL missing, MPI/torchrun
  // inconsistencies) or UsageError.
  static std::unique_ptr<Session> open(const Options& o);
  virtual ~Session() = default;
  // Runs one sweep. row(r, s) is called on the printing rank after each size (streamed output).
  // Throws fabscope::Error when ranks disagree on the settings or a CUDA/NCCL call fails.
  virtual Report run(const Options& o, const std::function<void(const Report&, const SizeResult&)>& row) = 0;
  virtual int rank() const = 0;    // global rank of this process's first GPU
  virtual int nranks() const = 0;
  virtual bool prints() const = 0;  // global rank 0 lives here
  virtual int nodes() const { return 1; }  // distinct hosts of the job (every rank agrees)
};

// The whole `fabscope bench` after flag parsing: open, run, print in the chosen format.
// Returns the exit code (0 correct, 2 wrong values; setup errors throw fabscope::Error).
int run_cli(const Options& o, std::ostream& out, std::ostream& err);

}  // namespace fabscope::bench
