// gdr.*: what GPUDirect RDMA (NIC reading and writing GPU memory directly) needs on the node.
#include "checks/families.hpp"

namespace fabscope::checks {

std::vector<Finding> check_gdr(const NodeInfo& node) {
  std::vector<Finding> out;
  // GPUDirect RDMA is between two PCIe devices: software RDMA devices (rxe, siw) never use it.
  std::string hcas;
  for (const auto& d : node.rdma_devices)
    if (is_pci_rdma(d)) hcas += (hcas.empty() ? "" : ",") + d.name;
  // An empty module list is "unknown" (proc/modules unreadable): nothing to judge.
  if (node.gpus.empty() || hcas.empty() || node.kernel.modules.empty()) return out;
  if (node.has_module("nvidia_peermem") || node.has_module("nv_peer_mem")) return out;
  out.push_back(make_finding(
      "gdr.peermem_missing", Severity::Warn, "node",
      "GPUs and RDMA HCAs present but neither nvidia_peermem nor nv_peer_mem is loaded: unless NCCL "
      "can use DMA-BUF (NCCL >= 2.19, Linux >= 5.12, the open GPU kernel modules), the NIC cannot "
      "reach GPU memory and every transfer is staged through host memory",
      std::to_string(node.gpus.size()) + " GPU(s), HCAs " + hcas + "; proc/modules has " +
          std::to_string(node.kernel.modules.size()) + " modules, no nvidia_peermem or nv_peer_mem",
      "modprobe nvidia_peermem (ships with the NVIDIA driver) and load it at boot "
      "(echo nvidia_peermem > /etc/modules-load.d/nvidia-peermem.conf); NCCL_DEBUG=INFO then shows "
      "GPU Direct RDMA Enabled"));
  return out;
}

}  // namespace fabscope::checks
