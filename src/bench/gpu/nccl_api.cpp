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
#define FABSCOPE_BIND_REQUIRED(name) bind(h, api.name, "nccl" #name, true, missing);
#define FABSCOPE_BIND_OPTIONAL(name) bind(h, api.name, "nccl" #name, false, missing);
#define FABSCOPE_BIND_UNDECLARED(name, type) FABSCOPE_BIND_OPTIONAL(name)
    FABSCOPE_NCCL_REQUIRED(FABSCOPE_BIND_REQUIRED)
    FABSCOPE_NCCL_OPTIONAL(FABSCOPE_BIND_OPTIONAL)
    FABSCOPE_NCCL_UNDECLARED(FABSCOPE_BIND_UNDECLARED)
#undef FABSCOPE_BIND_REQUIRED
#undef FABSCOPE_BIND_OPTIONAL
#undef FABSCOPE_BIND_UNDECLARED
    if (!missing.empty()) {
      error = api.library + " lacks " + missing + " (NCCL 2.10 or newer is needed)";
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
