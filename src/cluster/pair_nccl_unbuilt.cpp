// A build without CUDA and NCCL has no nccl pair engine: `fabscope cluster --engine nccl` is
// refused by the command line with this reason (cli/cluster.cpp), before any node joins.
#include "cluster/pair_engine.hpp"

namespace fabscope::cluster {

bool nccl_engine_built() { return false; }

NcclEngineSetup make_nccl_engine(std::size_t) {
  return {nullptr, "", "this fabscope was built without CUDA and NCCL (FABSCOPE_WITH_CUDA=OFF or no toolkit found)"};
}

}  // namespace fabscope::cluster
