#pragma once
// The few MPI calls the mpi launcher needs (mpi_boot.cpp; stubs that throw when this build has
// no MPI). MPI only carries the NCCL unique id and the node-local rank; NCCL does the rest.
#include <cstddef>

namespace fabscope::bench::gpu {

struct MpiWorld {
  int rank = 0;
  int size = 1;
  int local_rank = 0;  // rank among the processes on this node (MPI_COMM_TYPE_SHARED)
  int local_size = 1;
};

bool mpi_built();
MpiWorld mpi_init();                             // MPI_Init, rank, size, node-local rank
void mpi_bcast_from_root(void* data, std::size_t bytes);  // MPI_Bcast from rank 0
void mpi_finalize();
[[noreturn]] void mpi_abort(int code);

}  // namespace fabscope::bench::gpu
