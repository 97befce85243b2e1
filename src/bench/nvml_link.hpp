#pragma once
// NVLink version of a GPU: the per-link rate depends on it. The probe reads it from NVML with the
// rest of the NVLink facts (probe/nvlink.hpp, Gpu::nvlinks), so the bench loads NVML once, there.
#include <optional>
#include <string>

#include "core/node_info.hpp"

namespace fabscope::bench {

// pci_bus_id: "0000:06:00.0" (any case, 4- or 8-digit domain). NVML's version code of the first
// link that has one; nullopt when NVML, the GPU or the answer is missing.
std::optional<unsigned> nvml_nvlink_version(const NodeInfo& node, const std::string& pci_bus_id);

}  // namespace fabscope::bench
