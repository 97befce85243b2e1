#include "tune/command.hpp"

#include <memory>
#include <optional>

#include "bench/run.hpp"
#include "bench/sizes.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json.hpp"
#include "probe/run_tool.hpp"
#include "tune/gpu_measurer.hpp"
#include "tune/render.hpp"
#include "tune/saved_result.hpp"
#include "tune/sim.hpp"
#include "tune/table.hpp"

namespace fabscope::tune {

const char* const kOneRankMessage =
    "fabscope tune: one rank has nothing to tune: NCCL runs a single-rank collective as a local copy, "
    "without an algorithm, protocol or channels to choose. Run it on 2 or more GPUs (-g N, mpirun, "
    "torchrun). Nothing written.\n";

namespace {

void write_table(const TuneResult& r, const std::vector<TableRow>& rows, const OutputSpec& o) {
  std::error_code ec;
  std::filesystem::create_directories(o.dir, ec);
  if (ec) throw Error("cannot create --out-dir " + o.dir.string() + ": " + ec.message());
  core::write_output(o.table_path, render_table(rows, {"written by fabscope tune " FABSCOPE_VERSION " (docs/tune.md)",
                                                       std::string(r.simulated ? "SIMULATED: " : "") + r.source,
                                                       "rows: verified faster than NCCL's default; elsewhere NCCL decides"}));
}

// Every output file, then the report (text or JSON) on out.
void write_outputs(const TuneResult& r, const std::vector<TableRow>& rows, const std::string& plugin_path,
                   const OutputSpec& o, std::ostream& out) {
  write_table(r, rows, o);
  const auto advice = advise(r);
  ncclenv::RenderOptions ro;
  ro.nodes = r.nnodes;
  core::write_output((o.dir / "tune.env").string(),
                     ncclenv::render(tuned_env(r, rows, plugin_path, o.table_path), o.env_format, ro));
  const std::string text = render_report(r, rows, advice);
  core::write_output((o.dir / "tune-report.txt").string(), text);
  const json j = report_json(r, rows, advice);
  core::write_output((o.dir / "tune.json").string(), j.dump(2) + "\n");
  core::write_output((o.dir / "measurements.csv").string(), optimize_config_csv(r));
  if (o.json) {
    out << j.dump(2) << "\n";
  } else {
    out << text << "# files in " << o.dir.string()
        << ":\n#   nccl_tuner.csv, tune.env, tune-report.txt, tune.json, measurements.csv\n";
  }
}

// Phase 2. nullopt: the job has one rank.
std::optional<EnvSearchResult> search_env(const CommandSpec& s, const std::string& table_path, std::ostream& err) {
  ProcessEnvMeasurer pm(s.launch, s.self_exe, s.worker);
  // A first process learns the job's shape and network path (and warms the file caches).
  const ProcessResult shape = pm.run_process({}, s.env_rule.first_budget_s);
  if (shape.nranks < 2) return std::nullopt;
  NetPath path = NetPath::Other;
  for (auto p : {NetPath::None, NetPath::IB, NetPath::Socket})
    if (net_path_name(p) == shape.net_path) path = p;
  if (s.progress)
    err << "tune: environment-only settings, one process per measurement (" << shape.nranks << " ranks, "
        << shape.nnodes << " node(s), " << shape.net_path << ")" << (table_path.empty() ? "" : ", each loading the table")
        << "\n";
  auto progress = [&](const std::string& line) {
    if (s.progress) err << "tune: " << line << "\n";
  };
  EnvSearchResult e = run_env_search_on_table(pm, s.worker.points, env_groups(path, s.env_spec),
                                              s.env_rule, table_path, progress);
  e.processes += 1;
  e.net_path = shape.net_path;
  e.launch = s.launch.empty() ? "this binary re-executed, local launcher" : "each a new job of: " + s.launch_text;
  if (s.progress) {
    for (const auto& g : e.groups)
      err << "tune: " << g.group.name << ": "
          << (g.kept ? "set " + g.best.label() : g.group.skipped.empty() ? "default kept" : "skipped") << "\n";
    if (e.combined && e.combined->verified)
      err << "tune: together with the table: " << (e.combined->kept ? "kept" : "values dropped") << "\n";
  }
  return e;
}

// Phase 1 as a job of the launch command; nullopt when it wrote no tune.json (one rank, or its
// own error), after passing on what it printed (*code: its exit code).
std::optional<TuneResult> table_job(const CommandSpec& s, std::ostream& out, std::ostream& err, int* code) {
  const auto dir = std::filesystem::absolute(s.out.dir).lexically_normal();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error("cannot create --out-dir " + dir.string() + ": " + ec.message());
  std::filesystem::remove(dir / "tune.json", ec);  // a stale one must not pass for this run's
  std::vector<std::string> job = s.launch;
  job.push_back(s.self_exe);
  job.push_back("tune");
  job.insert(job.end(), s.table_job.begin(), s.table_job.end());
  if (s.progress) err << "tune: searching the per-call table in one job of: " << s.launch_text << "\n";
  auto t = probe::run_tool(job, static_cast<int>(std::min(86400.0 * 1000, (s.bench.timeout_s + 600) * 1000 * 20)));
  err << t.err;
  if (t.status != probe::ToolResult::Status::Ran) throw Error("tune: the table job (" + job.front() + ") " + t.error);
  if (t.exit_code != 0 || !std::filesystem::exists(dir / "tune.json")) {
    out << t.out;
    *code = t.exit_code;
    return std::nullopt;
  }
  const std::string path = (dir / "tune.json").string();
  json doc;
  try {
    doc = parse_input_json(core::read_input(path, 1u << 30));
  } catch (const json::exception& e) {
    throw Error(path + ": " + e.what());
  } catch (const Error& e) {  // a key given twice
    throw Error(path + ": " + e.what());
  }
  return saved_result_from_json(path, doc).run;  // its errors name the path and the field
}

// Phase 1 in this process; nullopt when this rank prints nothing (one rank: after saying so).
std::optional<TuneResult> table_here(const CommandSpec& s, std::ostream& out, std::ostream& err) {
  std::unique_ptr<Measurer> measurer;
  GpuMeasurer* gpu = nullptr;
  std::string source;
  if (s.simulate) {
    SimModel model;
    model.env = tunable_env_from_process();
    model.compute_load_pct = s.opts.compute_load_pct;
    measurer = std::make_unique<SimMeasurer>(model, s.seed);
    source = "simulated model (" + std::to_string(model.nranks) + " ranks, 1 node), seed " + std::to_string(s.seed);
  } else {
    auto g = std::make_unique<GpuMeasurer>(s.bench, s.plugin_path);
    gpu = g.get();
    measurer = std::move(g);
    if (measurer->nranks() < 2) {
      if (gpu->prints()) out << kOneRankMessage;
      return std::nullopt;
    }
  }
  const bool prints = gpu == nullptr || gpu->prints();
  auto on_size = [&](bench::Collective c, const SizeOutcome& z) {
    if (!s.progress || !prints) return;
    err << "tune: " << bench::describe(c).name << " " << bench::size_label(z.bytes) << ": " << label(z.written)
        << (z.written.is_default() ? "" : " (verified)") << "\n";
  };
  TuneResult r = run_tune(*measurer, s.opts, on_size);
  r.simulated = s.simulate;
  r.compute_load_pct = s.opts.compute_load_pct;
  if (gpu) {
    source = "NCCL " + gpu->nccl_version() + ", " + std::to_string(r.nranks) + " ranks on " +
             std::to_string(r.nnodes) + " node(s)" +
             (gpu->hosts() == r.nnodes ? "" : " as NCCL counts them (" + std::to_string(gpu->hosts()) + " host(s))") +
             ", launcher " + gpu->launcher();
    r.compute_load_busy_share = gpu->compute_load_busy_share();
  }
  r.source = source;
  measurer.reset();  // communicators and buffers freed before other processes use the GPUs
  if (!prints) return std::nullopt;
  return r;
}

}  // namespace

int run_command(const CommandSpec& s, std::ostream& out, std::ostream& err) {
  std::optional<TuneResult> r;
  if (!s.launch.empty()) {
    int code = 0;
    r = table_job(s, out, err, &code);
    if (!r) return code;
  } else {
    r = table_here(s, out, err);
    if (!r) return 0;
  }
  const auto rows = table_rows(*r);
  if (s.env_search) {
    write_table(*r, rows, s.out);  // the worker processes load it
    r->env = search_env(s, rows.empty() ? "" : s.out.table_path, err);
    if (!r->env) {
      out << kOneRankMessage;
      return 0;
    }
  }
  write_outputs(*r, rows, s.plugin_path, s.out, out);
  return 0;
}

}  // namespace fabscope::tune
