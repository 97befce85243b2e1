#pragma once
// `fabscope tune` after its flags: the two phases in order, in this process or as a --launch
// driver, and every output. Phase 1, the per-call table: one communicator under NCCL's default
// environment (tune/tune.hpp), verified per size and written. Phase 2, the environment-only
// settings in fresh processes that load that table (tune/env_search.hpp), then both together
// against NCCL's defaults. As a driver (--launch), phase 1 is one job of the launch command whose
// tune.json is read back, and phase 2 starts one job per measurement. The CLI (src/cli/tune.cpp)
// turns flags into a CommandSpec and calls run_command.
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "bench/options.hpp"
#include "ncclenv/render.hpp"
#include "tune/env_search.hpp"
#include "tune/env_space.hpp"
#include "tune/env_worker.hpp"
#include "tune/tune.hpp"

namespace fabscope::tune {

struct OutputSpec {
  std::filesystem::path dir;      // -o
  std::string table_path;         // dir/nccl_tuner.csv, absolute (tune.env names it)
  ncclenv::Format env_format = ncclenv::Format::EnvFile;
  bool json = false;              // the report on stdout as JSON
};

struct CommandSpec {
  TuneOptions opts;
  OutputSpec out;
  bool progress = true;           // a line per step on the error stream
  bool simulate = false;          // the simulated model instead of GPUs
  std::uint64_t seed = 0;
  bench::Options bench;           // GPU runs: launcher, GPUs, timeout, compute load
  std::string plugin_path;        // libnccl-tuner-fabscope.so
  std::string self_exe;           // this binary (workers and the table job start it)
  bool env_search = true;
  EnvSpaceSpec env_spec;
  EnvSearchRule env_rule;
  WorkerSpec worker;              // the base of every worker process (points, plugin, ...)
  std::vector<std::string> launch;     // --launch split into words; empty: no driver
  std::string launch_text;             // as given
  std::vector<std::string> table_job;  // driver: the table job's arguments after "tune"
};

// The message of a one-rank job (nothing to tune, nothing written; exit 0).
extern const char* const kOneRankMessage;

// Runs the command; out gets the report (or what the table job printed), err the progress.
// Returns the exit code; throws fabscope::Error.
int run_command(const CommandSpec& spec, std::ostream& out, std::ostream& err);

}  // namespace fabscope::tune
