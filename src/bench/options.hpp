#pragma once
// `fabscope bench` settings: the flags (nccl-tests' letters where they exist: -b -e -f -i -n -w
// -c -d -o -r -G -g -a -C -N -R -I -K -J) parsed into one value, checked before any GPU is
// touched.
#include <cstdint>
#include <string>

#include "bench/adaptive.hpp"
#include "bench/collectives.hpp"
#include "bench/launch.hpp"
#include "bench/sizes.hpp"
#include "bench/types.hpp"
#include "core/args.hpp"

namespace fabscope::bench {

enum class Format { Text, Json, Csv };

// What the time column measures.
//  Wall: nccl-tests' definition, what an application issuing back-to-back calls sees: host clock
//        from before the first launch of a batch to the batch's completion, divided by the batch.
//  Gpu:  CUDA events around the batch with the GPU held back until the batch is queued, so the
//        launch cost of the calls is hidden (the collective's time on the GPU alone).
enum class Timer { Wall, Gpu };
// -a: how the ranks' times combine into the reported one (nccl-tests' 0..3).
enum class Average { Rank0, Mean, Min, Max };
// -R: NCCL buffer registration of the send and receive buffers.
enum class Registration { None, Local, Symmetric };

std::string_view timer_name(Timer t);           // "wall", "gpu"
std::string_view average_name(Average a);       // "rank0", "mean", "min", "max"
std::string_view registration_name(Registration r);  // "none", "local", "symmetric"

struct Options {
  Collective collective = Collective::AllReduce;
  DataType type = DataType::Float;
  RedOp op = RedOp::Sum;
  int root = 0;
  SweepSpec sweep;
  StopRule stop;
  bool warmup_explicit = false;
  bool check = true;
  bool graphs = false;       // -G: capture each batch in a CUDA graph
  int gpus = 0;              // local launcher: GPUs to drive; 0 = every visible GPU
  Launcher launcher = Launcher::Auto;
  int nccl_port = 0;         // torchrun: NCCL bootstrap port; 0 = MASTER_PORT + 1
  double timeout_s = 300;    // watchdog: longest wait for one step
  Format format = Format::Text;
  std::string json_file;     // also write JSON here
  std::string csv_file;      // also write CSV here
  bool progress = true;
  int debug_hang_rank = -1;  // test hook: this rank skips its first timed collective
  Timer timer = Timer::Wall;
  Average average = Average::Mean;      // -a
  bool report_cputime = false;          // -C: the time column is the host time to queue a call
  int cycles = 1;                       // -N: run the sweep this many times, every row printed
  Registration registration = Registration::None;  // -R
  bool per_iter = false;                // -I: CUDA events around every timed iteration
  int per_iter_skip = 0;                // -K: leading iterations left out of -I statistics
  std::string nccl_tests_json;          // -J: also write nccl-tests' JSON layout here
  std::vector<std::string> argv;        // the command line (nccl-tests' JSON records it)
  bool in_place = true;      // false: out-of-place only (fabscope tune measures one placement)
  double compute_load_pct = 0;  // > 0: a compute kernel keeps this % of the SMs busy during the
                                // run (gpu/compute_load.hpp; fabscope tune --compute-load)
};

// The parser with every flag, examples and the exit-code footer (shared by the CLI and tests).
core::ArgParser make_parser();
// Reads and checks the parsed flags. Throws fabscope::UsageError naming the flag and value.
Options options_from(const core::ArgParser& args);
// Parses argv-style arguments (no program name) in one step; for tests.
Options parse_options(const std::vector<std::string>& args);

// A hash of everything that must be equal on every rank (collective, type, op, root, sizes,
// iteration rule, graphs, check). Ranks compare it before the first collective: ranks started
// with different flags would otherwise wait for each other forever.
std::uint64_t settings_fingerprint(const Options& o);

}  // namespace fabscope::bench
