#pragma once
// The fresh processes of the environment search. The tune process starts itself again
// (`fabscope tune --env-worker SPEC`) once per measurement, behind a launch command when one was
// given (`--launch "mpirun -np 16 -N 8"`: every rank of the new job is a worker) and directly
// otherwise (the local launcher: one process drives every local GPU). The worker sets the
// candidate's variables before anything starts NCCL, measures every point with NCCL's own
// choices (or a tuner table's rows), and its printing rank writes one line `fabscope-tune-worker: {json}` to stdout.
// Everything else a worker prints (NCCL's log) is ignored.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "tune/env_search.hpp"

namespace fabscope::tune {

struct WorkerSpec {
  std::vector<EnvPoint> points;
  double budget_s = 5e-3;
  EnvAssignment env;
  bool simulate = false;
  std::uint64_t seed = 0;      // simulate: this process's noise
  int gpus = 0;                // local launcher: GPUs (0: every visible one)
  std::string plugin;          // the tuner plugin the measurer loads
  std::string table;           // the tuner table it loads ("" none: NCCL decides every call)
  double compute_load_pct = 0; // tune/measure.hpp
  double timeout_s = 300;
};

json worker_spec_json(const WorkerSpec& s);
// Throws fabscope::UsageError naming the field (the spec comes from a command line).
WorkerSpec worker_spec_from(const std::string& text);

// The line a worker prints, and its reading by the parent. parse_worker_output finds the line in
// everything the process printed; throws fabscope::Error when it is missing or malformed.
std::string worker_line(const ProcessResult& r);
ProcessResult parse_worker_output(const std::string& out);

// The worker itself (`fabscope tune --env-worker SPEC`): sets spec.env in this process's
// environment before anything starts NCCL, measures every point with NCCL's own choices or the
// rows of spec.table (on the GPUs, through the plugin; or on the simulated model, whose settings
// come from this process's environment and which applies the table's rows itself), and the
// printing rank writes the result line to out. Returns the exit code; throws fabscope::Error.
int run_worker(const WorkerSpec& spec, std::ostream& out);

// setenv() of every variable (before NCCL reads them).
void set_process_env(const EnvAssignment& env);

class ProcessEnvMeasurer : public EnvMeasurer {
 public:
  // launch: the launch command's words (empty: run the binary directly); exe: this binary.
  ProcessEnvMeasurer(std::vector<std::string> launch, std::string exe, WorkerSpec base);
  ProcessResult run_process(const EnvAssignment& env, double budget_s) override;
  std::int64_t processes() const override { return processes_; }
  void load_table(const std::string& path) override { base_.table = path; }
  // The argv of the next process (for tests and the report).
  std::vector<std::string> argv_for(const EnvAssignment& env, double budget_s) const;

 private:
  std::vector<std::string> launch_;
  std::string exe_;
  WorkerSpec base_;
  std::int64_t processes_ = 0;
};

// "mpirun -np 16 -N 8" split into words (no shell: quotes group words, backslash escapes one
// character). Throws fabscope::UsageError on an unterminated quote or an empty command.
std::vector<std::string> split_launch(const std::string& text);

}  // namespace fabscope::tune
