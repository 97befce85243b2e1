#include <filesystem>
#include <fstream>
#include <iostream>

#include "bench/options.hpp"
#include "bench/run.hpp"
#include "bench/sizes.hpp"
#include "cli/commands.hpp"
#include "core/args.hpp"
#include "core/error.hpp"
#include "core/finding.hpp"
#include "ncclenv/render.hpp"
#include "tune/gpu_measurer.hpp"
#include "tune/report.hpp"
#include "tune/sim.hpp"
#include "tune/table.hpp"
#include "tune/tune.hpp"

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
      .flag("--json", "print the report as JSON (schema fabscope.tune, docs/formats.md)")
      .flag("--no-progress", "no line per size on stderr")
      .choices("env-format", ncclenv::format_names())
      .choices("launcher", {"auto", "local", "mpi", "torchrun"})
      .example("fabscope tune -g 8", "all-reduce, 1 KiB to 1 GiB, on the 8 local GPUs; files in ./fabscope-tune")
      .example("mpirun -np 16 -N 8 fabscope tune -c all_reduce,all_gather -o /shared/tune",
               "two nodes; every rank measures, rank 0 writes")
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
    sweep.list = bench::parse_size_list(a.get("sizes"));
  } else {
    auto min = bench::parse_size(a.get("minbytes"));
    auto max = bench::parse_size(a.get("maxbytes"));
    if (!min || *min == 0) throw UsageError("tune: --minbytes '" + a.get("minbytes") + "' is not a size");
    if (!max || *max < *min) throw UsageError("tune: --maxbytes '" + a.get("maxbytes") + "' is not a size >= --minbytes");
    sweep.min_bytes = *min;
    sweep.max_bytes = *max;
    sweep.step_factor = a.get_double("stepfactor", 1.01, 1024);
  }
  o.sizes = bench::sweep_sizes(sweep);
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

void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream f(p);
  f << text;
  f.close();
  if (!f) throw Error("cannot write " + p.string());
}

}  // namespace

int cmd_tune(int argc, char** argv) {
  auto args = tune_parser();
  if (!args.parse(argc, argv, std::cout)) return 0;
  const tune::TuneOptions opts = tune_options(args);
  const auto env_format = ncclenv::parse_format(args.get("env-format"));
  const std::filesystem::path out_dir = args.get("out-dir");
  const bool progress = !args.has("no-progress");

  std::unique_ptr<tune::Measurer> measurer;
  tune::GpuMeasurer* gpu = nullptr;
  std::string source, plugin_path;
  bool simulated = args.has("simulate");
  if (simulated) {
    const auto seed = static_cast<std::uint64_t>(args.get_int("simulate", 0, 1ll << 62));
    tune::SimModel model;
    measurer = std::make_unique<tune::SimMeasurer>(model, seed);
    source = "simulated model (" + std::to_string(model.nranks) + " ranks, 1 node), seed " + std::to_string(seed);
    plugin_path = "libnccl-tuner-fabscope.so";
    try {
      plugin_path = tune::find_tuner_plugin(args.get("plugin"));
    } catch (const Error&) {
    }
  } else {
    auto support = bench::gpu_support();
    if (!support.built) {
      std::cerr << "fabscope tune: " << support.missing << "\n";
      return kExitUsage;
    }
    plugin_path = tune::find_tuner_plugin(args.get("plugin"));
    bench::Options b;
    if (args.has("gpus")) b.gpus = static_cast<int>(args.get_int("gpus", 1, 1024));
    auto launcher = bench::parse_launcher(args.get("launcher"));
    if (!launcher) throw UsageError("tune: --launcher '" + args.get("launcher") + "' (auto, local, mpi, torchrun)");
    b.launcher = *launcher;
    if (args.has("nccl-port")) b.nccl_port = static_cast<int>(args.get_int("nccl-port", 1, 65535));
    b.timeout_s = args.get_double("timeout", 1, 86400);
    auto g = std::make_unique<tune::GpuMeasurer>(b, plugin_path);
    gpu = g.get();
    measurer = std::move(g);
    if (measurer->nranks() < 2) {
      if (gpu->prints())
        std::cout << "fabscope tune: one rank has nothing to tune: NCCL runs a single-rank "
                     "collective as a local copy, without an algorithm, protocol or channels to choose. "
                     "Run it on 2 or more GPUs (-g N, mpirun, torchrun). Nothing written.\n";
      return 0;
    }
  }
  const bool prints = gpu == nullptr || gpu->prints();
  auto on_size = [&](bench::Collective c, const tune::SizeOutcome& s) {
    if (!progress || !prints) return;
    std::cerr << "tune: " << bench::describe(c).name << " " << bench::size_label(s.bytes) << ": "
              << tune::label(s.written) << (s.written.is_default() ? "" : " (verified)") << "\n";
  };
  tune::TuneResult r = tune::run_tune(*measurer, opts, on_size);
  r.simulated = simulated;
  if (gpu)
    source = "NCCL " + gpu->nccl_version() + ", " + std::to_string(r.nranks) + " ranks on " +
             std::to_string(r.nnodes) + " node(s), launcher " + gpu->launcher();
  r.source = source;
  if (!prints) return 0;

  const auto rows = tune::table_rows(r);
  const auto advice = tune::advise(r);
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw Error("cannot create --out-dir " + out_dir.string() + ": " + ec.message());
  const auto table_path = std::filesystem::absolute(out_dir / "nccl_tuner.csv").lexically_normal();
  write_file(table_path, tune::render_table(rows, {"written by fabscope tune " FABSCOPE_VERSION " (docs/tune.md)",
                                                   std::string(r.simulated ? "SIMULATED: " : "") + r.source,
                                                   "rows: verified faster than NCCL's default; elsewhere NCCL decides"}));
  ncclenv::RenderOptions ro;
  ro.nodes = r.nnodes;
  write_file(out_dir / "tune.env", ncclenv::render(tune::tuned_env(r, rows, plugin_path, table_path.string()), env_format, ro));
  const std::string text = tune::render_report(r, rows, advice);
  write_file(out_dir / "tune-report.txt", text);
  const json j = tune::report_json(r, rows, advice);
  write_file(out_dir / "tune.json", j.dump(2) + "\n");
  write_file(out_dir / "measurements.csv", tune::optimize_config_csv(r));
  if (args.has("json")) {
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << text << "# files in " << out_dir.string()
              << ":\n#   nccl_tuner.csv, tune.env, tune-report.txt, tune.json, measurements.csv\n";
  }
  return 0;
}

}  // namespace fabscope::cli
