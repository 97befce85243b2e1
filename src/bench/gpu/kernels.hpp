#pragma once
// Input initialisation and the reference check on the GPU (kernels.cu), both from the
// formulas of reference.hpp.
#include <cuda_runtime.h>

#include <cstddef>

#include "bench/collectives.hpp"
#include "bench/types.hpp"

namespace fabscope::bench::gpu {

struct VerifyArgs {
  Collective coll;
  RedOp op;
  DataType type;
  int nranks;
  int rank;
  int root;
  std::size_t per_rank;  // the plan's param_count
};

// Keeps the stream busy for `us` microseconds (GPU timer), so the work enqueued behind it is
// already queued when the GPU reaches it.
cudaError_t launch_delay(double us, cudaStream_t s);
// buf[i] = input_value(op, rank, i) for i < count, converted to type.
cudaError_t launch_fill(void* buf, DataType type, std::size_t count, RedOp op, int rank, cudaStream_t s);
// Adds to *wrong the elements of buf[0, count) that differ from the reference.
cudaError_t launch_verify(const void* buf, std::size_t count, const VerifyArgs& args,
                          unsigned long long* wrong, cudaStream_t s);

}  // namespace fabscope::bench::gpu
