#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "bench/options.hpp"
#include "bench/run.hpp"
#include "bench/sizes.hpp"
#include "cli/commands.hpp"
#include "core/args.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/finding.hpp"
#include "ncclenv/render.hpp"
#include "probe/run_tool.hpp"
#include "tune/env_search.hpp"
#include "tune/env_worker.hpp"
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
      .flag("--no-env-search", "do not search the environment-only settings (NCCL_BUFFSIZE, ...)")
      .option("--env-settings", "LIST", "environment-only settings to search: buffsize, nthreads, socket, qps", "buffsize,nthreads,socket,qps")
      .option("--env-pairs", "N", "environment search: default/candidate process pairs in the verification", "4")
      .option("--launch", "CMD", "start each measurement process with this launch command (run outside the job: "
                                 "'mpirun -np 16 -N 8', 'srun -N2 --ntasks-per-node=8', 'torchrun --no-python ...')")
      .option("--compute-load", "PCT", "measure while an FMA kernel keeps PCT% of every GPU's SMs busy on its own stream")
      .option("--env-from", "FILE", "(used by --launch) apply and report the environment search result in FILE")
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



std::string self_exe() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot find this binary (/proc/self/exe): " + ec.message());
  return exe.string();
}

constexpr const char* kOneRank =
    "fabscope tune: one rank has nothing to tune: NCCL runs a single-rank collective as a local copy, "
    "without an algorithm, protocol or channels to choose. Run it on 2 or more GPUs (-g N, mpirun, "
    "torchrun). Nothing written.\n";

// The original arguments without --launch (the final launched run must not launch again).
std::vector<std::string> args_without_launch(int argc, char** argv) {
  std::vector<std::string> out;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--launch" || a == "--env-from") {
      ++i;
      continue;
    }
    if (a.rfind("--launch=", 0) == 0 || a.rfind("--env-from=", 0) == 0 || a == "--no-env-search") continue;
    out.push_back(a);
  }
  return out;
}

}  // namespace

