#include "tune/env_worker.hpp"

#include <cstdlib>
#include <sstream>

#include "bench/run.hpp"
#include "core/error.hpp"
#include "core/root.hpp"
#include "probe/probe.hpp"
#include "probe/run_tool.hpp"
#include "tune/gpu_measurer.hpp"
#include "tune/sim.hpp"
#include "tune/table.hpp"

namespace fabscope::tune {

namespace {
constexpr const char* kLinePrefix = "fabscope-tune-worker: ";

bool active_rdma_port() {
  NodeInfo node = probe::collect(core::Root::from_option(""));
  for (const auto& d : node.rdma_devices)
    for (const auto& port : d.ports)
      if (port.state == "ACTIVE") return true;
  return false;
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}
}  // namespace

void set_process_env(const EnvAssignment& env) {
  for (const auto& [k, v] : env.vars) ::setenv(k.c_str(), v.c_str(), 1);
}

int run_worker(const WorkerSpec& spec, std::ostream& out) {
  set_process_env(spec.env);
  ProcessResult r;
  if (spec.simulate) {
    SimModel model;
    model.env = tunable_env_from_process();  // what this process's NCCL would read
    model.compute_load_pct = spec.compute_load_pct;
    SimMeasurer m(model, spec.seed);
    const std::vector<TableRow> rows = spec.table.empty() ? std::vector<TableRow>{} : read_table_file(spec.table);
    for (const auto& p : spec.points) {
      const Choice c = table_choice(rows, p.collective, p.bytes, m.nnodes(), m.nranks());
      r.time_us.push_back(m.measure(p.collective, p.bytes, c, spec.budget_s).time_us);
    }
    r.nranks = m.nranks();
    r.nnodes = m.nnodes();
    r.net_path = net_path_name(NetPath::None);
    r.nccl_version = "simulated";
    out << worker_line(r) << std::flush;
    return 0;
  }
  auto support = bench::gpu_support();
  if (!support.built) throw Error("tune: " + support.missing);
  bench::Options b;
  b.gpus = spec.gpus;
  b.timeout_s = spec.timeout_s;
  b.compute_load_pct = spec.compute_load_pct;
  GpuMeasurer g(b, spec.plugin, spec.table);  // the plugin applies the table's rows inside NCCL
  for (const auto& p : spec.points) r.time_us.push_back(g.measure(p.collective, p.bytes, kNcclDefault, spec.budget_s).time_us);
  if (!g.prints()) return 0;
  r.nranks = g.nranks();
  r.nnodes = g.nnodes();
  NetPathInputs in;
  in.nnodes = r.nnodes;
  in.nccl_net = env_or_empty("NCCL_NET");
  in.ib_disable = env_or_empty("NCCL_IB_DISABLE");
  in.p2p_disable = env_or_empty("NCCL_P2P_DISABLE");
  in.shm_disable = env_or_empty("NCCL_SHM_DISABLE");
  in.active_rdma_port = active_rdma_port();
  r.net_path = net_path_name(detect_net_path(in));
  r.nccl_version = g.nccl_version();
  r.compute_load_busy_share = g.compute_load_busy_share();
  out << worker_line(r) << std::flush;
  return 0;
}

json worker_spec_json(const WorkerSpec& s) {
  json j;
  j["points"] = json::array();
  for (const auto& p : s.points)
    j["points"].push_back({{"collective", std::string(bench::describe(p.collective).name)}, {"bytes", p.bytes}});
  j["budget_s"] = s.budget_s;
  j["env"] = json::array();
  for (const auto& [k, v] : s.env.vars) j["env"].push_back({{"name", k}, {"value", v}});
  j["simulate"] = s.simulate;
  j["seed"] = s.seed;
  j["gpus"] = s.gpus;
  j["plugin"] = s.plugin;
  j["table"] = s.table;
  j["compute_load_pct"] = s.compute_load_pct;
  j["timeout_s"] = s.timeout_s;
  return j;
}

WorkerSpec worker_spec_from(const std::string& text) {
  WorkerSpec s;
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw UsageError(std::string("tune: --env-worker is not JSON: ") + e.what());
  }
  try {
    for (const auto& p : j.at("points")) {
      auto c = bench::parse_collective(p.at("collective").get<std::string>());
      if (!c) throw Error("unknown collective " + p.at("collective").dump());
      s.points.push_back({*c, int_at<std::uint64_t>(p, "bytes")});
    }
    s.budget_s = j.at("budget_s").get<double>();
    for (const auto& e : j.at("env")) {
      std::string name = e.at("name").get<std::string>();
      if (name.rfind("NCCL_", 0) != 0) throw Error("env names '" + name + "', not an NCCL_ variable");
      s.env.vars.emplace_back(name, e.at("value").get<std::string>());
    }
    s.simulate = j.at("simulate").get<bool>();
    s.seed = int_at<std::uint64_t>(j, "seed");
    s.gpus = int_at<int>(j, "gpus");
    s.plugin = j.at("plugin").get<std::string>();
    if (j.contains("table")) s.table = j["table"].get<std::string>();
    s.compute_load_pct = j.at("compute_load_pct").get<double>();
    s.timeout_s = j.at("timeout_s").get<double>();
  } catch (const json::exception& e) {
    throw UsageError(std::string("tune: --env-worker: ") + e.what());
  } catch (const Error& e) {  // a bad value, or an integer out of range or not one (core/json.hpp)
    throw UsageError(std::string("tune: --env-worker: ") + e.what());
  }
  if (s.points.empty()) throw UsageError("tune: --env-worker: no points");
  if (!(s.budget_s > 0) || s.budget_s > 60) throw UsageError("tune: --env-worker: budget_s out of (0, 60]");
  if (s.compute_load_pct < 0 || s.compute_load_pct > 100) throw UsageError("tune: --env-worker: compute_load_pct out of [0, 100]");
  return s;
}

