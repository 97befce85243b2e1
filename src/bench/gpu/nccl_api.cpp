#include "bench/gpu/nccl_api.hpp"

#include <dlfcn.h>

#include "core/error.hpp"

namespace fabscope::bench::gpu {

namespace {
template <typename Fn>
void bind(void* h, Fn& fn, const char* name, bool required, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(h, name));
  if (!fn && required) missing += (missing.empty() ? "" : ", ") + std::string(name);
}
}  // namespace

const NcclApi& nccl() {
  static NcclApi api;
  static std::string error;
  static bool loaded = [] {
    void* h = nullptr;
    std::string tried;
    for (const char* lib : {"libnccl.so.2", "libnccl.so"}) {
      h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
      if (h) {
        api.library = lib;
        break;
      }
      const char* e = dlerror();
      tried += std::string(tried.empty() ? "" : "; ") + (e ? e : lib);
    }
    if (!h) {
      error = "NCCL is not installed or not on the library path (" + tried +
              "). Install NCCL (package libnccl2) or add its lib directory to LD_LIBRARY_PATH.";
      return false;
    }
    std::string missing;
    bind(h, api.GetVersion, "ncclGetVersion", true, missing);
    bind(h, api.GetUniqueId, "ncclGetUniqueId", true, missing);
    bind(h, api.CommInitRank, "ncclCommInitRank", true, missing);
    bind(h, api.CommInitAll, "ncclCommInitAll", true, missing);
    bind(h, api.CommDestroy, "ncclCommDestroy", true, missing);
    bind(h, api.CommAbort, "ncclCommAbort", true, missing);
    bind(h, api.CommCount, "ncclCommCount", true, missing);
    bind(h, api.CommGetAsyncError, "ncclCommGetAsyncError", true, missing);
    bind(h, api.GetErrorString, "ncclGetErrorString", true, missing);
    bind(h, api.GetLastError, "ncclGetLastError", false, missing);
    bind(h, api.AllReduce, "ncclAllReduce", true, missing);
    bind(h, api.AllGather, "ncclAllGather", true, missing);
    bind(h, api.ReduceScatter, "ncclReduceScatter", true, missing);
    bind(h, api.Broadcast, "ncclBroadcast", true, missing);
    bind(h, api.Reduce, "ncclReduce", true, missing);
    bind(h, api.Send, "ncclSend", true, missing);
    bind(h, api.Recv, "ncclRecv", true, missing);
    bind(h, api.AlltoAll, "ncclAlltoAll", false, missing);
    bind(h, api.GroupStart, "ncclGroupStart", true, missing);
    bind(h, api.GroupEnd, "ncclGroupEnd", true, missing);
    bind(h, api.CommInitRankConfig, "ncclCommInitRankConfig", false, missing);
    bind(h, api.Gather, "ncclGather", false, missing);
    bind(h, api.Scatter, "ncclScatter", false, missing);
    bind(h, api.MemAlloc, "ncclMemAlloc", false, missing);
    bind(h, api.MemFree, "ncclMemFree", false, missing);
    bind(h, api.CommRegister, "ncclCommRegister", false, missing);
    bind(h, api.CommDeregister, "ncclCommDeregister", false, missing);
    bind(h, api.CommWindowRegister, "ncclCommWindowRegister", false, missing);
    bind(h, api.CommWindowDeregister, "ncclCommWindowDeregister", false, missing);
    if (!missing.empty()) {
      error = "" + api.library + " lacks " + missing + " (NCCL 2.10 or newer is needed)";
      return false;
    }
    return true;
  }();
  if (!loaded) throw Error(error);
  return api;
}

std::string nccl_error(const NcclApi& api, ncclResult_t rc, ncclComm_t comm, const char* what) {
  std::string msg = std::string(what) + " failed: " + api.GetErrorString(rc);
  if (api.GetLastError) {
    const char* last = api.GetLastError(comm);
    if (last && *last) msg += " (" + std::string(last) + ")";
  }
  return msg;
}

}  // namespace fabscope::bench::gpu
