// The GPU side when this build has no CUDA toolkit or NCCL: every entry point explains that.
#include "bench/run.hpp"
#include "core/error.hpp"

namespace fabscope::bench {

GpuSupport gpu_support() {
  GpuSupport s;
  s.missing =
      "this fabscope was built without the GPU benchmark: the CUDA toolkit (nvcc) and NCCL "
      "(nccl.h, libnccl) were not found at configure time, or FABSCOPE_WITH_CUDA=OFF. Rebuild on a "
      "machine with both (e.g. packages cuda-toolkit and libnccl-dev, or NCCL_HOME=DIR).";
  return s;
}

int visible_gpus(std::string* why_none) {
  if (why_none) *why_none = gpu_support().missing;
  return 0;
}

std::unique_ptr<Session> Session::open(const Options&) { throw Error(gpu_support().missing); }

void abort_mpi_job_if_active(const std::string&, std::ostream&, int) {}

}  // namespace fabscope::bench
