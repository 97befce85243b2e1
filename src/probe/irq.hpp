#pragma once
// NIC interrupts and NUMA CPU lists: which CPUs serve each MSI/MSI-X vector of a NIC function
// (sys/bus/pci/devices/ADDR/msi_irqs, proc/irq/N/{effective_,smp_}affinity_list, proc/interrupts)
// and which CPUs belong to each NUMA node (sys/devices/system/node/nodeN/cpulist).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/node_info.hpp"
#include "core/root.hpp"

namespace fabscope::probe {

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}; "" -> {}; nullopt on garbage or a CPU number above 65535.
std::optional<std::vector<int>> parse_cpulist(std::string_view text);

struct InterruptLine {
  std::uint64_t total = 0;  // summed over the CPU columns
  std::string name;         // the last column (the action name)
};
// proc/interrupts: numbered IRQ lines only (NMI, LOC, ... are skipped), keyed by IRQ number.
std::map<int, InterruptLine> parse_interrupts(std::string_view text);

std::vector<NumaNode> collect_numa_nodes(const core::Root& root, std::vector<std::string>& notes);

// One entry per PCI function that carries a physical netdev or an RDMA device.
std::vector<NicIrqs> collect_nic_irqs(const core::Root& root, const std::vector<Netdev>& netdevs,
                                      const std::vector<RdmaDevice>& rdma, const std::vector<PciDevice>& pci,
                                      std::vector<std::string>& notes);

}  // namespace fabscope::probe
