#include "bench/options.hpp"

#include <sstream>

#include "core/error.hpp"

namespace fabscope::bench {

namespace {
std::vector<std::string> collective_names() {
  std::vector<std::string> names;
  for (const auto& d : all_collectives()) names.emplace_back(d.name);
  return names;
}
}  // namespace

core::ArgParser make_parser() {
  core::ArgParser p(
      "bench",
      "Measure NCCL collectives on this node's GPUs (or across nodes with mpirun or torchrun): "
      "time, algorithm and bus bandwidth per size, in-place and out-of-place, every size checked "
      "against a reference. Text output keeps nccl-tests' columns; the end compares the best bus "
      "bandwidth with the path's theoretical rate (NVLink links x per-link rate, or the NIC rate). "
      "The time is nccl-tests' (--timer wall): first launch to completion of a batch of "
      "back-to-back calls, divided by the batch.");
  p.positional("COLLECTIVE",
               "all_reduce (default), all_gather, reduce_scatter, broadcast, reduce, alltoall, "
               "sendrecv, gather, scatter, alltoallv, hypercube")
      .option("-b,--minbytes", "SIZE", "smallest size (K/M/G suffixes, powers of 1024)", "8")
      .option("-e,--maxbytes", "SIZE", "largest size", "128M")
      .option("-f,--stepfactor", "X", "multiply the size by X between steps", "2")
      .option("-i,--stepbytes", "SIZE", "add SIZE between steps instead of multiplying")
      .option("--sizes", "LIST", "explicit sizes instead of -b/-e, comma-separated (8,1M,1G)")
      .option("-d,--datatype", "TYPE",
              "float, half, bfloat16, double, int8, uint8, int32, uint32, int64, uint64", "float")
      .option("-o,--op", "OP", "sum, prod, min, max, avg (reducing collectives)", "sum")
      .option("-r,--root", "RANK", "root rank of broadcast, reduce, gather and scatter", "0")
      .option("-n,--iters", "N", "fixed mode: time N iterations per size (nccl-tests' default 20)")
      .option("-w,--warmup_iters", "N", "warm-up iterations per size (default: adaptive, 1 to 5; fixed 5)")
      .option("--precision", "PCT", "adaptive: stop when the 95% confidence interval is within PCT% of the mean", "1")
      .option("--max-time", "SEC", "adaptive: stop after SEC seconds of timed work per size and placement (at least 2 batches)", "0.005")
      .option("--timer", "wall|gpu",
              "wall: host clock from the first launch to batch completion, per call, launch cost "
              "included (nccl-tests); gpu: CUDA events, launch cost hidden", "wall")
      .option("-a,--average", "0-3", "time reported over ranks: 0 rank 0, 1 mean, 2 min, 3 max", "1")
      .option("-C,--report_cputime", "0|1", "time column = host time to queue one call (cputime)", "0")
      .option("-N,--run_cycles", "N", "run the whole sweep N times, every row printed", "1")
      .option("-R,--local_register", "0|1|2",
              "register the buffers with NCCL: 0 no, 1 local (ncclCommRegister), 2 symmetric "
              "(ncclCommWindowRegister, NCCL 2.27+)", "0")
      .option("-I,--per_iter_timing", "0|1", "CUDA events around every timed iteration: min, max, "
              "p50/p95/p99, cv columns (max over ranks per iteration)", "0")
      .option("-K,--per_iter_skip", "N", "-I: leave the first N iterations out of the statistics", "0")
      .option("-J,--output_file", "FILE", "also write nccl-tests' JSON layout (version 3) to FILE")
      .option("-c,--check", "0|1", "check every size against the reference (#wrong)", "1")
      .option("-G,--cudagraph", "0|1", "capture each timed batch in a CUDA graph", "0")
      .option("-g,--gpus", "N", "local launcher: drive N GPUs from this process (default: all visible)")
      .option("--launcher", "NAME", "auto (default), local, mpi, torchrun", "auto")
      .option("--nccl-port", "PORT", "torchrun: port of NCCL's bootstrap on MASTER_ADDR (default MASTER_PORT+1)")
      .option("--timeout", "SEC", "watchdog: abort and name the stuck ranks when one step takes longer", "300")
      .flag("--json", "print JSON (schema fabscope.bench, docs/bench.md) instead of the table")
      .flag("--csv", "print CSV, one line per size and placement, instead of the table")
      .option("--json-file", "FILE", "also write the JSON report to FILE")
      .option("--csv-file", "FILE", "also write the CSV to FILE")
      .flag("--no-progress", "no progress bar (it is drawn on stderr only when stderr is a terminal)")
      .option("--debug-hang-rank", "RANK", "test hook: RANK skips its first timed collective, so the watchdog fires")
      .hidden("debug-hang-rank")
      .choices("COLLECTIVE", collective_names())
      .choices("datatype", type_names())
      .choices("op", {"sum", "prod", "min", "max", "avg"})
      .choices("check", {"0", "1"})
      .choices("cudagraph", {"0", "1"})
      .choices("launcher", {"auto", "local", "mpi", "torchrun"})
      .choices("timer", {"wall", "gpu"})
      .choices("average", {"0", "1", "2", "3"})
      .choices("report_cputime", {"0", "1"})
      .choices("local_register", {"0", "1", "2"})
      .choices("per_iter_timing", {"0", "1"})
      .example("fabscope bench", "all-reduce, float sum, 8 B to 128 MiB on every local GPU")
      .example("fabscope bench all_gather -b 1M -e 4G -d bfloat16", "all-gather sweep in bfloat16")
      .example("fabscope bench -n 20 -w 5 -b 8 -e 4G", "fixed iterations, as nccl-tests runs them")
      .example("fabscope bench -b 8 -e 1M -I 1 -R 1 -J out.json",
               "per-iteration percentiles, registered buffers, nccl-tests' JSON file")
      .example("fabscope bench --timer gpu --sizes 8", "the GPU time of one call, launch cost hidden")
      .example("mpirun -np 16 fabscope bench -b 1G -e 1G", "one rank per GPU across nodes (MPI)")
      .example("torchrun --nproc_per_node=8 --nnodes=2 --no-python fabscope bench sendrecv",
               "torchrun's environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT)")
      .example("fabscope bench --sizes 8,1M,1G --json | jq '.results[].out_of_place.busbw_gbytes_per_s'",
               "bus bandwidth as JSON")
      .footer(
          "Exit codes: 0 every value checked correct, 2 wrong values (#wrong > 0) or a collective "
          "stuck past --timeout (the communicators are aborted), 3 usage or setup error (no GPU, "
          "fewer GPUs than asked, NCCL missing, ranks started with different settings).");
  return p;
}

namespace {
std::uint64_t size_flag(const core::ArgParser& a, const std::string& name) {
  auto v = parse_size(a.get(name));
  if (!v) throw UsageError("bench: --" + name + " '" + a.get(name) + "' is not a size (e.g. 8, 64K, 1M, 4G)");
  return *v;
}

bool bool_flag(const core::ArgParser& a, const std::string& name);
}  // namespace

std::string_view timer_name(Timer t) { return t == Timer::Gpu ? "gpu" : "wall"; }

std::string_view average_name(Average a) {
  switch (a) {
    case Average::Rank0: return "rank0";
    case Average::Mean: return "mean";
    case Average::Min: return "min";
    case Average::Max: return "max";
  }
  return "mean";
}

std::string_view registration_name(Registration r) {
  switch (r) {
    case Registration::None: return "none";
    case Registration::Local: return "local";
    case Registration::Symmetric: return "symmetric";
  }
  return "none";
}

namespace {
bool bool_flag(const core::ArgParser& a, const std::string& name) {
  auto v = a.get(name);
  if (v == "0" || v == "false" || v == "no") return false;
  if (v == "1" || v == "true" || v == "yes") return true;
  // nccl-tests' -G takes a launch count; any positive count turns graphs on.
  if (name == "cudagraph" && !v.empty() && v.find_first_not_of("0123456789") == std::string::npos) return true;
  throw UsageError("bench: --" + name + " '" + v + "' must be 0 or 1");
}
}  // namespace

Options options_from(const core::ArgParser& a) {
  Options o;
  const auto& pos = a.positionals();
  if (pos.size() > 1) throw UsageError("bench: one collective per run (got '" + pos[1] + "' too)");
  if (!pos.empty()) {
    auto c = parse_collective(pos[0]);
    if (!c) {
      std::string names;
      for (const auto& d : all_collectives()) names += (names.empty() ? "" : ", ") + std::string(d.name);
      throw UsageError("bench: unknown collective '" + pos[0] + "' (one of " + names + ")");
    }
    o.collective = *c;
  }
  auto t = parse_type(a.get("datatype"));
  if (!t) throw UsageError("bench: --datatype '" + a.get("datatype") + "' is not a type (float, half, bfloat16, int8, int32, ...)");
  o.type = *t;
  auto op = parse_op(a.get("op"));
  if (!op) throw UsageError("bench: --op '" + a.get("op") + "' is not one of sum, prod, min, max, avg");
  o.op = *op;
  const auto& desc = describe(o.collective);
  if (a.has("op") && !desc.has_op)
    throw UsageError("bench: " + std::string(desc.name) + " takes no reduction operator (--op)");
  o.root = static_cast<int>(a.get_int("root", 0, 1 << 24));
  if (a.has("root") && !desc.has_root)
    throw UsageError("bench: " + std::string(desc.name) + " has no root (--root is for broadcast, reduce, gather and scatter)");

  if (a.has("sizes")) {
    if (a.has("minbytes") || a.has("maxbytes") || a.has("stepfactor") || a.has("stepbytes"))
      throw UsageError("bench: --sizes replaces -b/-e/-f/-i; give one or the other");
    o.sweep.list = parse_size_list(a.get("sizes"));
  } else {
    o.sweep.min_bytes = size_flag(a, "minbytes");
    o.sweep.max_bytes = size_flag(a, "maxbytes");
    if (a.has("stepbytes")) {
      if (a.has("stepfactor")) throw UsageError("bench: give -f (factor) or -i (bytes), not both");
      o.sweep.step_bytes = size_flag(a, "stepbytes");
      if (o.sweep.step_bytes == 0) throw UsageError("bench: --stepbytes must be larger than 0");
    } else {
      o.sweep.step_factor = a.get_double("stepfactor", 1.0001, 1e6);
    }
  }
  (void)sweep_sizes(o.sweep);  // throws on an empty or runaway sweep

  if (a.has("iters")) {
    o.stop.adaptive = false;
    o.stop.fixed_iters = static_cast<int>(a.get_int("iters", 1, 1000000));
  }
  if (a.has("warmup_iters")) {
    o.stop.fixed_warmup = static_cast<int>(a.get_int("warmup_iters", 0, 1000000));
    o.warmup_explicit = true;
  }
  o.stop.rel_precision = a.get_double("precision", 0.01, 100) / 100.0;
  o.stop.max_time_s = a.get_double("max-time", 0.001, 3600);
  o.check = bool_flag(a, "check");
  o.graphs = bool_flag(a, "cudagraph");
  if (a.has("gpus")) o.gpus = static_cast<int>(a.get_int("gpus", 1, 4096));
  auto l = parse_launcher(a.get("launcher"));
  if (!l) throw UsageError("bench: --launcher '" + a.get("launcher") + "' is not one of auto, local, mpi, torchrun");
  o.launcher = *l;
  if (a.has("nccl-port")) o.nccl_port = static_cast<int>(a.get_int("nccl-port", 1, 65535));
  o.timeout_s = a.get_double("timeout", 0.1, 86400);
  if (a.has("json") && a.has("csv")) throw UsageError("bench: --json and --csv both print to stdout; use --csv-file or --json-file for the other");
  if (a.has("json")) o.format = Format::Json;
  if (a.has("csv")) o.format = Format::Csv;
  o.json_file = a.get("json-file");
  o.csv_file = a.get("csv-file");
  o.progress = !a.has("no-progress");
  if (a.has("debug-hang-rank")) o.debug_hang_rank = static_cast<int>(a.get_int("debug-hang-rank", 0, 1 << 24));

  const std::string timer = a.get("timer");
  if (timer == "wall" || timer == "cpu") o.timer = Timer::Wall;
  else if (timer == "gpu") o.timer = Timer::Gpu;
  else throw UsageError("bench: --timer '" + timer + "' is not one of wall, gpu");
  o.average = static_cast<Average>(a.get_int("average", 0, 3));
  o.report_cputime = bool_flag(a, "report_cputime");
  if (o.report_cputime && o.timer == Timer::Gpu)
    throw UsageError("bench: -C (host time to queue a call) is a host-clock figure; it cannot go with --timer gpu");
  o.cycles = static_cast<int>(a.get_int("run_cycles", 1, 1000000));
  o.registration = static_cast<Registration>(a.get_int("local_register", 0, 2));
  o.per_iter = bool_flag(a, "per_iter_timing");
  o.per_iter_skip = static_cast<int>(a.get_int("per_iter_skip", 0, 1000000));
  if (o.per_iter && o.graphs)
    throw UsageError("bench: -I (per-iteration events) cannot go with -G (a CUDA graph has no per-iteration events)");
  if (a.has("per_iter_skip") && !o.per_iter) throw UsageError("bench: -K needs -I 1 (it trims per-iteration statistics)");
  if (o.per_iter && !o.stop.adaptive && o.per_iter_skip >= o.stop.fixed_iters)
    throw UsageError("bench: -K " + std::to_string(o.per_iter_skip) + " leaves none of the " +
                     std::to_string(o.stop.fixed_iters) + " iterations (-n) for the statistics");
  o.nccl_tests_json = a.get("output_file");
  if (a.has("output_file") && o.nccl_tests_json.empty()) throw UsageError("bench: -J needs a file name");
  return o;
}

Options parse_options(const std::vector<std::string>& args) {
  auto p = make_parser();
  std::ostringstream help;
  if (!p.parse(args, help)) throw UsageError("bench: --help is not an option set");
  return options_from(p);
}

std::uint64_t settings_fingerprint(const Options& o) {
  // FNV-1a over a canonical text of the settings that every rank must share.
  std::ostringstream s;
  s << static_cast<int>(o.collective) << '/' << static_cast<int>(o.type) << '/' << static_cast<int>(o.op)
    << '/' << o.root << '/' << o.check << '/' << o.graphs << '/' << o.stop.adaptive << '/'
    << o.stop.fixed_iters << '/' << o.stop.fixed_warmup << '/' << o.warmup_explicit << '/'
    << o.stop.rel_precision << '/' << o.stop.max_time_s << '/' << static_cast<int>(o.timer) << '/'
    << static_cast<int>(o.average) << '/' << o.cycles << '/' << static_cast<int>(o.registration) << '/'
    << o.per_iter << '/' << o.per_iter_skip << '/';
  for (auto b : sweep_sizes(o.sweep)) s << b << ',';
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s.str()) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace fabscope::bench
