#pragma once
// libnccl loaded with dlopen at run time, so the fabscope binary starts (and `fabscope probe`
// works) on machines without NCCL; nccl.h supplies the types only.
#include <cuda_runtime.h>
#include <nccl.h>

#include <string>

namespace fabscope::bench::gpu {

// Every NCCL function fabscope calls, listed once: the members of NcclApi and the symbols
// nccl() looks up are both generated from these lists. A member is named as the function
// without its "nccl" prefix and typed as nccl.h declares the function.
#define FABSCOPE_NCCL_REQUIRED(X)                                                                  \
  X(GetVersion) X(GetUniqueId) X(CommInitRank) X(CommInitAll) X(CommDestroy) X(CommAbort)          \
  X(CommCount) X(CommGetAsyncError) X(GetErrorString) X(AllReduce) X(AllGather) X(ReduceScatter)   \
  X(Broadcast) X(Reduce) X(Send) X(Recv) X(GroupStart) X(GroupEnd)
// Null where the loaded NCCL is older than the version named: GetLastError 2.13,
// CommInitRankConfig 2.14, MemAlloc/MemFree and CommRegister/CommDeregister (-R 1) 2.19,
// AlltoAll 2.28 (else send/recv pairs).
#define FABSCOPE_NCCL_OPTIONAL(X)                                                          \
  X(GetLastError) X(CommInitRankConfig) X(MemAlloc) X(MemFree) X(CommRegister) X(CommDeregister) \
  X(AlltoAll)
// Optional and declared here rather than by nccl.h, whose older versions lack them: Gather and
// Scatter 2.28 (else send/recv), CommWindowRegister/Deregister 2.27 (-R 2; ncclWindow_t is an
// opaque pointer, held as void*).
#define FABSCOPE_NCCL_UNDECLARED(X)                                      \
  X(Gather, RootedFn) X(Scatter, RootedFn) X(CommWindowRegister, WindowRegisterFn) \
  X(CommWindowDeregister, WindowDeregisterFn)

struct NcclApi {
  using RootedFn = ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  using WindowRegisterFn = ncclResult_t (*)(ncclComm_t, void*, size_t, void**, int);
  using WindowDeregisterFn = ncclResult_t (*)(ncclComm_t, void*);
  std::string library;  // the file that was loaded
#define FABSCOPE_NCCL_MEMBER(name) decltype(&nccl##name) name = nullptr;
#define FABSCOPE_NCCL_TYPED_MEMBER(name, type) type name = nullptr;
  FABSCOPE_NCCL_REQUIRED(FABSCOPE_NCCL_MEMBER)
  FABSCOPE_NCCL_OPTIONAL(FABSCOPE_NCCL_MEMBER)
  FABSCOPE_NCCL_UNDECLARED(FABSCOPE_NCCL_TYPED_MEMBER)
#undef FABSCOPE_NCCL_MEMBER
#undef FABSCOPE_NCCL_TYPED_MEMBER
};

// Loads libnccl.so.2 once. Throws fabscope::Error saying what is missing.
const NcclApi& nccl();

// "ncclAllReduce failed: unhandled system error (remote process exited...)".
std::string nccl_error(const NcclApi& api, ncclResult_t rc, ncclComm_t comm, const char* what);

}  // namespace fabscope::bench::gpu
