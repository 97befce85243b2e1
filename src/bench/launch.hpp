#pragma once
// Which launcher started this process, from the environment alone (pure: the environment is
// passed in, so tests need no real mpirun or torchrun).
//   local     one process drives every GPU it was given (ncclCommInitRankConfig in a group)
//   mpi       mpirun/srun: one GPU per rank, the NCCL id is broadcast with MPI_Bcast
//   torchrun  RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT: one GPU per rank; NCCL
//             bootstraps itself through NCCL_COMM_ID=MASTER_ADDR:port (rank 0 hosts NCCL's
//             bootstrap root), so no other rendezvous service is involved.
#include <functional>
#include <optional>
#include <string>

namespace fabscope::bench {

enum class Launcher { Auto, Local, Mpi, Torchrun };
std::string launcher_name(Launcher l);
std::optional<Launcher> parse_launcher(const std::string& text);

using EnvFn = std::function<const char*(const char*)>;
EnvFn process_env();

struct LaunchInfo {
  Launcher kind = Launcher::Local;
  int rank = 0;          // from the environment (MPI: checked again against MPI at run time)
  int world = 1;         // ranks in the job (local: set from the GPU count at run time)
  int local_rank = 0;
  int local_world = 1;   // ranks on this node, when the launcher says
  std::string master_addr;
  int master_port = 0;
  std::string nccl_comm_id;  // torchrun: "MASTER_ADDR:port" for NCCL_COMM_ID
  bool comm_id_from_user = false;  // NCCL_COMM_ID was already set
  std::string evidence;      // "OMPI_COMM_WORLD_SIZE=2", "RANK/WORLD_SIZE=0/2" ...
};

// Throws fabscope::UsageError naming the variable when the environment is inconsistent
// (torchrun variables missing or out of range, a rank outside the world, a bad port).
// nccl_port: the NCCL bootstrap port for torchrun; 0 = MASTER_PORT + 1 (torchrun's own store
// listens on MASTER_PORT).
LaunchInfo detect_launch(Launcher requested, const EnvFn& env, int nccl_port = 0);

}  // namespace fabscope::bench
