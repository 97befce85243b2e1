#include "bench/nvml_link.hpp"

#include <cctype>

namespace fabscope::bench {

namespace {
// "00000000:06:00.0" and "0000:06:00.0" name one device; case does not matter.
std::string bus_key(const std::string& bus_id) {
  std::string lower;
  for (char c : bus_id) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto colon = lower.find(':');
  if (colon == std::string::npos) return lower;
  auto first = lower.find_first_not_of('0');
  std::string domain = first < colon ? lower.substr(first, colon - first) : "0";
  return domain + lower.substr(colon);
}
}  // namespace

std::optional<unsigned> nvml_nvlink_version(const NodeInfo& node, const std::string& pci_bus_id) {
  for (const auto& g : node.gpus) {
    if (bus_key(g.pci_address) != bus_key(pci_bus_id)) continue;
    for (const auto& l : g.nvlinks)
      if (l.version_code && *l.version_code > 0) return static_cast<unsigned>(*l.version_code);
  }
  return std::nullopt;
}

}  // namespace fabscope::bench
