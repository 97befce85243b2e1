// fabscope-mpi.so: the MPI calls of the mpi launcher, in a plugin that `fabscope bench` opens
// only when an MPI launcher started it. The fabscope binary itself has no NEEDED entry for
// libmpi: linking it there made every command (doctor, the exporter) load Open MPI, hwloc and
// libevent at start, 2 MiB more resident memory, and fail to start where the MPI runtime is not
// installed. C entry points, so the binary needs no MPI header.
#include <mpi.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

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

// fabscope cluster: every rank's byte blob to rank 0. Two steps so the caller owns the memory:
// fabscope_mpi_gather_sizes (every rank; rank 0 gets one size per rank in sizes[size]), then
// fabscope_mpi_gatherv (rank 0 passes a buffer of the sum of the sizes). MPI counts are int: a
// total above INT_MAX is refused (returns 2) instead of truncated.
__attribute__((visibility("default"))) int fabscope_mpi_gather_sizes(std::uint64_t mine, std::uint64_t* sizes) {
  return MPI_Gather(&mine, 1, MPI_UINT64_T, sizes, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : 1;
}

__attribute__((visibility("default"))) int fabscope_mpi_gatherv(const void* data, std::uint64_t bytes, void* out,
                                                                const std::uint64_t* sizes) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (bytes > INT_MAX) return 2;
  std::vector<int> counts, displs;
  if (rank == 0) {
    std::uint64_t total = 0;
    for (int i = 0; i < size; ++i) {
      if (sizes[i] > INT_MAX || total > INT_MAX) return 2;
      counts.push_back(static_cast<int>(sizes[i]));
      displs.push_back(static_cast<int>(total));
      total += sizes[i];
    }
    if (total > INT_MAX) return 2;
  }
  return MPI_Gatherv(data, static_cast<int>(bytes), MPI_BYTE, out, counts.data(), displs.data(), MPI_BYTE, 0,
                     MPI_COMM_WORLD) == MPI_SUCCESS
             ? 0
             : 1;
}

__attribute__((visibility("default"))) int fabscope_mpi_barrier() {
  return MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : 1;
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
