#pragma once
// How this `fabscope cluster` process was started, from the environment alone (pure: the
// environment comes in as a function, so tests need no launcher).
//   mpi  mpirun / srun --mpi: OMPI_COMM_WORLD_*, PMIX_*, PMI_*, MV2_* (the exchange is MPI)
//   env  RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT: torchrun --no-python, Kubernetes Indexed
//        Jobs (JOB_COMPLETION_INDEX serves as RANK), or set by hand (the exchange is TCP)
#include <functional>
#include <string>
#include <vector>

#include "core/hostlist.hpp"

namespace fabscope::cluster {

using EnvFn = std::function<const char*(const char*)>;

struct Launch {
  std::string kind;  // "mpi" | "env"
  int rank = 0, world = 1;
  std::string master_addr;
  int port = 0;       // the exchange's port: FABSCOPE_CLUSTER_PORT, else MASTER_PORT (+2 under torchrun)
  std::string token;  // FABSCOPE_CLUSTER_TOKEN, else SLURM_JOB_ID
  // Where the token came from. SLURM_JOB_ID is no secret (every user of the cluster reads it
  // with squeue): the command warns when it is the only one.
  std::string token_source;
  std::string evidence;
};

// requested: "auto", "mpi" or "env". Throws UsageError naming the variable that is missing or
// out of range.
Launch detect_launch(const std::string& requested, const EnvFn& env);

// Slurm's hostlist syntax (core/hostlist.hpp).
using core::expand_hostlist;

}  // namespace fabscope::cluster
