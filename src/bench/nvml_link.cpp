#include "bench/nvml_link.hpp"

#include <dlfcn.h>

namespace fabscope::bench {

std::optional<unsigned> nvml_nvlink_version(const std::string& pci_bus_id) {
  // Declared from NVML's documented C API: nvmlReturn_t (0 = success) for every call.
  using InitFn = int (*)();
  using ByBusFn = int (*)(const char*, void**);
  using VersionFn = int (*)(void*, unsigned, unsigned*);
  void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return std::nullopt;
  auto init = reinterpret_cast<InitFn>(dlsym(h, "nvmlInit_v2"));
  auto by_bus = reinterpret_cast<ByBusFn>(dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2"));
  auto version = reinterpret_cast<VersionFn>(dlsym(h, "nvmlDeviceGetNvLinkVersion"));
  if (!init || !by_bus || !version || init() != 0) return std::nullopt;  // session kept: see probe/gpu.cpp
  void* dev = nullptr;
  if (by_bus(pci_bus_id.c_str(), &dev) != 0 || !dev) return std::nullopt;
  for (unsigned link = 0; link < 18; ++link) {  // NVML_NVLINK_MAX_LINKS on H100/H200
    unsigned v = 0;
    if (version(dev, link, &v) == 0 && v > 0) return v;
  }
  return std::nullopt;
}

}  // namespace fabscope::bench