int cmd_tune(int argc, char** argv) {
  auto args = tune_parser();
  if (!args.parse(argc, argv, std::cout)) return 0;
  if (args.has("env-worker")) return tune::run_worker(tune::worker_spec_from(args.get("env-worker")), std::cout);
  tune::TuneOptions opts = tune_options(args);
  const auto env_format = ncclenv::parse_format(args.get("env-format"));
  const std::filesystem::path out_dir = args.get("out-dir");
  const bool progress = !args.has("no-progress");
  const bool simulated = args.has("simulate");
  const double load_pct = args.has("compute-load") ? args.get_double("compute-load", 1, 100) : 0;
  opts.compute_load_pct = load_pct;
  std::vector<std::string> launch;
  if (args.has("launch")) launch = tune::split_launch(args.get("launch"));
  bool env_search = !args.has("no-env-search") && !args.has("env-from");
  tune::EnvSpaceSpec env_spec;
  env_spec.only = tune::parse_env_settings(args.get("env-settings"));
  tune::EnvSearchRule env_rule;
  env_rule.pairs = static_cast<int>(args.get_int("env-pairs", 2, 100));
  env_rule.eta = opts.halving.eta;
  env_rule.max_rungs = std::min(opts.halving.max_rungs, 3);
  env_rule.first_budget_s = std::max(opts.halving.first_budget_s, 5e-3);
  env_rule.verify_budget_s = opts.verify.budget_s;
  if (!launch.empty() && !env_search)
    throw UsageError("tune: --launch starts a job per environment candidate; it cannot go with --no-env-search "
                     "or --env-from (run fabscope tune under the launcher instead)");

  std::string plugin_path;
  bench::Options b;
  if (simulated) {
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
    if (args.has("gpus")) b.gpus = static_cast<int>(args.get_int("gpus", 1, 1024));
    auto launcher = bench::parse_launcher(args.get("launcher"));
    if (!launcher) throw UsageError("tune: --launcher '" + args.get("launcher") + "' (auto, local, mpi, torchrun)");
    b.launcher = *launcher;
    if (args.has("nccl-port")) b.nccl_port = static_cast<int>(args.get_int("nccl-port", 1, 65535));
    b.timeout_s = args.get_double("timeout", 1, 86400);
    b.compute_load_pct = load_pct;
    const auto kind = bench::detect_launch(b.launcher, bench::process_env(), b.nccl_port).kind;
    const bool in_job = kind == bench::Launcher::Mpi || kind == bench::Launcher::Torchrun;
    if (in_job && !launch.empty())
      throw UsageError("tune: --launch runs the launcher itself: start fabscope tune --launch on the launch node, "
                       "not under " + bench::launcher_name(kind));
    if (in_job && env_search)
      throw UsageError("tune: the environment-only settings need a new job per candidate (NCCL reads them once per "
                       "process), which a rank of a running " + bench::launcher_name(kind) + " job cannot start. "
                       "Run `fabscope tune --launch '<your launch command>' ...` outside the job (it starts a job per "
                       "candidate, then the final run), or pass --no-env-search");
  }

  std::optional<tune::EnvSearchResult> env_result;
  if (args.has("env-from")) {
    const std::string f = args.get("env-from");
    std::ifstream in(f);
    if (!in) throw UsageError("tune: --env-from " + f + " cannot be read");
    json j;
    try {
      j = json::parse(in);
    } catch (const json::exception& e) {
      throw UsageError("tune: --env-from " + f + " is not JSON: " + e.what());
    }
    try {
      env_result = tune::env_search_from_json(j);
    } catch (const Error& e) {
      throw UsageError("tune: --env-from " + f + ": " + e.what());
    }
  }
  if (env_search) {
    std::vector<tune::EnvPoint> points;
    for (auto c : opts.collectives)
      for (auto bytes : opts.sizes) points.push_back({c, bytes});
    tune::WorkerSpec ws;
    ws.points = points;
    ws.simulate = simulated;
    ws.seed = simulated ? static_cast<std::uint64_t>(args.get_int("simulate", 0, 1ll << 62)) : 0;
    ws.gpus = b.gpus;
    ws.plugin = plugin_path;
    ws.compute_load_pct = load_pct;
    ws.timeout_s = b.timeout_s;
    tune::ProcessEnvMeasurer pm(launch, self_exe(), ws);
    // A first process learns the job's shape and network path (and warms the file caches).
    const tune::ProcessResult shape = pm.run_process({}, env_rule.first_budget_s);
    if (shape.nranks < 2) {
      std::cout << kOneRank;
      return 0;
    }
    tune::NetPath path = tune::NetPath::Other;
    for (auto p : {tune::NetPath::None, tune::NetPath::IB, tune::NetPath::Socket})
      if (tune::net_path_name(p) == shape.net_path) path = p;
    if (progress)
      std::cerr << "tune: environment-only settings, one process per measurement (" << shape.nranks << " ranks, "
                << shape.nnodes << " node(s), " << shape.net_path << ")\n";
    auto env_progress = [&](const std::string& line) {
      if (progress) std::cerr << "tune: " << line << "\n";
    };
    env_result = tune::run_env_search(pm, points, tune::env_groups(path, shape.nnodes, env_spec), env_rule, env_progress);
    env_result->processes += 1;
    env_result->net_path = shape.net_path;
    env_result->launch = launch.empty() ? "this binary re-executed, local launcher" : "each a new job of: " + args.get("launch");
    if (progress)
      for (const auto& g : env_result->groups)
        std::cerr << "tune: " << g.group.name << ": "
                  << (g.kept ? "set " + g.best.label() : g.group.skipped.empty() ? "default kept" : "skipped") << "\n";
  }
  if (!launch.empty()) {
    // Driver: the search of the per-call choices runs as one more job with the chosen values.
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    if (ec) throw Error("cannot create --out-dir " + out_dir.string() + ": " + ec.message());
    const auto env_file = std::filesystem::absolute(out_dir / "env-search.json").lexically_normal();
    core::write_output(env_file.string(), tune::env_search_json(*env_result).dump(2) + "\n");
    std::vector<std::string> final_argv = launch;
    final_argv.push_back(self_exe());
    final_argv.push_back("tune");
    for (auto& a : args_without_launch(argc, argv)) final_argv.push_back(a);
    final_argv.insert(final_argv.end(), {"--env-from", env_file.string()});
    auto t = probe::run_tool(final_argv, static_cast<int>(std::min(86400.0 * 1000, (b.timeout_s + 600) * 1000 * 20)));
    std::cout << t.out;
    std::cerr << t.err;
    if (t.status != probe::ToolResult::Status::Ran) throw Error("tune: the final run (" + final_argv.front() + ") " + t.error);
    return t.exit_code;
  }
  if (env_result) tune::set_process_env(env_result->chosen);  // before NCCL starts in this process

  std::unique_ptr<tune::Measurer> measurer;
  tune::GpuMeasurer* gpu = nullptr;
  std::string source;
  if (simulated) {
    const auto seed = static_cast<std::uint64_t>(args.get_int("simulate", 0, 1ll << 62));
    tune::SimModel model;
    model.env = tune::tunable_env_from_process();
    model.compute_load_pct = load_pct;
    measurer = std::make_unique<tune::SimMeasurer>(model, seed);
    source = "simulated model (" + std::to_string(model.nranks) + " ranks, 1 node), seed " + std::to_string(seed);
  } else {
    auto g = std::make_unique<tune::GpuMeasurer>(b, plugin_path);
    gpu = g.get();
    measurer = std::move(g);
    if (measurer->nranks() < 2) {
      if (gpu->prints()) std::cout << kOneRank;
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
  r.env = env_result;
  r.compute_load_pct = load_pct;
  if (gpu) {
    source = "NCCL " + gpu->nccl_version() + ", " + std::to_string(r.nranks) + " ranks on " +
             std::to_string(r.nnodes) + " node(s), launcher " + gpu->launcher();
    r.compute_load_busy_share = gpu->compute_load_busy_share();
  }
  r.source = source;
  if (!prints) return 0;

  const auto rows = tune::table_rows(r);
  const auto advice = tune::advise(r);
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw Error("cannot create --out-dir " + out_dir.string() + ": " + ec.message());
  const auto table_path = std::filesystem::absolute(out_dir / "nccl_tuner.csv").lexically_normal();
  core::write_output(table_path.string(), tune::render_table(rows, {"written by fabscope tune " FABSCOPE_VERSION " (docs/tune.md)",
                                                   std::string(r.simulated ? "SIMULATED: " : "") + r.source,
                                                   "rows: verified faster than NCCL's default; elsewhere NCCL decides"}));
  ncclenv::RenderOptions ro;
  ro.nodes = r.nnodes;
  core::write_output((out_dir / "tune.env").string(), ncclenv::render(tune::tuned_env(r, rows, plugin_path, table_path.string()), env_format, ro));
  const std::string text = tune::render_report(r, rows, advice);
  core::write_output((out_dir / "tune-report.txt").string(), text);
  const json j = tune::report_json(r, rows, advice);
  core::write_output((out_dir / "tune.json").string(), j.dump(2) + "\n");
  core::write_output((out_dir / "measurements.csv").string(), tune::optimize_config_csv(r));
  if (args.has("json")) {
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << text << "# files in " << out_dir.string()
              << ":\n#   nccl_tuner.csv, tune.env, tune-report.txt, tune.json, measurements.csv\n";
  }
  return 0;
}

}  // namespace fabscope::cli
