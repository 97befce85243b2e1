#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "checks/checks.hpp"
#include "cli/commands.hpp"
#include "cluster/exchange.hpp"
#include "cluster/launch.hpp"
#include "cluster/pair_engine.hpp"
#include "cluster/render.hpp"
#include "cluster/run.hpp"
#include "core/args.hpp"
#include "core/error.hpp"
#include "core/root.hpp"
#include "ncclenv/collect.hpp"
#include "ncclenv/plan.hpp"
#include "probe/probe.hpp"

namespace fabscope::cli {

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

}  // namespace

int cmd_cluster(int argc, char** argv) {
  core::ArgParser args(
      "cluster",
      "Validate many nodes at once. Start one fabscope per node (mpirun, srun, torchrun --no-python, a\n"
      "Kubernetes Indexed Job); rank 0 gathers every node's probe and check, reports the attributes\n"
      "that differ (firmware, rate, MTU, GID index, versions, GPUDirect RDMA, the NCCL env plan) with\n"
      "the majority as reference, measures pairs of nodes in rounds of disjoint pairs, and tells a\n"
      "slow node from a slow link. Without MPI: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and a\n"
      "shared token (FABSCOPE_CLUSTER_TOKEN, or SLURM_JOB_ID). Only rank 0 prints. docs/cluster.md.");
  args.option("--root", "DIR", "read sys/ and proc/ under DIR instead of / (env FABSCOPE_ROOT)")
      .option("--pairs", "MODE", "all | ring | K (random rounds) | none", "ring")
      .option("--pair-seconds", "S", "seconds per direction of each pair test (0.1-60)", "2")
      .option("--engine", "NAME", "pair engine: auto (rdma where both nodes have it, else tcp) | rdma | tcp",
              "auto")
      .option("--launcher", "KIND", "auto | mpi | env", "auto")
      .option("--timeout", "S", "seconds rank 0 waits for every node to join (env launcher)", "60")
      .option("--nodes", "LIST", "node names by rank, Slurm hostlist syntax (default $SLURM_JOB_NODELIST)")
      .option("--seed", "N", "seed of the random rounds of --pairs K", "1")
      .flag("--drain", "run the printed scontrol drain commands for failing nodes")
      .flag("--json", "print the result as JSON (schema fabscope.cluster, docs/formats.md)")
      .choices("engine", {"auto", "rdma", "tcp"})
      .choices("launcher", {"auto", "mpi", "env"})
      .example("mpirun -np 16 --map-by ppr:1:node fabscope cluster", "16 nodes, consistency and ring pairs")
      .example("srun -N 64 --ntasks-per-node=1 --mpi=pmix fabscope cluster --pairs 4",
               "64 nodes, 4 random rounds of pairs")
      .example("RANK=$i WORLD_SIZE=4 MASTER_ADDR=n0 MASTER_PORT=29400 FABSCOPE_CLUSTER_TOKEN=t fabscope cluster",
               "the env contract, one process per node")
      .example("fabscope cluster --pairs none --json | jq '.findings[].id'", "consistency only")
      .example("mpirun -np 8 --map-by ppr:1:node fabscope cluster --pairs all --engine rdma",
               "every pair over RDMA WRITE; a node without RDMA is reported, not measured")
      .footer(std::string(core::kExitCodesHelp) +
              "\nEvery rank exits with rank 0's code. A node that never joins within --timeout is a\n"
              "cluster.node_missing failure named in the report; a wrong token, a bad launcher\n"
              "environment or a rank that cannot reach rank 0 exits 3 with the reason.");
  if (!args.parse(argc, argv, std::cout)) return 0;
  const cluster::PairsSpec pairs = cluster::parse_pairs(args.get("pairs"));
  const double pair_seconds = args.get_double("pair-seconds", 0.1, 60);
  const long long timeout_s = args.get_int("timeout", 1, 3600);
  const long long seed = args.get_int("seed", 0, (1ll << 62));
  const cluster::EngineMode engine_mode = cluster::parse_engine_mode(args.get("engine"));
  const cluster::Launch launch = cluster::detect_launch(args.get("launcher"), [](const char* n) { return std::getenv(n); });

  std::string node_list = args.get("nodes");
  if (node_list.empty())
    if (const char* s = std::getenv("SLURM_JOB_NODELIST")) node_list = s;
  cluster::RunOptions ro;
  ro.pairs = pairs;
  ro.seed = static_cast<std::uint64_t>(seed);
  ro.pair_duration = std::chrono::milliseconds(static_cast<long long>(pair_seconds * 1000));
  if (!node_list.empty()) ro.node_names = cluster::expand_hostlist(node_list);

  // This node, judged here: only its summary travels.
  const auto root = core::Root::from_option(args.get("root"));
  cluster::NodeSummary mine;
  try {
    NodeInfo node = probe::collect(root);
    ncclenv::PlanOptions po;
    po.master_addr = launch.master_addr;
    po.default_route_ifaces = ncclenv::default_route_interfaces(root);
    const ncclenv::EnvPlan plan = ncclenv::plan(node, po);
    if (node.hostname.empty()) {
      char host[256] = "";
      ::gethostname(host, sizeof host - 1);
      node.hostname = host;
    }
    mine = cluster::summarize_node(launch.rank, node, &plan, checks::run(node));
  } catch (const Error& e) {
    char host[256] = "";
    ::gethostname(host, sizeof host - 1);
    mine.name = host;
    mine.fabscope_version = FABSCOPE_VERSION;
    mine.error = e.what();
  }

  if (launch.kind == "env" && launch.token_source == "SLURM_JOB_ID")
    std::cerr << "fabscope cluster: warning: the only shared secret is SLURM_JOB_ID, which every user of the "
                 "cluster can read (squeue): anyone could join this run or take a pair's place. Set "
                 "FABSCOPE_CLUSTER_TOKEN to a secret value on every node (docs/cluster.md)\n";
  std::unique_ptr<cluster::Exchange> ex;
  if (launch.kind == "mpi") {
    ex = cluster::make_mpi_exchange();
  } else {
    cluster::TcpOptions to;
    to.rank = launch.rank;
    to.world = launch.world;
    to.master_addr = launch.master_addr;
    to.master_port = launch.port;
    to.token = launch.token;
    to.name = mine.name;
    to.join_timeout = std::chrono::seconds(timeout_s);
    to.step_timeout = std::chrono::seconds(timeout_s) + 4 * ro.pair_duration;
    if (engine_mode != cluster::EngineMode::Tcp && pairs.mode != cluster::PairsMode::None)
      to.step_timeout += cluster::kRdmaPairAllowance;
    ex = cluster::make_tcp_exchange(to);
  }
  // Every node offers what it has; each pair takes the engine both ends offer (engine_choice.hpp).
  std::unique_ptr<cluster::PairEngine> tcp;
  cluster::RdmaEngineSetup rdma;
  cluster::PairEngines engines;
  engines.mode = engine_mode;
  if (pairs.mode != cluster::PairsMode::None) {
    const char* addr = std::getenv("FABSCOPE_CLUSTER_PAIR_ADDR");
    const std::string host = addr && *addr ? addr : ex->local_address();
    if (engine_mode != cluster::EngineMode::Rdma) tcp = cluster::make_tcp_engine(host);
    if (engine_mode != cluster::EngineMode::Tcp) rdma = cluster::make_rdma_engine(host);
    else rdma.note = "--engine tcp";
    engines.tcp = tcp.get();
    engines.rdma = rdma.engine.get();
    engines.rdma_note = rdma.note;
  }
  auto input = cluster::run_cluster(*ex, std::move(mine), engines, ro);
  int code = 0;
  if (input) {
    cluster::ClusterResult r = cluster::judge(std::move(*input));
    code = cluster::exit_code(r);
    bool ran = false;
    if (args.has("drain") && !r.drain.empty()) {
      ran = true;
      for (const auto& argv_ : cluster::drain_argv(r))
        if (run_argv(argv_) != 0) {
          std::cerr << "fabscope cluster: scontrol failed for " << argv_[2] << "\n";
          ran = false;
        }
    }
    if (args.has("json")) {
      json j = cluster::cluster_json(r);
      j["drain_ran"] = ran;
      std::cout << dump_json(j) << "\n";
    } else {
      std::cout << cluster::render_text(r, ran);
    }
    std::cout.flush();
  }
  // Every rank leaves with rank 0's verdict (srun and mpirun report the worst rank's code).
  std::string c = ex->broadcast(std::to_string(code));
  if (ex->rank() != 0) code = std::atoi(c.c_str());
  return code;
}

}  // namespace fabscope::cli
