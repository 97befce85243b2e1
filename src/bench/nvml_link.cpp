#include "bench/nvml_link.hpp"

#include "probe/nvlink.hpp"

namespace fabscope::bench {

std::optional<unsigned> nvml_nvlink_version(const NodeInfo& node, const std::string& pci_bus_id) {
  // "00000000:06:00.0" and "0000:06:00.0" name one device; case does not matter.
  const std::string want = probe::normalize_nvml_bus_id(pci_bus_id);
  if (want.empty()) return std::nullopt;
  for (const auto& g : node.gpus) {
    if (probe::normalize_nvml_bus_id(g.pci_address) != want) continue;
    for (const auto& l : g.nvlinks)
      if (l.version_code && *l.version_code > 0) return static_cast<unsigned>(*l.version_code);
  }
  return std::nullopt;
}

}  // namespace fabscope::bench
