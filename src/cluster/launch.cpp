#include "cluster/launch.hpp"

#include <cerrno>
#include <cstdlib>
#include <optional>

#include "core/error.hpp"

namespace fabscope::cluster {

namespace {

std::optional<long long> env_int(const EnvFn& env, const char* name) {
  const char* v = env(name);
  if (!v || !*v) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  long long x = std::strtoll(v, &end, 10);
  if (*end != '\0' || errno) throw UsageError(std::string("cluster: ") + name + "='" + v + "' is not an integer");
  return x;
}

const char* const kMpiSize[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE"};
const char* const kMpiRank[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "MV2_COMM_WORLD_RANK"};

}  // namespace

Launch detect_launch(const std::string& requested, const EnvFn& env) {
  if (requested != "auto" && requested != "mpi" && requested != "env")
    throw UsageError("--launcher '" + requested + "': expected auto, mpi or env");
  Launch l;
  bool mpi = false;
  for (std::size_t i = 0; i < 4; ++i) {
    auto size = env_int(env, kMpiSize[i]);
    auto rank = env_int(env, kMpiRank[i]);
    if (size && rank) {
      mpi = true;
      l.world = static_cast<int>(*size);
      l.rank = static_cast<int>(*rank);
      l.evidence = std::string(kMpiSize[i]) + "=" + std::to_string(*size);
      break;
    }
  }
  const char* rank_var = env("RANK") && *env("RANK") ? "RANK" : "JOB_COMPLETION_INDEX";
  const bool has_env = env(rank_var) && *env(rank_var) && env("WORLD_SIZE") && *env("WORLD_SIZE");
  if (requested == "mpi" || (requested == "auto" && mpi && !has_env)) {
    if (!mpi)
      throw UsageError("cluster: --launcher mpi, but no MPI launcher variables (OMPI_COMM_WORLD_SIZE, PMIX_SIZE, "
                       "PMI_SIZE) are set: start it with mpirun or srun --mpi=pmix");
    l.kind = "mpi";
  } else {
    if (!has_env) {
      if (requested == "auto" && !mpi)
        throw UsageError("cluster: no launcher found. Start one fabscope per node with mpirun/srun, or set RANK "
                         "(or JOB_COMPLETION_INDEX), WORLD_SIZE, MASTER_ADDR and MASTER_PORT on every node");
      throw UsageError("cluster: --launcher env needs RANK (or JOB_COMPLETION_INDEX) and WORLD_SIZE");
    }
    l.kind = "env";
    l.rank = static_cast<int>(*env_int(env, rank_var));
    l.world = static_cast<int>(*env_int(env, "WORLD_SIZE"));
    const char* addr = env("MASTER_ADDR");
    if (!addr || !*addr) throw UsageError("cluster: MASTER_ADDR is not set (the address of the rank-0 node)");
    l.master_addr = addr;
    auto port = env_int(env, "FABSCOPE_CLUSTER_PORT");
    std::string port_var = "FABSCOPE_CLUSTER_PORT";
    if (!port) {
      port = env_int(env, "MASTER_PORT");
      port_var = "MASTER_PORT";
      if (!port) throw UsageError("cluster: MASTER_PORT is not set (or set FABSCOPE_CLUSTER_PORT)");
      // torchrun's agent already listens on MASTER_PORT (its TCPStore), the bench's NCCL bootstrap on +1.
      if (env("TORCHELASTIC_RUN_ID") && *env("TORCHELASTIC_RUN_ID")) *port += 2, port_var = "MASTER_PORT+2";
    }
    if (*port < 1 || *port > 65535)
      throw UsageError("cluster: " + port_var + "=" + std::to_string(*port) + " is not a TCP port");
    l.port = static_cast<int>(*port);
    const char* tok = env("FABSCOPE_CLUSTER_TOKEN");
    l.token_source = "FABSCOPE_CLUSTER_TOKEN";
    if (!tok || !*tok) tok = env("SLURM_JOB_ID"), l.token_source = "SLURM_JOB_ID";
    if (!tok || !*tok)
      throw UsageError("cluster: no shared token: set FABSCOPE_CLUSTER_TOKEN to one value on every node "
                       "(under Slurm, SLURM_JOB_ID serves)");
    l.token = tok;
    l.evidence = std::string(rank_var) + "/WORLD_SIZE=" + std::to_string(l.rank) + "/" + std::to_string(l.world) +
                 " MASTER_ADDR=" + l.master_addr + " " + port_var + "=" + std::to_string(l.port);
  }
  if (l.world < 1) throw UsageError("cluster: world size " + std::to_string(l.world) + " must be at least 1");
  if (l.world > 100000) throw UsageError("cluster: world size " + std::to_string(l.world) + " is over 100,000");
  if (l.rank < 0 || l.rank >= l.world)
    throw UsageError("cluster: rank " + std::to_string(l.rank) + " is outside the world size " + std::to_string(l.world));
  return l;
}

}  // namespace fabscope::cluster
