#include "probe/gpu.hpp"

#include <dlfcn.h>

#include "probe/read_util.hpp"
#include "probe/versions.hpp"

namespace fabscope::probe {

bool is_nvidia_gpu(const PciDevice& d) {
  if (d.vendor != "0x10de" || !d.class_code) return false;
  auto base_sub = *d.class_code >> 8;
  return base_sub == 0x0300 || base_sub == 0x0302;
}

DriverGpuInfo parse_driver_gpu_information(std::string_view text) {
  DriverGpuInfo out;
  for (const auto& line : core::split(text, '\n')) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    auto key = core::trim(std::string_view(line).substr(0, colon));
    auto value = std::string(core::trim(std::string_view(line).substr(colon + 1)));
    if (value.size() > 128 || !is_valid_utf8(value)) continue;
    if (key == "Model") out.name = value;
    else if (key == "GPU UUID") out.uuid = value;
  }
  return out;
}

std::vector<Gpu> collect_gpus(const core::Root& root, const std::vector<PciDevice>& pci,
                              std::vector<std::string>& notes) {
  std::vector<Gpu> out;
  (void)notes;
  for (const auto& d : pci) {  // collect_pci lists in address order
    if (!is_nvidia_gpu(d)) continue;
    Gpu g;
    g.index = static_cast<int>(out.size());
    g.pci_address = d.address;
    g.numa_node = d.numa_node;
    g.source = "pci";
    if (auto info = root.read("proc/driver/nvidia/gpus/" + d.address + "/information", 8192)) {
      auto parsed = parse_driver_gpu_information(*info);
      if (!parsed.name.empty() || !parsed.uuid.empty()) {
        g.name = std::move(parsed.name);
        g.uuid = std::move(parsed.uuid);
        g.source = "driver";
      }
    }
    out.push_back(std::move(g));
  }
  return out;
}

namespace {
// The few NVML entry points we use, declared from the documented C API (nvml.h): every call
// returns nvmlReturn_t, 0 = NVML_SUCCESS.
using nvmlDevice_t = void*;
using InitFn = int (*)();
using HandleByBusIdFn = int (*)(const char*, nvmlDevice_t*);
using StringFn = int (*)(nvmlDevice_t, char*, unsigned int);
using NvLinkStateFn = int (*)(nvmlDevice_t, unsigned int, int*);
using CudaVersionFn = int (*)(int*);
constexpr unsigned kNvmlMaxLinks = 18;   // NVML_NVLINK_MAX_LINKS (H100/H200: 18)
constexpr unsigned kNvmlStringSize = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE, NAME_V2 likewise
constexpr int kNvmlErrorNotSupported = 3;
constexpr int kNvmlErrorInvalidArgument = 2;

template <typename Fn>
Fn sym(void* h, const char* name) {
  return reinterpret_cast<Fn>(dlsym(h, name));
}
}  // namespace

namespace {
// One NVML session for the process lifetime. nvmlShutdown alone costs ~17 ms on an H200 node
// (nvmlInit_v2 ~14 ms; bench/RESULTS.md), more than the whole sysfs probe, and the driver
// releases the session at exit; keeping it also makes repeated collect() calls cheap.
struct Nvml {
  bool ready = false;
  std::string error;  // why not ready, "" when the library is simply absent
  HandleByBusIdFn by_bus = nullptr;
  StringFn get_name = nullptr, get_uuid = nullptr;
  NvLinkStateFn link_state = nullptr;
  CudaVersionFn cuda_version = nullptr;
};

const Nvml& nvml() {
  static const Nvml session = [] {
    Nvml n;
    void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return n;
    auto init = sym<InitFn>(h, "nvmlInit_v2");
    n.by_bus = sym<HandleByBusIdFn>(h, "nvmlDeviceGetHandleByPciBusId_v2");
    n.get_name = sym<StringFn>(h, "nvmlDeviceGetName");
    n.get_uuid = sym<StringFn>(h, "nvmlDeviceGetUUID");
    n.link_state = sym<NvLinkStateFn>(h, "nvmlDeviceGetNvLinkState");
    n.cuda_version = sym<CudaVersionFn>(h, "nvmlSystemGetCudaDriverVersion_v2");
    if (!n.cuda_version) n.cuda_version = sym<CudaVersionFn>(h, "nvmlSystemGetCudaDriverVersion");
    if (!init || !n.by_bus) {
      n.error = "libnvidia-ml.so.1: loaded but lacks nvmlInit_v2/nvmlDeviceGetHandleByPciBusId_v2";
    } else if (int rc = init(); rc != 0) {
      n.error = "NVML: nvmlInit_v2 failed (nvmlReturn_t " + std::to_string(rc) + "), GPU names from procfs only";
    } else {
      n.ready = true;
    }
    return n;
  }();
  return session;
}
}  // namespace

void enrich_from_nvml(std::vector<Gpu>& gpus, Versions& versions, std::vector<std::string>& notes) {
  const Nvml& n = nvml();
  if (!n.ready) {
    if (!n.error.empty()) notes.push_back(n.error);
    return;
  }
  auto by_bus = n.by_bus;
  auto get_name = n.get_name;
  auto get_uuid = n.get_uuid;
  auto link_state = n.link_state;
  if (n.cuda_version && versions.cuda_driver.empty()) {
    int code = 0;
    if (n.cuda_version(&code) == 0) versions.cuda_driver = cuda_version_string(code);
  }
  for (auto& g : gpus) {
    nvmlDevice_t dev = nullptr;
    if (by_bus(g.pci_address.c_str(), &dev) != 0 || !dev) {
      notes.push_back("NVML: no handle for GPU " + g.pci_address);
      continue;
    }
    char buf[kNvmlStringSize] = {};
    if (get_name && get_name(dev, buf, sizeof buf) == 0) g.name = buf;
    buf[0] = '\0';
    if (get_uuid && get_uuid(dev, buf, sizeof buf) == 0) g.uuid = buf;
    g.source = "nvml";
    if (link_state) {
      int total = 0, active = 0;
      bool failed = false;
      for (unsigned link = 0; link < kNvmlMaxLinks; ++link) {
        int is_active = 0;
        int rc = link_state(dev, link, &is_active);
        if (rc == 0) {
          ++total;
          if (is_active == 1) ++active;  // NVML_FEATURE_ENABLED
        } else if (rc != kNvmlErrorNotSupported && rc != kNvmlErrorInvalidArgument) {
          failed = true;  // e.g. GPU lost: leave the counts unknown
          break;
        }
      }
      // Links NVML answers "not supported" for are absent (PCIe cards have none): total 0.
      if (!failed) {
        g.nvlink_total = total;
        g.nvlink_active = active;
      } else {
        notes.push_back("NVML: NVLink state unreadable for GPU " + g.pci_address);
      }
    }
  }
}

}  // namespace fabscope::probe
