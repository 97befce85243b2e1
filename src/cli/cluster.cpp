#include <cstdlib>
#include <iostream>

#include "cli/commands.hpp"
#include "cluster/command.hpp"
#include "cluster/pair_engine.hpp"
#include "core/args.hpp"
#include "core/error.hpp"

namespace fabscope::cli {

namespace {

core::ArgParser make_parser() {
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
      .option("--engine", "NAME",
              "pair engine: auto (rdma where both nodes have it, else tcp) | rdma | tcp | nccl (NCCL send/recv "
              "between one GPU per node; GPU builds)",
              "auto")
      .option("--launcher", "KIND",
              "how ranks find each other: mpi (mpirun, srun), env (RANK, WORLD_SIZE, MASTER_ADDR: torchrun, "
              "Kubernetes) or auto (the one the environment shows)",
              "auto")
      .option("--timeout", "S", "seconds rank 0 waits for every node to join (env launcher)", "60")
      .option("--nodes", "LIST", "node names by rank, Slurm hostlist syntax (default $SLURM_JOB_NODELIST)")
      .option("--seed", "N", "seed of the random rounds of --pairs K", "1")
      .option("--fabric", "FILE", "locate slow pairs: route them through this saved sweep (fabscope fabric --routes --save)")
      .option("--fabric-from", "RANK", "locate slow pairs: this rank sweeps the InfiniBand fabric (management access) "
              "and sends it to rank 0")
      .option("--from", "FILE", "locate the slow pairs of a saved --json result (with --fabric, or by the nodes' LLDP "
              "switches); launches nothing")
      .flag("--drain", "run the printed scontrol drain commands for failing nodes")
      .flag("--json", "print the result as JSON (schema fabscope.cluster, docs/formats.md)")
      .choices("engine", {"auto", "rdma", "tcp", "nccl"})
      .choices("launcher", {"auto", "mpi", "env"})
      .example("mpirun -np 16 --map-by ppr:1:node fabscope cluster", "16 nodes, consistency and ring pairs")
      .example("srun -N 64 --ntasks-per-node=1 --mpi=pmix fabscope cluster --pairs 4",
               "64 nodes, 4 random rounds of pairs")
      .example("RANK=$i WORLD_SIZE=4 MASTER_ADDR=n0 MASTER_PORT=29400 FABSCOPE_CLUSTER_TOKEN=t fabscope cluster",
               "the env contract, one process per node")
      .example("fabscope cluster --pairs none --json | jq '.findings[].id'", "consistency only")
      .example("srun -N 64 --ntasks-per-node=1 --mpi=pmix fabscope cluster --pairs all --fabric fabric.json",
               "the cables and switches the slow pairs share (fabric.json: fabscope fabric --routes --save)")
      .example("fabscope cluster --from run.json --fabric fabric.json", "locate a saved run's slow pairs later")
      .example("mpirun -np 8 --map-by ppr:1:node fabscope cluster --pairs all --engine rdma",
               "every pair over RDMA WRITE; a node without RDMA is reported, not measured")
      .example("mpirun -np 4 --map-by ppr:1:node fabscope cluster --pairs all --engine nccl",
               "every pair as NCCL send/recv between one GPU of each node, over the transport NCCL picks")
      .footer(std::string(core::kExitCodesHelp) +
              "\nEvery rank exits with rank 0's code. A node that never joins within --timeout is a\n"
              "cluster.node_missing failure named in the report; a wrong token, a bad launcher\n"
              "environment or a rank that cannot reach rank 0 exits 3 with the reason.");
  return args;
}

cluster::CommandSpec spec_from(const core::ArgParser& args) {
  cluster::CommandSpec s;
  s.run.pairs = cluster::parse_pairs(args.get("pairs"));
  const double pair_seconds = args.get_double("pair-seconds", 0.1, 60);
  s.run.pair_duration = std::chrono::milliseconds(static_cast<long long>(pair_seconds * 1000));
  s.join_timeout = std::chrono::seconds(args.get_int("timeout", 1, 3600));
  s.run.seed = static_cast<std::uint64_t>(args.get_int("seed", 0, (1ll << 62)));
  s.engine_mode = cluster::parse_engine_mode(args.get("engine"));
  if (s.engine_mode == cluster::EngineMode::Nccl && !cluster::nccl_engine_built())
    throw UsageError("--engine nccl: " + cluster::make_nccl_engine().note + "; use a GPU build, or --engine tcp or rdma");
  s.launch = cluster::detect_launch(args.get("launcher"), [](const char* n) { return std::getenv(n); });
  std::string node_list = args.get("nodes");
  if (node_list.empty())
    if (const char* env = std::getenv("SLURM_JOB_NODELIST")) node_list = env;
  if (!node_list.empty()) s.run.node_names = cluster::expand_hostlist(node_list);
  s.root = core::Root::from_option(args.get("root"));
  if (const char* addr = std::getenv("FABSCOPE_CLUSTER_PAIR_ADDR")) s.pair_host = addr;
  s.drain = args.has("drain");
  s.json = args.has("json");
  s.fabric = args.get("fabric");
  if (!args.get("fabric-from").empty()) {
    if (!s.fabric.empty()) throw UsageError("--fabric and --fabric-from: give one (a saved sweep, or a rank that sweeps)");
    s.fabric_from = static_cast<int>(args.get_int("fabric-from", 0, 1'000'000));
  }
  return s;
}

}  // namespace

int cmd_cluster(int argc, char** argv) {
  core::ArgParser args = make_parser();
  if (!args.parse(argc, argv, std::cout)) return 0;
  if (!args.get("from").empty()) {
    return cluster::localize_command(args.get("from"), args.get("fabric"), args.has("json"), std::cout);
  }
  return cluster::run_command(spec_from(args), std::cout, std::cerr);
}

}  // namespace fabscope::cli
