#include <algorithm>
#include <filesystem>
#include <iostream>

#include "bench/options.hpp"
#include "bench/run.hpp"
#include "bench/sizes.hpp"
#include "cli/commands.hpp"
#include "core/args.hpp"
#include "core/error.hpp"
#include "ncclenv/render.hpp"
#include "tune/command.hpp"
#include "tune/env_space.hpp"
#include "tune/env_worker.hpp"
#include "tune/gpu_measurer.hpp"

namespace fabscope::cli {

namespace {

core::ArgParser tune_parser() {
  core::ArgParser a("tune",
                    "Search NCCL's algorithm, protocol and channel count per collective and size on "
                    "this machine\n(successive halving on the bench's adaptive timing, choices forced "
                    "per call through fabscope's\ntuner plugin), verify each against NCCL's default "
                    "(alternating; kept only when faster beyond\nthe noise), then write the tuner "
                    "table, the environment that loads it, a report, every\nmeasurement in "
                    "optimize_config.py's layout and DDP/FSDP bucket advice (docs/tune.md).");
  a.option("-c,--collective", "LIST", "all_reduce, all_gather, reduce_scatter, broadcast, reduce (comma-separated)", "all_reduce")
      .option("-b,--minbytes", "SIZE", "smallest size (K/M/G suffixes, powers of 1024)", "1K")
      .option("-e,--maxbytes", "SIZE", "largest size", "1G")
      .option("-f,--stepfactor", "X", "multiply the size by X between steps", "4")
      .option("--sizes", "LIST", "explicit sizes instead of -b/-e (8,1M,1G)")
      .option("--algorithms", "LIST", "tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree, pat (default: all NCCL implements for the collective)")
      .option("--protocols", "LIST", "ll, ll128, simple", "ll,ll128,simple")
      .option("--channels", "LIST", "channel counts; -1 = NCCL's count", "-1,2,4,8,16,24,32")
      .flag("--nvls", "also try NVLS/NVLS-Tree (off: they take memory and SMs on shared machines)")
      .flag("--collnet", "also try CollNet (SHARP)")
      .option("--eta", "X", "successive halving: keep 1/X of the candidates per rung", "3")
      .option("--rungs", "N", "successive halving: at most N rungs", "4")
      .option("--budget", "SEC", "timed work per candidate in the first rung (x eta per rung)", "0.002")
      .option("--pairs", "N", "verification: default/tuned measurement pairs per size", "6")
      .option("--verify-time", "SEC", "verification: timed work per measurement", "0.02")
      .option("-o,--out-dir", "DIR", "write nccl_tuner.csv, tune.env, tune-report.txt, tune.json, measurements.csv here", "fabscope-tune")
      .option("--env-format", "FORMAT", "format of tune.env: shell, envfile, docker, k8s, slurm, torchrun, json", "envfile")
      .option("--plugin", "PATH", "libnccl-tuner-fabscope.so (default: beside the binary, ../lib/fabscope/; env FABSCOPE_TUNER_PLUGIN)")
      .option("-g,--gpus", "N", "local launcher: drive N GPUs from this process (default: all visible)")
      .option("--launcher", "NAME", "auto (default), local, mpi, torchrun (as fabscope bench)", "auto")
      .option("--nccl-port", "PORT", "torchrun: port of NCCL's bootstrap on MASTER_ADDR (default MASTER_PORT+1)")
      .option("--timeout", "SEC", "watchdog: abort and name the stuck ranks when one step takes longer", "300")
      .option("--simulate", "SEED", "measure nothing: run the whole command on a simulated noisy cost model (outputs say SIMULATED)")
      .flag("--no-env-search", "do not search the environment-only settings (NCCL_BUFFSIZE, ...)")
      .option("--env-settings", "LIST", "environment-only settings to search: buffsize, nthreads, socket, qps", "buffsize,nthreads,socket,qps")
      .option("--env-pairs", "N", "environment search: default/candidate process pairs in the verification", "4")
      .option("--launch", "CMD", "start each measurement process with this launch command (run outside the job: "
                                 "'mpirun -np 16 -N 8', 'srun -N2 --ntasks-per-node=8', 'torchrun --no-python ...')")
      .option("--compute-load", "PCT", "measure while an FMA kernel keeps PCT% of every GPU's SMs busy on its own stream")
      .option("--env-worker", "SPEC", "(internal) one measurement process of the environment search")
      .flag("--json", "print the report as JSON (schema fabscope.tune, docs/formats.md)")
      .flag("--no-progress", "no line per size on stderr")
      .choices("env-format", ncclenv::format_names())
      .choices("launcher", {"auto", "local", "mpi", "torchrun"})
      .example("fabscope tune -g 8", "all-reduce, 1 KiB to 1 GiB, on the 8 local GPUs; files in ./fabscope-tune")
      .example("mpirun -np 16 -N 8 fabscope tune -c all_reduce,all_gather -o /shared/tune",
               "two nodes; every rank measures, rank 0 writes")
      .example("fabscope tune --launch 'mpirun -np 16 -N 8 --hostfile hosts' -o /shared/tune",
               "two nodes, the environment-only settings included: each candidate is a new mpirun job")
      .example("fabscope tune -g 8 --compute-load 50", "tuned while half of each GPU's SMs run a compute kernel")
      .example("fabscope tune --simulate 7 -o /tmp/t", "a dry run on the simulated model")
      .footer(std::string("Exit codes: 0 tuned (the table may be empty: NCCL's default won everywhere) or one rank\n"
                          "(nothing to tune), 3 usage or internal error (no GPU, NCCL or plugin)."));
  return a;
}

tune::TuneOptions tune_options(const core::ArgParser& a) {
  tune::TuneOptions o;
  o.collectives.clear();
  std::string list = a.get("collective");
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t end = list.find(',', start);
    std::string item = list.substr(start, end == std::string::npos ? std::string::npos : end - start);
    auto c = bench::parse_collective(item);
    if (!c) throw UsageError("tune: --collective '" + item + "' is not a collective");
    if (tune::nccl_func(*c) < 0)
      throw UsageError("tune: --collective '" + item + "' cannot be tuned (NCCL's tuner covers all_reduce, "
                       "all_gather, reduce_scatter, broadcast, reduce)");
    o.collectives.push_back(*c);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  bench::SweepSpec sweep;
  if (a.has("sizes")) {
    sweep.list = bench::parse_size_list(a.get("sizes"), "tune");
  } else {
    auto min = bench::parse_size(a.get("minbytes"));
    auto max = bench::parse_size(a.get("maxbytes"));
    if (!min || *min == 0) throw UsageError("tune: --minbytes '" + a.get("minbytes") + "' is not a size");
    if (!max || *max < *min) throw UsageError("tune: --maxbytes '" + a.get("maxbytes") + "' is not a size >= --minbytes");
    sweep.min_bytes = *min;
    sweep.max_bytes = *max;
    sweep.step_factor = a.get_double("stepfactor", 1.01, 1024);
  }
  o.sizes = bench::sweep_sizes(sweep, "tune");
  // No GPU holds a buffer near this, and NCCL's tuner table counts bytes in 64 bits: a larger size
  // (16 EiB parses) is a typo, not a plan.
  constexpr std::uint64_t kMaxTuneBytes = 1ull << 40;
  for (auto bytes : o.sizes)
    if (bytes > kMaxTuneBytes)
      throw UsageError("tune: size " + std::to_string(bytes) + " B is larger than 1 TiB (" +
                       std::to_string(kMaxTuneBytes) + " B), the most a tuned size may be");
  if (o.sizes.size() > 64) throw UsageError("tune: " + std::to_string(o.sizes.size()) + " sizes; at most 64 (raise -f)");
  if (a.has("algorithms")) o.space.algos = tune::parse_algos(a.get("algorithms"));
  o.space.protos = tune::parse_protos(a.get("protocols"));
  o.space.channels = tune::parse_channels(a.get("channels"));
  o.space.nvls = a.has("nvls");
  o.space.collnet = a.has("collnet");
  o.halving.eta = a.get_double("eta", 1.5, 16);
  o.halving.max_rungs = static_cast<int>(a.get_int("rungs", 1, 10));
  o.halving.first_budget_s = a.get_double("budget", 1e-4, 10);
  o.verify.pairs = static_cast<int>(a.get_int("pairs", 2, 100));
  o.verify.budget_s = a.get_double("verify-time", 1e-4, 60);
  return o;
}

std::string self_exe() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot find this binary (/proc/self/exe): " + ec.message());
  return exe.string();
}

// The arguments of the job that searches the table for a --launch driver: the original ones
// without --launch (the job must not launch again) and with the output directory made absolute
// (the ranks may start elsewhere), the environment search left to the driver.
std::vector<std::string> table_job_args(int argc, char** argv, const std::string& abs_out_dir) {
  std::vector<std::string> out;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--launch" || a == "-o" || a == "--out-dir") {
      ++i;
      continue;
    }
    if (a.rfind("--launch=", 0) == 0 || a.rfind("--out-dir=", 0) == 0 || a == "--no-env-search") continue;
    out.push_back(a);
  }
  out.insert(out.end(), {"--no-env-search", "--out-dir", abs_out_dir});
  return out;
}

}  // namespace

