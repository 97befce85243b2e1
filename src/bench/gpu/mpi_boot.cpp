#include "bench/gpu/mpi_boot.hpp"

#include <cstdlib>

#include "core/error.hpp"

#if defined(FABSCOPE_BENCH_HAVE_MPI)
#include <mpi.h>
#endif

namespace fabscope::bench::gpu {

#if defined(FABSCOPE_BENCH_HAVE_MPI)
bool mpi_built() { return true; }

MpiWorld mpi_init() {
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) MPI_Init(nullptr, nullptr);
  MpiWorld w;
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w.rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &w.local_rank);
  MPI_Comm_size(node, &w.local_size);
  MPI_Comm_free(&node);
  return w;
}

void mpi_bcast_from_root(void* data, std::size_t bytes) {
  MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, 0, MPI_COMM_WORLD);
}

void mpi_finalize() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void mpi_abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}
#else
bool mpi_built() { return false; }
MpiWorld mpi_init() {
  throw Error("started by an MPI launcher, but this fabscope was built without MPI; rebuild with "
              "an MPI development package (e.g. libopenmpi-dev) or start it with torchrun or --launcher local");
}
void mpi_bcast_from_root(void*, std::size_t) {}
void mpi_finalize() {}
void mpi_abort(int code) { std::_Exit(code); }
#endif

}  // namespace fabscope::bench::gpu
