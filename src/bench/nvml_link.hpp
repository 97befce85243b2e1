#pragma once
// NVLink version of a GPU from NVML (dlopen of libnvidia-ml.so.1): the per-link rate depends
// on it. nullopt when NVML, the GPU or the answer is missing.
#include <optional>
#include <string>

namespace fabscope::bench {

// pci_bus_id: "0000:06:00.0" (any case). Asks the first link NVML answers for.
std::optional<unsigned> nvml_nvlink_version(const std::string& pci_bus_id);

}  // namespace fabscope::bench