int cmd_tune(int argc, char** argv) {
  auto args = tune_parser();
  if (!args.parse(argc, argv, std::cout)) return 0;
  if (args.has("env-worker")) return tune::run_worker(tune::worker_spec_from(args.get("env-worker")), std::cout);
  tune::CommandSpec c;
  c.opts = tune_options(args);
  c.out.env_format = ncclenv::parse_format(args.get("env-format"));
  c.out.dir = args.get("out-dir");
  c.out.table_path = std::filesystem::absolute(c.out.dir / "nccl_tuner.csv").lexically_normal().string();
  c.out.json = args.has("json");
  c.progress = !args.has("no-progress");
  c.simulate = args.has("simulate");
  c.seed = c.simulate ? static_cast<std::uint64_t>(args.get_int("simulate", 0, 1ll << 62)) : 0;
  const double load_pct = args.has("compute-load") ? args.get_double("compute-load", 1, 100) : 0;
  c.opts.compute_load_pct = load_pct;
  if (args.has("launch")) {
    c.launch = tune::split_launch(args.get("launch"));
    c.launch_text = args.get("launch");
    c.table_job = table_job_args(argc, argv, std::filesystem::absolute(c.out.dir).lexically_normal().string());
  }
  c.env_search = !args.has("no-env-search");
  c.env_spec.only = tune::parse_env_settings(args.get("env-settings"));
  c.env_rule.pairs = static_cast<int>(args.get_int("env-pairs", 2, 100));
  c.env_rule.eta = c.opts.halving.eta;
  c.env_rule.max_rungs = std::min(c.opts.halving.max_rungs, 3);
  c.env_rule.first_budget_s = std::max(c.opts.halving.first_budget_s, 5e-3);
  c.env_rule.verify_budget_s = c.opts.verify.budget_s;
  if (!c.launch.empty() && !c.env_search)
    throw UsageError("tune: --launch starts a job per environment candidate; it cannot go with --no-env-search "
                     "(run fabscope tune under the launcher instead)");

  if (c.simulate) {
    c.plugin_path = "libnccl-tuner-fabscope.so";
    try {
      c.plugin_path = tune::find_tuner_plugin(args.get("plugin"));
    } catch (const Error&) {
    }
  } else {
    auto support = bench::gpu_support();
    if (!support.built) {
      std::cerr << "fabscope tune: " << support.missing << "\n";
      return kExitUsage;
    }
    c.plugin_path = tune::find_tuner_plugin(args.get("plugin"));
    bench::Options& b = c.bench;
    if (args.has("gpus")) b.gpus = static_cast<int>(args.get_int("gpus", 1, 1024));
    auto launcher = bench::parse_launcher(args.get("launcher"));
    if (!launcher) throw UsageError("tune: --launcher '" + args.get("launcher") + "' (auto, local, mpi, torchrun)");
    b.launcher = *launcher;
    if (args.has("nccl-port")) b.nccl_port = static_cast<int>(args.get_int("nccl-port", 1, 65535));
    b.timeout_s = args.get_double("timeout", 1, 86400);
    b.compute_load_pct = load_pct;
    const auto kind = bench::detect_launch(b.launcher, bench::process_env(), b.nccl_port).kind;
    const bool in_job = kind == bench::Launcher::Mpi || kind == bench::Launcher::Torchrun;
    if (in_job && !c.launch.empty())
      throw UsageError("tune: --launch runs the launcher itself: start fabscope tune --launch on the launch node, "
                       "not under " + bench::launcher_name(kind));
    if (in_job && c.env_search)
      throw UsageError("tune: the environment-only settings need a new job per candidate (NCCL reads them once per "
                       "process), which a rank of a running " + bench::launcher_name(kind) + " job cannot start. "
                       "Run `fabscope tune --launch '<your launch command>' ...` outside the job (it starts a job "
                       "that searches the table, then a job per candidate), or pass --no-env-search");
  }
  c.self_exe = self_exe();
  for (auto coll : c.opts.collectives)
    for (auto bytes : c.opts.sizes) c.worker.points.push_back({coll, bytes});
  c.worker.simulate = c.simulate;
  c.worker.seed = c.seed;
  c.worker.gpus = c.bench.gpus;
  c.worker.plugin = c.plugin_path;
  c.worker.compute_load_pct = load_pct;
  c.worker.timeout_s = c.bench.timeout_s;
  return tune::run_command(c, std::cout, std::cerr);
}

}  // namespace fabscope::cli
