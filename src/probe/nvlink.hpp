#pragma once
// NVLink facts of a node from NVML: what each call answered, with its return code, and the
// interpretation into NodeInfo (Gpu::nvlinks, the NVLink counters, NodeInfo::gpu_topology).
// The answers have one shape whether read live (probe/gpu.cpp) or from a document of
// scripts/device-nvml-capture.c ("capture": "fabscope.nvml-capture", the tests' fixtures), so the
// interpretation is the same code in both.
#include <cstdint>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "core/node_info.hpp"

namespace fabscope::probe {

inline constexpr unsigned kNvmlMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS (H100/H200: 18)
inline constexpr unsigned kNvmlScopeAllLinks = 0xFFFFFFFFu;

// nvmlReturn_t values the interpretation tells apart: 0 success, -1 "not asked" (entry point
// missing), anything else the driver's refusal.
struct NvmlLinkAnswer {
  unsigned link = 0;
  int state_rc = -1, state = -1;          // NVML_FEATURE_ENABLED = 1
  int version_rc = -1;
  unsigned version = 0;
  int remote_rc = -1;
  std::string remote_bus_id;              // nvmlPciInfo_t.busId: "00000000:07:00.0"
  int remote_type_rc = -1, remote_type = -1;  // 0 GPU, 1 IBMNPU, 2 NVSwitch, 255 unknown
  int error_rc[5] = {-1, -1, -1, -1, -1};  // nvmlNvLinkErrorCounter_t 0..4
  std::uint64_t error[5] = {0, 0, 0, 0, 0};
};

struct NvmlFieldAnswer {
  unsigned id = 0;
  unsigned scope = kNvmlScopeAllLinks;  // a link index, or all links
  int rc = -1;                          // the value's own nvmlReturn
  std::uint64_t value = 0;              // value.ull (fields 138-141 are unsigned long long)
};

struct NvmlGpuAnswer {
  std::string bus_id;  // as NVML writes it; matched to Gpu::pci_address without case and domain width
  std::vector<NvmlLinkAnswer> links;
  std::vector<NvmlFieldAnswer> fields;
};

struct NvmlPairAnswer {
  std::size_t a = 0, b = 0;  // indexes into NvmlAnswers::gpus
  int ancestor_rc = -1, ancestor = -1;  // nvmlGpuTopologyLevel_t: 0, 10 PIX, 20 PXB, 30 PHB, 40 NODE, 50 SYS
  int p2p_rc[4] = {-1, -1, -1, -1};     // read, write, NVLink, atomics
  int p2p_status[4] = {-1, -1, -1, -1}; // nvmlGpuP2PStatus_t
};

struct NvmlAnswers {
  std::vector<NvmlGpuAnswer> gpus;
  std::vector<NvmlPairAnswer> pairs;
};

// A document of scripts/device-nvml-capture.c. Throws core::Error naming the field for anything
// malformed; a capture that says NVML was missing ("error") gives no GPUs.
NvmlAnswers parse_nvml_capture(const json& doc);

// "00000000:07:00.0" -> "0000:07:00.0" (lower case, the 4-digit domain sysfs uses); "" when the
// text is not a PCI address or is NVML's "no device" (FFFFFFFF:FF:FF.0, an NVSwitch's port).
std::string normalize_nvml_bus_id(const std::string& bus_id);

// Fills, on the GPUs of `gpus` that NVML answered for, nvlinks, the NVLink counters and
// nvlink_total/nvlink_active; returns the NVML part of each pair (level, links, P2P) for
// gpu_topology. GPUs NVML did not answer for keep what they had.
std::vector<GpuPair> apply_nvml_answers(const NvmlAnswers& nvml, std::vector<Gpu>& gpus);

// Every pair of GPUs (a.index < b.index): the NVML pair where one was given, else the PCIe path
// from sysfs (probe/affinity.cpp's classification), else level "".
std::vector<GpuPair> gpu_topology(const std::vector<Gpu>& gpus, const std::vector<PciDevice>& pci,
                                  const std::vector<GpuPair>& nvml_pairs);

// NVML's version code as the NVLink generation: 6 -> "4.0"; "" for a code not known here.
std::string nvlink_version_name(int code);

}  // namespace fabscope::probe
