#pragma once
// Entry points of the GPU side. Always declared; without CUDA and NCCL at build time the
// functions exist and say so (gpu_support().built == false, Session::open throws).
#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "bench/options.hpp"
#include "bench/results.hpp"

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
  // For nccl-tests' JSON (-J): ncclGetVersion's code (0 unknown) and ncclGetLastError(NULL).
  virtual int nccl_version_code() const { return 0; }
  virtual std::string nccl_last_error() const { return {}; }
};

// Under the mpi launcher, after an error on this rank: prints it to err and takes the job down
// with MPI_Abort(code), since the other ranks would wait in NCCL for this one. Returns (doing
// nothing) when no MPI job is active in this process.
void abort_mpi_job_if_active(const std::string& error, std::ostream& err, int code);

// The whole `fabscope bench` after flag parsing: open, run, print in the chosen format.
// Returns the exit code (0 correct, 2 wrong values; setup errors throw fabscope::Error).
// (cli_run.cpp: host code, built with or without the GPU side.)
int run_cli(const Options& o, std::ostream& out, std::ostream& err);

// run_cli's work on an open session: one sweep, rows streamed in text format, then the summary,
// JSON or CSV on out and the --json-file, --csv-file and -J files on the printing rank.
// start_time: when the run began (nccl-tests' JSON records it). Returns the exit code.
int run_and_print(Session& s, const Options& o, const std::string& start_time, std::ostream& out,
                  std::ostream& err);

}  // namespace fabscope::bench
