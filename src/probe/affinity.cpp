#include "probe/affinity.hpp"

#include <algorithm>

namespace fabscope::probe {

std::string classify_affinity(const PciDevice& a, const PciDevice& b) {
  if (a.root_complex.empty() || b.root_complex.empty()) return "";
  if (a.root_complex != b.root_complex) {
    if (!a.numa_node || !b.numa_node) return "";
    return *a.numa_node == *b.numa_node ? "NODE" : "SYS";
  }
  // Lowest common bridge of the two chains (upstream lists are top first).
  std::size_t common = 0;
  while (common < a.upstream.size() && common < b.upstream.size() &&
         a.upstream[common] == b.upstream[common])
    ++common;
  if (common == 0) return "PHB";
  // Bridges each side crosses below the common one. A PCIe switch shows up as its upstream
  // port with one downstream port per device, so two devices on one switch are one hop below
  // it each: PIX, as nvidia-smi and NCCL (PATH_PIX) call it. Deeper means nested switches.
  std::size_t below_a = a.upstream.size() - common;
  std::size_t below_b = b.upstream.size() - common;
  return below_a <= 1 && below_b <= 1 ? "PIX" : "PXB";
}

std::vector<Affinity> compute_affinity(const std::vector<Gpu>& gpus, const std::vector<RdmaDevice>& rdma,
                                       const std::vector<Netdev>& netdevs,
                                       const std::vector<PciDevice>& pci) {
  auto find = [&](const std::string& addr) -> const PciDevice* {
    auto it = std::find_if(pci.begin(), pci.end(), [&](const PciDevice& d) { return d.address == addr; });
    return it != pci.end() ? &*it : nullptr;
  };
  std::vector<std::pair<std::string, std::string>> nics;  // name, pci address
  for (const auto& d : rdma)
    if (!d.pci_address.empty()) nics.emplace_back(d.name, d.pci_address);
  if (nics.empty())
    for (const auto& n : netdevs)
      if (!n.is_virtual && !n.pci_address.empty()) nics.emplace_back(n.name, n.pci_address);
  std::vector<Affinity> out;
  out.reserve(gpus.size() * nics.size());
  for (const auto& g : gpus) {
    const PciDevice* gp = find(g.pci_address);
    for (const auto& [name, addr] : nics) {
      const PciDevice* np = find(addr);
      out.push_back({g.pci_address, name, gp && np ? classify_affinity(*gp, *np) : ""});
    }
  }
  return out;
}

}  // namespace fabscope::probe
