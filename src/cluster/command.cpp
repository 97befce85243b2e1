#include "cluster/command.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "checks/checks.hpp"
#include "cluster/exchange.hpp"
#include "cluster/fabric_share.hpp"
#include "cluster/pair_engine.hpp"
#include "cluster/render.hpp"
#include "core/error.hpp"
#include "ncclenv/collect.hpp"
#include "ncclenv/plan.hpp"
#include "probe/probe.hpp"
#include "cluster/saved.hpp"
#include "core/files.hpp"
#include "core/strings.hpp"
#include "checks/render.hpp"
#include "fabric/model.hpp"
#include "fabric/routes.hpp"
#include "fabric/sweep.hpp"

namespace fabscope::cluster {

namespace {

// Runs scontrol without a shell; returns its exit status (127 when it cannot be started).
int run_argv(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) return 127;
  if (pid == 0) {
    ::execvp(args[0], args.data());
    std::_Exit(127);
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) < 0) return 127;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

std::string this_hostname() {
  char host[256] = "";
  ::gethostname(host, sizeof host - 1);
  return host;
}

// This node, judged here: only its summary travels. A node that cannot probe itself still
// joins, its summary carrying the error.
NodeSummary summarize_this_node(const core::Root& root, const Launch& launch) {
  try {
    NodeInfo node = probe::collect(root);
    ncclenv::PlanOptions po;
    po.master_addr = launch.master_addr;
    po.default_route_ifaces = ncclenv::default_route_interfaces(root);
    const ncclenv::EnvPlan plan = ncclenv::plan(node, po);
    if (node.hostname.empty()) node.hostname = this_hostname();
    return summarize_node(launch.rank, node, &plan, checks::run(node));
  } catch (const Error& e) {
    NodeSummary mine;
    mine.name = this_hostname();
    mine.fabscope_version = FABSCOPE_VERSION;
    mine.error = e.what();
    return mine;
  }
}

void warn_about_token(const Launch& launch, std::ostream& err) {
  if (launch.kind == "env" && launch.token_source == "SLURM_JOB_ID")
    err << "fabscope cluster: warning: the only shared secret is SLURM_JOB_ID, which every user of the "
           "cluster can read (squeue): anyone could join this run or take a pair's place. Set "
           "FABSCOPE_CLUSTER_TOKEN to a secret value on every node (docs/cluster.md)\n";
}

// MPI under mpirun/srun, else the TCP star of the env contract. Each of its steps may wait for
// the pairs of a round: the step timeout covers them.
std::unique_ptr<Exchange> make_exchange(const CommandSpec& spec, const std::string& name) {
  const Launch& launch = spec.launch;
  if (launch.kind == "mpi") return make_mpi_exchange();
  TcpOptions to;
  to.rank = launch.rank;
  to.world = launch.world;
  to.master_addr = launch.master_addr;
  to.master_port = launch.port;
  to.token = launch.token;
  to.name = name;
  to.join_timeout = spec.join_timeout;
  to.step_timeout = spec.join_timeout + 4 * spec.run.pair_duration;
  if (spec.engine_mode == EngineMode::Nccl && spec.run.pairs.mode != PairsMode::None)
    to.step_timeout += kNcclPairAllowance;
  else if (spec.engine_mode != EngineMode::Tcp && spec.run.pairs.mode != PairsMode::None)
    to.step_timeout += kRdmaPairAllowance;
  return make_tcp_exchange(to);
}

// The engines this node opens; view points into them.
struct OwnedEngines {
  std::unique_ptr<PairEngine> tcp;
  RdmaEngineSetup rdma;
  NcclEngineSetup nccl;
  PairEngines view;
};

// Every node offers what it has; each pair takes the engine both ends offer (engine_choice.hpp).
OwnedEngines open_engines(const CommandSpec& spec, Exchange& ex) {
  OwnedEngines e;
  e.view.mode = spec.engine_mode;
  if (spec.run.pairs.mode == PairsMode::None) return e;
  if (spec.engine_mode == EngineMode::Nccl) {  // NCCL alone: no tcp or rdma endpoint is opened
    e.nccl = make_nccl_engine();
    e.view.nccl = e.nccl.engine.get();
    e.view.nccl_device = e.nccl.device;
    e.view.nccl_note = e.nccl.note;
    return e;
  }
  const std::string host = spec.pair_host.empty() ? ex.local_address() : spec.pair_host;
  if (spec.engine_mode != EngineMode::Rdma) e.tcp = make_tcp_engine(host);
  if (spec.engine_mode != EngineMode::Tcp) e.rdma = make_rdma_engine(host);
  else e.rdma.note = "--engine tcp";
  e.view.tcp = e.tcp.get();
  e.view.rdma = e.rdma.engine.get();
  e.view.rdma_note = e.rdma.note;
  return e;
}

// Runs every drain command; false when one failed (named on err).
bool run_drain(const ClusterResult& r, std::ostream& err) {
  bool ran = true;
  for (const auto& argv : drain_argv(r))
    if (run_argv(argv) != 0) {
      err << "fabscope cluster: scontrol failed for " << argv[2] << "\n";
      ran = false;
    }
  return ran;
}

// Rank 0: judges, drains when asked, prints; returns the exit code.
int report(ClusterInput input, const CommandSpec& spec, std::ostream& out, std::ostream& err) {
  const ClusterResult r = judge(std::move(input));
  const bool ran = spec.drain && !r.drain.empty() && run_drain(r, err);
  if (spec.json) {
    json j = cluster_json(r);
    j["drain_ran"] = ran;
    out << dump_json(j) << "\n";
  } else {
    out << render_text(r, ran);
  }
  out.flush();
  return exit_code(r);
}

// Every rank leaves with rank 0's verdict (srun and mpirun report the worst rank's code).
int rank0_code(Exchange& ex, int code) {
  const std::string c = ex.broadcast(std::to_string(code));
  return ex.rank() != 0 ? std::atoi(c.c_str()) : code;
}

}  // namespace

