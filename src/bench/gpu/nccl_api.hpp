#pragma once
// libnccl loaded with dlopen at run time, so the fabscope binary starts (and `fabscope probe`
// works) on machines without NCCL; nccl.h supplies the types only.
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
};

// Loads libnccl.so.2 once. Throws fabscope::Error saying what is missing.
const NcclApi& nccl();

// "ncclAllReduce failed: unhandled system error (remote process exited...)".
std::string nccl_error(const NcclApi& api, ncclResult_t rc, ncclComm_t comm, const char* what);

}  // namespace fabscope::bench::gpu
