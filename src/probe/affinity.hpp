#pragma once
// GPU <-> NIC distance from the PCI tree, with the levels of `nvidia-smi topo -m`:
//   PIX  at most one PCIe switch between them (below a common bridge, one hop down each side)
//   PXB  several bridges, without crossing the host bridge
//   PHB  through a PCIe host bridge (same root complex, different root ports)
//   NODE across host bridges within one NUMA node
//   SYS  across the interconnect between NUMA nodes (sockets)
// Pure: works on PciDevice values.
#include <string>
#include <vector>

#include "core/node_info.hpp"

namespace fabscope::probe {

// "" when either device's path is unknown, or the root complexes differ and a NUMA node is unknown.
std::string classify_affinity(const PciDevice& a, const PciDevice& b);

// One entry per GPU x NIC. NICs are the RDMA devices with a PCI address; when there are none,
// the physical netdevs with a PCI address.
std::vector<Affinity> compute_affinity(const std::vector<Gpu>& gpus, const std::vector<RdmaDevice>& rdma,
                                       const std::vector<Netdev>& netdevs,
                                       const std::vector<PciDevice>& pci);

}  // namespace fabscope::probe
