// fabscope-mpi.so: the MPI calls of the mpi launcher, in a plugin that `fabscope bench` opens
// only when an MPI launcher started it. The fabscope binary itself has no NEEDED entry for
// libmpi: linking it there made every command (doctor, the exporter) load Open MPI, hwloc and
// libevent at start, 2 MiB more resident memory, and fail to start where the MPI runtime is not
// installed. C entry points, so the binary needs no MPI header.
#include <mpi.h>

#include <cstddef>
#include <cstdlib>

extern "C" {

__attribute__((visibility("default"))) int fabscope_mpi_init(int* rank, int* size, int* local_rank,
                                                             int* local_size) {
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited && MPI_Init(nullptr, nullptr) != MPI_SUCCESS) return 1;
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, *rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, local_rank);
  MPI_Comm_size(node, local_size);
  MPI_Comm_free(&node);
  return 0;
}

__attribute__((visibility("default"))) int fabscope_mpi_bcast_from_root(void* data, std::size_t bytes) {
  return MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, 0, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : 1;
}

__attribute__((visibility("default"))) void fabscope_mpi_finalize() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

__attribute__((visibility("default"))) void fabscope_mpi_abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // extern "C"
