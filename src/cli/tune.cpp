#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

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

struct Outputs {
  std::filesystem::path dir;
  std::string table_path;  // absolute
  ncclenv::Format env_format;
  bool json = false;
};

void write_table(const tune::TuneResult& r, const std::vector<tune::TableRow>& rows, const Outputs& o) {
  std::error_code ec;
  std::filesystem::create_directories(o.dir, ec);
  if (ec) throw Error("cannot create --out-dir " + o.dir.string() + ": " + ec.message());
  core::write_output(o.table_path, tune::render_table(rows, {"written by fabscope tune " FABSCOPE_VERSION " (docs/tune.md)",
                                                            std::string(r.simulated ? "SIMULATED: " : "") + r.source,
                                                            "rows: verified faster than NCCL's default; elsewhere NCCL decides"}));
}

// Every output file, then the report (text or JSON) on stdout.
void write_outputs(const tune::TuneResult& r, const std::vector<tune::TableRow>& rows, const std::string& plugin_path,
                   const Outputs& o) {
  write_table(r, rows, o);
  const auto advice = tune::advise(r);
  ncclenv::RenderOptions ro;
  ro.nodes = r.nnodes;
  core::write_output((o.dir / "tune.env").string(),
                     ncclenv::render(tune::tuned_env(r, rows, plugin_path, o.table_path), o.env_format, ro));
  const std::string text = tune::render_report(r, rows, advice);
  core::write_output((o.dir / "tune-report.txt").string(), text);
  const json j = tune::report_json(r, rows, advice);
  core::write_output((o.dir / "tune.json").string(), j.dump(2) + "\n");
  core::write_output((o.dir / "measurements.csv").string(), tune::optimize_config_csv(r));
  if (o.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << text << "# files in " << o.dir.string()
              << ":\n#   nccl_tuner.csv, tune.env, tune-report.txt, tune.json, measurements.csv\n";
  }
}

// The environment-only settings, each value in fresh processes that load the table (when it has
// rows), then both together against NCCL's defaults. nullopt: the job has one rank.
struct EnvSearchSetup {
  tune::WorkerSpec worker;
  std::vector<std::string> launch;
  std::string launch_text;
  tune::EnvSpaceSpec spec;
  tune::EnvSearchRule rule;
  bool progress = true;
};

std::optional<tune::EnvSearchResult> search_env(const EnvSearchSetup& s, const std::string& table_path) {
  tune::ProcessEnvMeasurer pm(s.launch, self_exe(), s.worker);
  // A first process learns the job's shape and network path (and warms the file caches).
  const tune::ProcessResult shape = pm.run_process({}, s.rule.first_budget_s);
  if (shape.nranks < 2) return std::nullopt;
  tune::NetPath path = tune::NetPath::Other;
  for (auto p : {tune::NetPath::None, tune::NetPath::IB, tune::NetPath::Socket})
    if (tune::net_path_name(p) == shape.net_path) path = p;
  if (s.progress)
    std::cerr << "tune: environment-only settings, one process per measurement (" << shape.nranks << " ranks, "
              << shape.nnodes << " node(s), " << shape.net_path << ")"
              << (table_path.empty() ? "" : ", each loading the table") << "\n";
  auto env_progress = [&](const std::string& line) {
    if (s.progress) std::cerr << "tune: " << line << "\n";
  };
  tune::EnvSearchResult e = tune::run_env_search_on_table(pm, s.worker.points, tune::env_groups(path, shape.nnodes, s.spec),
                                                          s.rule, table_path, env_progress);
  e.processes += 1;
  e.net_path = shape.net_path;
  e.launch = s.launch.empty() ? "this binary re-executed, local launcher" : "each a new job of: " + s.launch_text;
  if (s.progress) {
    for (const auto& g : e.groups)
      std::cerr << "tune: " << g.group.name << ": "
                << (g.kept ? "set " + g.best.label() : g.group.skipped.empty() ? "default kept" : "skipped") << "\n";
    if (e.combined && e.combined->verified)
      std::cerr << "tune: together with the table: " << (e.combined->kept ? "kept" : "values dropped") << "\n";
  }
  return e;
}

}  // namespace

