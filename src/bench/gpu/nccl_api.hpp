#pragma once
// libnccl loaded with dlopen at run time, so the fabscope binary starts (and `fabscope probe`
// works) on machines without NCCL; nccl.h supplies the types only.
#include <cuda_runtime.h>
#include <nccl.h>

#include <string>

namespace fabscope::bench::gpu {

struct NcclApi {
  std::string library;  // the file that was loaded
  decltype(&ncclGetVersion) GetVersion = nullptr;
  decltype(&ncclGetUniqueId) GetUniqueId = nullptr;
  decltype(&ncclCommInitRank) CommInitRank = nullptr;
  decltype(&ncclCommInitAll) CommInitAll = nullptr;
  decltype(&ncclCommDestroy) CommDestroy = nullptr;
  decltype(&ncclCommAbort) CommAbort = nullptr;
  decltype(&ncclCommCount) CommCount = nullptr;
  decltype(&ncclCommGetAsyncError) CommGetAsyncError = nullptr;
  decltype(&ncclGetErrorString) GetErrorString = nullptr;
  decltype(&ncclGetLastError) GetLastError = nullptr;  // NCCL >= 2.13; may be null
  decltype(&ncclAllReduce) AllReduce = nullptr;
  decltype(&ncclAllGather) AllGather = nullptr;
  decltype(&ncclReduceScatter) ReduceScatter = nullptr;
  decltype(&ncclBroadcast) Broadcast = nullptr;
  decltype(&ncclReduce) Reduce = nullptr;
  decltype(&ncclSend) Send = nullptr;
  decltype(&ncclRecv) Recv = nullptr;
  decltype(&ncclAlltoAll) AlltoAll = nullptr;  // NCCL >= 2.28; else send/recv pairs
  decltype(&ncclGroupStart) GroupStart = nullptr;
  decltype(&ncclGroupEnd) GroupEnd = nullptr;
  // Optional: null where the loaded NCCL is older than the version named.
  decltype(&ncclCommInitRankConfig) CommInitRankConfig = nullptr;  // 2.14
  // Declared here, not by decltype: older nccl.h files lack them.
  using RootedFn = ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  RootedFn Gather = nullptr;                                       // 2.28; else send/recv
  RootedFn Scatter = nullptr;                                      // 2.28; else send/recv
  decltype(&ncclMemAlloc) MemAlloc = nullptr;                      // 2.19; else cudaMalloc
  decltype(&ncclMemFree) MemFree = nullptr;
  decltype(&ncclCommRegister) CommRegister = nullptr;              // 2.19 (-R 1)
  decltype(&ncclCommDeregister) CommDeregister = nullptr;
  // ncclWindow_t is an opaque pointer: held as void*.
  ncclResult_t (*CommWindowRegister)(ncclComm_t, void*, size_t, void**, int) = nullptr;  // 2.27 (-R 2)
  ncclResult_t (*CommWindowDeregister)(ncclComm_t, void*) = nullptr;
};

// Loads libnccl.so.2 once. Throws fabscope::Error saying what is missing.
const NcclApi& nccl();

// "ncclAllReduce failed: unhandled system error (remote process exited...)".
std::string nccl_error(const NcclApi& api, ncclResult_t rc, ncclComm_t comm, const char* what);

}  // namespace fabscope::bench::gpu
