#include "probe/gpu.hpp"

#include <dlfcn.h>

#include "probe/nvlink.hpp"
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
// The NVML entry points we use, declared from the documented C API (nvml.h): every call returns
// nvmlReturn_t, 0 = NVML_SUCCESS. scripts/device-nvml-capture.c declares the same ones.
using nvmlDevice_t = void*;
struct NvmlPciInfo {  // nvmlPciInfo_t
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
struct NvmlFieldValue {  // nvmlFieldValue_t
  unsigned field_id, scope_id;
  long long timestamp, latency_usec;
  int value_type, nvml_return;
  union {
    double d;
    unsigned ui;
    unsigned long ul;
    unsigned long long ull;
    long long sll;
    int si;
  } value;
};
using InitFn = int (*)();
using HandleByBusIdFn = int (*)(const char*, nvmlDevice_t*);
using StringFn = int (*)(nvmlDevice_t, char*, unsigned int);
using NvLinkStateFn = int (*)(nvmlDevice_t, unsigned int, int*);
using NvLinkVersionFn = int (*)(nvmlDevice_t, unsigned int, unsigned int*);
using NvLinkRemotePciFn = int (*)(nvmlDevice_t, unsigned int, NvmlPciInfo*);
using NvLinkRemoteTypeFn = int (*)(nvmlDevice_t, unsigned int, int*);
using NvLinkErrorFn = int (*)(nvmlDevice_t, unsigned int, int, unsigned long long*);
using FieldValuesFn = int (*)(nvmlDevice_t, int, NvmlFieldValue*);
using P2PStatusFn = int (*)(nvmlDevice_t, nvmlDevice_t, int, int*);
using AncestorFn = int (*)(nvmlDevice_t, nvmlDevice_t, int*);
using CudaVersionFn = int (*)(int*);
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
  NvLinkVersionFn link_version = nullptr;
  NvLinkRemotePciFn link_remote = nullptr;
  NvLinkRemoteTypeFn link_remote_type = nullptr;
  NvLinkErrorFn link_error = nullptr;
  FieldValuesFn field_values = nullptr;
  P2PStatusFn p2p_status = nullptr;
  AncestorFn ancestor = nullptr;
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
    n.link_version = sym<NvLinkVersionFn>(h, "nvmlDeviceGetNvLinkVersion");
    n.link_remote = sym<NvLinkRemotePciFn>(h, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    n.link_remote_type = sym<NvLinkRemoteTypeFn>(h, "nvmlDeviceGetNvLinkRemoteDeviceType");
    n.link_error = sym<NvLinkErrorFn>(h, "nvmlDeviceGetNvLinkErrorCounter");
    n.field_values = sym<FieldValuesFn>(h, "nvmlDeviceGetFieldValues");
    n.p2p_status = sym<P2PStatusFn>(h, "nvmlDeviceGetP2PStatus");
    n.ancestor = sym<AncestorFn>(h, "nvmlDeviceGetTopologyCommonAncestor");
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

// Every NVLink answer of one GPU, in the shape probe/nvlink.cpp interprets. A link NVML refuses
// with INVALID_ARGUMENT does not exist on this GPU; NOT_SUPPORTED is kept (and left out later).
NvmlGpuAnswer read_nvlinks(const Nvml& n, nvmlDevice_t dev, const std::string& bus_id, bool& failed) {
  NvmlGpuAnswer ga;
  ga.bus_id = bus_id;
  for (unsigned link = 0; link < kNvmlMaxLinks; ++link) {
    NvmlLinkAnswer la;
    la.link = link;
    la.state_rc = n.link_state(dev, link, &la.state);
    if (la.state_rc == kNvmlErrorInvalidArgument) continue;
    if (la.state_rc != 0) {
      if (la.state_rc != kNvmlErrorNotSupported) {
        failed = true;  // e.g. GPU lost: the counts are unknown
        break;
      }
      ga.links.push_back(la);
      continue;
    }
    if (n.link_version) la.version_rc = n.link_version(dev, link, &la.version);
    if (n.link_remote) {
      NvmlPciInfo pi{};
      la.remote_rc = n.link_remote(dev, link, &pi);
      pi.bus_id[sizeof pi.bus_id - 1] = '\0';
      if (la.remote_rc == 0) la.remote_bus_id = pi.bus_id;
    }
    if (n.link_remote_type) la.remote_type_rc = n.link_remote_type(dev, link, &la.remote_type);
    if (n.link_error)
      for (int e = 0; e < 5; ++e) {
        unsigned long long v = 0;
        la.error_rc[e] = n.link_error(dev, link, e, &v);
        la.error[e] = v;
      }
    ga.links.push_back(la);
  }
  if (n.field_values && !failed) {
    // The throughput counters (NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX/RX 138/139, RAW_TX/RX
    // 140/141, KiB) over all links, and the data ones per active link, in one call.
    std::vector<NvmlFieldValue> fv;
    auto ask = [&](unsigned id, unsigned scope) {
      NvmlFieldValue f{};
      f.field_id = id;
      f.scope_id = scope;
      fv.push_back(f);
    };
    for (unsigned id = 138; id <= 141; ++id) ask(id, kNvmlScopeAllLinks);
    for (const auto& la : ga.links)
      if (la.state_rc == 0) {
        ask(138, la.link);
        ask(139, la.link);
      }
    int rc = n.field_values(dev, static_cast<int>(fv.size()), fv.data());
    for (const auto& f : fv) {
      NvmlFieldAnswer a;
      a.id = f.field_id;
      a.scope = f.scope_id;
      // Type 3: unsigned long long, what these fields are; anything else is not read as a count.
      a.rc = rc != 0 ? rc : (f.nvml_return != 0 ? f.nvml_return : (f.value_type == 3 ? 0 : -1));
      a.value = f.value.ull;
      ga.fields.push_back(a);
    }
  }
  return ga;
}
}  // namespace

void enrich_from_nvml(std::vector<Gpu>& gpus, Versions& versions, std::vector<std::string>& notes,
                      std::vector<GpuPair>* nvml_pairs) {
  // No GPU on PCI: NVML is not loaded (the exporter's node mode on a CPU node keeps it out of
  // its memory, docs/exporter.md).
  if (gpus.empty()) return;
  const Nvml& n = nvml();
  if (!n.ready) {
    if (!n.error.empty()) notes.push_back(n.error);
    return;
  }
  auto by_bus = n.by_bus;
  auto get_name = n.get_name;
  auto get_uuid = n.get_uuid;
  if (n.cuda_version && versions.cuda_driver.empty()) {
    int code = 0;
    if (n.cuda_version(&code) == 0) versions.cuda_driver = cuda_version_string(code);
  }
  NvmlAnswers answers;
  std::vector<nvmlDevice_t> handles;
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
    if (!n.link_state) continue;
    bool failed = false;
    NvmlGpuAnswer ga = read_nvlinks(n, dev, g.pci_address, failed);
    if (failed) {
      notes.push_back("NVML: NVLink state unreadable for GPU " + g.pci_address);
      continue;
    }
    answers.gpus.push_back(std::move(ga));
    handles.push_back(dev);
  }
  for (std::size_t a = 0; a < handles.size(); ++a)
    for (std::size_t b = a + 1; b < handles.size(); ++b) {
      NvmlPairAnswer pa;
      pa.a = a;
      pa.b = b;
      if (n.ancestor) pa.ancestor_rc = n.ancestor(handles[a], handles[b], &pa.ancestor);
      if (n.p2p_status)
        for (int k = 0; k < 4; ++k) pa.p2p_rc[k] = n.p2p_status(handles[a], handles[b], k, &pa.p2p_status[k]);
      answers.pairs.push_back(pa);
    }
  auto pairs = apply_nvml_answers(answers, gpus);
  if (nvml_pairs) *nvml_pairs = std::move(pairs);
}

}  // namespace fabscope::probe