int cmd_tune(int argc, char** argv) {
  auto args = tune_parser();
  if (!args.parse(argc, argv, std::cout)) return 0;
  if (args.has("env-worker")) return tune::run_worker(tune::worker_spec_from(args.get("env-worker")), std::cout);
  tune::TuneOptions opts = tune_options(args);
  Outputs out;
  out.env_format = ncclenv::parse_format(args.get("env-format"));
  out.dir = args.get("out-dir");
  out.table_path = std::filesystem::absolute(out.dir / "nccl_tuner.csv").lexically_normal().string();
  out.json = args.has("json");
  const bool progress = !args.has("no-progress");
  const bool simulated = args.has("simulate");
  const double load_pct = args.has("compute-load") ? args.get_double("compute-load", 1, 100) : 0;
  opts.compute_load_pct = load_pct;
  std::vector<std::string> launch;
  if (args.has("launch")) launch = tune::split_launch(args.get("launch"));
  const bool env_search = !args.has("no-env-search");
  EnvSearchSetup es;
  es.launch = launch;
  es.launch_text = args.has("launch") ? args.get("launch") : "";
  es.progress = progress;
  es.spec.only = tune::parse_env_settings(args.get("env-settings"));
  es.rule.pairs = static_cast<int>(args.get_int("env-pairs", 2, 100));
  es.rule.eta = opts.halving.eta;
  es.rule.max_rungs = std::min(opts.halving.max_rungs, 3);
  es.rule.first_budget_s = std::max(opts.halving.first_budget_s, 5e-3);
  es.rule.verify_budget_s = opts.verify.budget_s;
  if (!launch.empty() && !env_search)
    throw UsageError("tune: --launch starts a job per environment candidate; it cannot go with --no-env-search "
                     "(run fabscope tune under the launcher instead)");

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
                       "Run `fabscope tune --launch '<your launch command>' ...` outside the job (it starts a job "
                       "that searches the table, then a job per candidate), or pass --no-env-search");
  }
  for (auto c : opts.collectives)
    for (auto bytes : opts.sizes) es.worker.points.push_back({c, bytes});
  es.worker.simulate = simulated;
  es.worker.seed = simulated ? static_cast<std::uint64_t>(args.get_int("simulate", 0, 1ll << 62)) : 0;
  es.worker.gpus = b.gpus;
  es.worker.plugin = plugin_path;
  es.worker.compute_load_pct = load_pct;
  es.worker.timeout_s = b.timeout_s;

  tune::TuneResult r;
  if (!launch.empty()) {
    // Driver, outside any job: first a job that searches the per-call table (under NCCL's
    // default environment) and writes it; then the environment search on top of that table,
    // one job per measurement; then every output, written here.
    const auto abs_dir = std::filesystem::absolute(out.dir).lexically_normal();
    std::error_code ec;
    std::filesystem::create_directories(abs_dir, ec);
    if (ec) throw Error("cannot create --out-dir " + abs_dir.string() + ": " + ec.message());
    std::filesystem::remove(abs_dir / "tune.json", ec);  // a stale one must not pass for this run's
    std::vector<std::string> job = launch;
    job.push_back(self_exe());
    job.push_back("tune");
    for (auto& a : table_job_args(argc, argv, abs_dir.string())) job.push_back(a);
    if (progress) std::cerr << "tune: searching the per-call table in one job of: " << es.launch_text << "\n";
    auto t = probe::run_tool(job, static_cast<int>(std::min(86400.0 * 1000, (b.timeout_s + 600) * 1000 * 20)));
    std::cerr << t.err;
    if (t.status != probe::ToolResult::Status::Ran) throw Error("tune: the table job (" + job.front() + ") " + t.error);
    if (t.exit_code != 0 || !std::filesystem::exists(abs_dir / "tune.json")) {
      std::cout << t.out;  // one rank (nothing to tune), or the job's own error
      return t.exit_code;
    }
    const std::string path = (abs_dir / "tune.json").string();
    try {
      r = tune::tune_result_from_json(json::parse(core::read_input(path, 1u << 30)));
    } catch (const json::exception& e) {
      throw Error(path + ": " + e.what());
    } catch (const Error& e) {
      throw Error(path + ": " + e.what());
    }
  } else {
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
    r = tune::run_tune(*measurer, opts, on_size);
    r.simulated = simulated;
    r.compute_load_pct = load_pct;
    if (gpu) {
      source = "NCCL " + gpu->nccl_version() + ", " + std::to_string(r.nranks) + " ranks on " +
               std::to_string(r.nnodes) + " node(s), launcher " + gpu->launcher();
      r.compute_load_busy_share = gpu->compute_load_busy_share();
    }
    r.source = source;
    measurer.reset();  // communicators and buffers freed before other processes use the GPUs
    if (!prints) return 0;
  }
  const auto rows = tune::table_rows(r);
  if (env_search) {
    write_table(r, rows, out);  // the worker processes load it
    r.env = search_env(es, rows.empty() ? "" : out.table_path);
    if (!r.env) {
      std::cout << kOneRank;
      return 0;
    }
  }
  write_outputs(r, rows, plugin_path, out);
  return 0;
}

}  // namespace fabscope::cli