int run_command(const CommandSpec& spec, std::ostream& out, std::ostream& err) {
  NodeSummary mine = summarize_this_node(spec.root, spec.launch);
  warn_about_token(spec.launch, err);
  const std::unique_ptr<Exchange> ex = make_exchange(spec, mine.name);
  // --fabric is read by rank 0 before the pairs run, so a bad file is said at once; the pairs are
  // measured and judged anyway, only not located.
  std::shared_ptr<const fabric::Subnet> fabric;
  std::string fabric_error;
  if (ex->rank() == 0 && !spec.fabric.empty()) {
    try {
      fabric = std::make_shared<const fabric::Subnet>(fabric::load_subnet(spec.fabric));
      if (!fabric::has_routes(*fabric))
        err << "fabscope cluster: --fabric " << spec.fabric
            << " has no forwarding tables (save it with `fabscope fabric --routes --save`): the slow pairs "
               "will not be located\n";
    } catch (const std::exception& e) {
      fabric_error = std::string("--fabric: ") + e.what();
      err << "fabscope cluster: " << fabric_error << " (the pairs are measured, not located)\n";
    }
  }
  const OwnedEngines engines = open_engines(spec, *ex);
  auto input = run_cluster(*ex, std::move(mine), engines.view, spec.run);
  // --fabric-from: every rank takes part in moving that rank's sweep to rank 0.
  if (spec.fabric_from >= 0) {
    SharedFabric shared = share_fabric(*ex, spec.fabric_from, [] {
      fabric::SweepOptions o;
      o.routes = true;
      o.counters = false;
      return fabric::sweep(o);
    });
    fabric = std::move(shared.fabric);
    fabric_error = std::move(shared.error);
    if (ex->rank() == 0 && !fabric_error.empty())
      err << "fabscope cluster: " << fabric_error << " (the pairs are measured, not located)\n";
  }
  if (input) {
    input->fabric = std::move(fabric);
    input->fabric_error = std::move(fabric_error);
  }
  const int code = input ? report(std::move(*input), spec, out, err) : 0;
  return rank0_code(*ex, code);
}

int localize_command(const std::string& from, const std::string& fabric_path, bool as_json, std::ostream& out) {
  SavedRun run;
  {
    const std::string body = core::read_input(from, 512u << 20);
    json doc;
    try {
      doc = parse_input_json(body);  // a key twice is refused, as every saved file's reader does
    } catch (const json::parse_error&) {
      throw Error(from + ": not JSON (expected the output of fabscope cluster --json)");
    } catch (const Error& e) {
      throw Error(from + ": " + e.what());
    }
    try {
      run = saved_run_from_json(doc);
    } catch (const Error& e) {
      throw Error(from + ": " + e.what());
    }
  }
  const Localization l =
      fabric_path.empty() ? localize_saved(run) : localize_saved(run, fabric::load_subnet(fabric_path));
  std::vector<Finding> findings = localization_findings(l, run.names);
  const int code = exit_code_for(findings);
  if (as_json) {
    out << dump_json(json{{"schema", "fabscope.cluster.localization"},
                          {"schema_version", 1},
                          {"from", from},
                          {"fabric", fabric_path},
                          {"engine", run.engine},
                          {"localization", localization_json(l, run.names)},
                          {"findings", findings},
                          {"exit_code", code}})
        << "\n";
    return code;
  }
  out << "cluster result " << from << ": " << run.nodes.size() << " node(s), " << run.pairs.size() << " pair(s) over "
      << (run.engine.empty() ? "no engine" : run.engine) << "\n";
  out << core::printable_lines(render_localization(l, run.names));
  out << "\n" << (findings.empty() ? "no findings\n" : checks::render_findings(findings, 100, true));
  return code;
}

}  // namespace fabscope::cluster
