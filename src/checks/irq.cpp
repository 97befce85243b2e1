// irq.*: where a NIC's interrupts are served. Completions of an RDMA or socket NIC are handled
// on the CPU its MSI-X vector is routed to; a CPU on the other NUMA node reaches the NIC's
// memory and queues across the socket interconnect, adding latency to every completion.
#include <algorithm>

#include "checks/families.hpp"

namespace fabscope::checks {

namespace {

std::string cpulist(const std::vector<int>& cpus) {
  std::string s;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    s += (s.empty() ? "" : ",") + std::to_string(cpus[i]) + (j > i ? "-" + std::to_string(cpus[j]) : "");
    i = j + 1;
  }
  return s;
}

bool any_in(const std::vector<int>& cpus, const std::vector<int>& local) {
  return std::any_of(cpus.begin(), cpus.end(),
                     [&](int c) { return std::binary_search(local.begin(), local.end(), c); });
}

void judge(const NodeInfo& node, const NicIrqs& nic, std::vector<Finding>& out) {
  if (!nic.numa_node) return;
  const NumaNode* local = nullptr;
  for (const auto& n : node.numa_nodes)
    if (n.node == *nic.numa_node) local = &n;
  if (!local || local->cpus.empty()) return;
  std::size_t judged = 0;
  std::uint64_t total = 0, remote_count = 0;
  std::vector<const IrqInfo*> remote;
  for (const auto& irq : nic.irqs) {
    if (irq.affinity_cpus.empty()) continue;
    ++judged;
    total += irq.count.value_or(0);
    if (!any_in(irq.affinity_cpus, local->cpus)) {
      remote.push_back(&irq);
      remote_count += irq.count.value_or(0);
    }
  }
  if (judged == 0 || remote.size() * 2 <= judged) return;
  std::string names;
  for (const auto& n : nic.rdma_devices) names += (names.empty() ? "" : ", ") + n;
  for (const auto& n : nic.netdevs) names += (names.empty() ? "" : ", ") + n;
  std::string ev = "numa_node=" + std::to_string(*nic.numa_node) + " (cpus " + cpulist(local->cpus) + "); " +
                   std::to_string(remote.size()) + " of " + std::to_string(judged) + " vectors elsewhere:";
  for (std::size_t i = 0; i < remote.size() && i < 8; ++i)
    ev += " " + std::to_string(remote[i]->irq) + "->" + cpulist(remote[i]->affinity_cpus);
  if (remote.size() > 8) ev += " ...";
  if (total > 0)
    ev += "; " + std::to_string(remote_count * 100 / total) + "% of the " + std::to_string(total) +
          " interrupts served";
  out.push_back(make_finding(
      "irq.remote_numa", Severity::Warn, nic.pci_address + (names.empty() ? "" : " (" + names + ")"),
      std::to_string(remote.size()) + " of " + std::to_string(judged) + " interrupt vectors of " + nic.pci_address +
          " are served by CPUs outside its NUMA node " + std::to_string(*nic.numa_node) +
          ": each completion crosses the socket interconnect",
      ev,
      "pin the NIC's vectors to its node: set_irq_affinity_cpulist.sh " + cpulist(local->cpus) + " IF "
      "(mlnx-tools), or echo CPUS > /proc/irq/N/smp_affinity_list per vector; keep irqbalance from "
      "moving them back (IRQBALANCE_BANNED_CPULIST, or irqbalance --policyscript / stop it)"));
}

}  // namespace

std::vector<Finding> check_irq(const NodeInfo& node) {
  std::vector<Finding> out;
  if (node.numa_nodes.size() < 2) return out;  // one node: every CPU is local
  for (const auto& nic : node.nic_irqs) judge(node, nic, out);
  return out;
}

}  // namespace fabscope::checks