std::string worker_line(const ProcessResult& r) {
  json j{{"time_us", r.time_us}, {"nranks", r.nranks}, {"nnodes", r.nnodes}, {"net_path", r.net_path},
         {"nccl_version", r.nccl_version},
         {"compute_load_busy_share", r.compute_load_busy_share >= 0 ? json(r.compute_load_busy_share) : json(nullptr)}};
  return kLinePrefix + j.dump() + "\n";
}

ProcessResult parse_worker_output(const std::string& out) {
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(kLinePrefix, 0) != 0) continue;
    ProcessResult r;
    try {
      json j = json::parse(line.substr(std::string(kLinePrefix).size()));
      r.time_us = j.at("time_us").get<std::vector<double>>();
      r.nranks = int_at<int>(j, "nranks");
      r.nnodes = int_at<int>(j, "nnodes");
      r.net_path = j.at("net_path").get<std::string>();
      r.nccl_version = j.at("nccl_version").get<std::string>();
      if (j.contains("compute_load_busy_share") && !j["compute_load_busy_share"].is_null())
        r.compute_load_busy_share = j["compute_load_busy_share"].get<double>();
    } catch (const json::exception& e) {
      throw Error(std::string("tune: a worker's result line is malformed: ") + e.what());
    }
    return r;
  }
  throw Error("tune: the worker printed no result line");
}

ProcessEnvMeasurer::ProcessEnvMeasurer(std::vector<std::string> launch, std::string exe, WorkerSpec base)
    : launch_(std::move(launch)), exe_(std::move(exe)), base_(std::move(base)) {}

std::vector<std::string> ProcessEnvMeasurer::argv_for(const EnvAssignment& env, double budget_s) const {
  WorkerSpec s = base_;
  s.env = env;
  s.budget_s = budget_s;
  s.seed = base_.seed * 1000003ull + static_cast<std::uint64_t>(processes_) + 1;
  std::vector<std::string> argv = launch_;
  argv.insert(argv.end(), {exe_, "tune", "--env-worker", worker_spec_json(s).dump()});
  return argv;
}

ProcessResult ProcessEnvMeasurer::run_process(const EnvAssignment& env, double budget_s) {
  const auto argv = argv_for(env, budget_s);
  ++processes_;
  // The worker's own watchdog stops a stuck collective after timeout_s; the margin covers the
  // start of the job and of NCCL.
  const int timeout_ms = static_cast<int>((base_.timeout_s + 120) * 1000);
  probe::ToolResult t = probe::run_tool(argv, timeout_ms);
  const std::string what = "tune: the measurement process with " + env.label() + " (" + argv.front() + ")";
  if (t.status == probe::ToolResult::Status::NotFound) throw Error(what + " could not start: " + t.error);
  if (t.status == probe::ToolResult::Status::TimedOut) throw Error(what + " did not finish: " + t.error);
  if (t.status != probe::ToolResult::Status::Ran) throw Error(what + " failed to start: " + t.error);
  if (t.exit_code != 0)
    throw Error(what + " exited with " + std::to_string(t.exit_code) + (t.err.empty() ? "" : ": " + t.err));
  try {
    return parse_worker_output(t.out);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + " (" + what.substr(6) + ")" + (t.err.empty() ? "" : "; stderr: " + t.err));
  }
}

std::vector<std::string> split_launch(const std::string& text) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote) {
      if (c == quote) quote = 0;
      else if (c == '\\' && quote == '"' && i + 1 < text.size()) cur += text[++i];
      else cur += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < text.size()) {
      cur += text[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(cur);
      cur.clear();
      in_word = false;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (quote) throw UsageError("tune: --launch '" + text + "' has an unterminated quote");
  if (in_word) words.push_back(cur);
  if (words.empty()) throw UsageError("tune: --launch is empty");
  return words;
}

}  // namespace fabscope::tune
