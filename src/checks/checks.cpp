#include "checks/checks.hpp"

#include <algorithm>
#include <cstdio>

#include "checks/families.hpp"
#include "checks/verbs.hpp"

namespace fabscope::checks {

bool is_pci_rdma(const RdmaDevice& dev) { return !dev.pci_address.empty(); }

const std::vector<FindingInfo>& registry() {
  static const std::vector<FindingInfo> r = finding_table("docs/checks.md", {
      {"link.port_down", "link", Severity::Fail, "RDMA port not ACTIVE"},
      {"link.phys_state", "link", Severity::Fail, "physical link not LinkUp"},
      {"link.rate_degraded", "link", Severity::Warn, "port slower than the node's fastest port of its link layer"},
      {"link.symbol_errors", "link", Severity::Warn, "symbol errors on the port"},
      {"link.link_downed", "link", Severity::Warn, "the link went down since the counters were cleared"},
      {"link.link_error_recovery", "link", Severity::Warn, "the link retrained since the counters were cleared"},
      {"link.port_rcv_errors", "link", Severity::Warn, "packets received with errors"},
      {"roce.no_v2_gid", "roce", Severity::Warn, "RoCE port without a RoCE v2 GID"},
      {"roce.no_ipv4_gid", "roce", Severity::Warn, "RoCE port without an IPv4 RoCE v2 GID"},
      {"roce.gid_index_mismatch", "roce", Severity::Warn, "IPv4 RoCE v2 GID index differs between ports"},
      {"roce.mtu_low", "roce", Severity::Warn, "netdev MTU too small for a 4096-byte RoCE MTU"},
      {"roce.mtu_mismatch", "roce", Severity::Warn, "port active MTU and netdev MTU disagree"},
      {"gdr.peermem_missing", "gdr", Severity::Warn, "GPUs and HCAs without the GPUDirect RDMA peer-memory module"},
      {"pcie.gpu_link_downclocked", "pcie", Severity::Info, "GPU PCIe link below its maximum speed (idle power saving)"},
      {"pcie.gpu_link_narrow", "pcie", Severity::Warn, "GPU PCIe link narrower than its maximum width"},
      {"pcie.nic_link_degraded", "pcie", Severity::Warn, "HCA PCIe link below its maximum speed or width"},
      {"pcie.gpu_nic_far", "pcie", Severity::Warn, "GPU without an HCA closer than NODE/SYS"},
      {"pcie.acs_enabled", "pcie", Severity::Warn, "ACS redirect on a bridge between a GPU and an HCA"},
      {"os.memlock_limited", "os", Severity::Warn, "locked-memory limit not unlimited on an RDMA node"},
      {"os.socket_buffers_small", "os", Severity::Warn, "net.core.rmem_max / wmem_max below 16 MiB"},
      {"os.iommu_not_passthrough", "os", Severity::Warn, "IOMMU on without iommu=pt"},
      {"versions.nccl_old", "versions", Severity::Warn, "NCCL older than 2.14"},
      {"versions.fw_mismatch", "versions", Severity::Warn, "firmware differs between HCAs of one type"},
      {"lossless.unknown", "lossless", Severity::Info, "RoCE netdev exposing neither PFC nor ECN state"},
      {"lossless.no_pfc", "lossless", Severity::Warn, "PFC off on every priority of a RoCE netdev"},
      {"lossless.pfc_ecn_split", "lossless", Severity::Warn, "PFC and ECN (DCQCN) on different priorities"},
      {"lossless.ecn_off", "lossless", Severity::Warn, "ECN (DCQCN) off on the priority PFC protects"},
      {"bond.down", "bond", Severity::Fail, "bond with no slave up"},
      {"bond.slave_down", "bond", Severity::Warn, "bond slave whose MII status is not up"},
      {"bond.speed_mismatch", "bond", Severity::Warn, "bond slaves at different speeds"},
      {"bond.link_failures", "bond", Severity::Warn, "bond slave link failures increasing (--interval)"},
      {"irq.remote_numa", "irq", Severity::Warn, "most NIC interrupts served outside the NIC's NUMA node"},
      {"sriov.vfs_enabled", "sriov", Severity::Info, "physical function with SR-IOV VFs enabled"},
      {"sriov.vf_devices", "sriov", Severity::Info, "RDMA devices that are SR-IOV virtual functions"},
      {"sriov.pf_and_vfs", "sriov", Severity::Warn, "a PF and its VFs both used as RDMA devices here"},
      {"firewall.roce_v2_blocked", "firewall", Severity::Warn, "firewall rule dropping RoCE v2 (UDP 4791)"},
      {"firewall.nccl_tcp_blocked", "firewall", Severity::Warn, "firewall rule dropping NCCL's bootstrap TCP ports"},
      {"lldp.mtu_above_switch_mfs", "lldp", Severity::Fail, "netdev MTU above the switch port's LLDP maximum frame size"},
      {"lldp.no_neighbor", "lldp", Severity::Info, "RoCE netdev with no LLDP neighbour while lldpd runs"},
      {"congestion.xmit_discards", "congestion", Severity::Warn, "outbound discards above 0.01% (--interval)"},
      {"congestion.buffer_overrun", "congestion", Severity::Warn, "excessive buffer overruns (--interval)"},
      {"congestion.xmit_wait", "congestion", Severity::Info, "port waited to send: congestion downstream (--interval)"},
      {"congestion.out_of_sequence", "congestion", Severity::Warn, "out-of-sequence packets above 0.01% (--interval)"},
      {"congestion.packet_seq_err", "congestion", Severity::Warn, "sequence-error NAKs: packets lost (--interval)"},
      {"congestion.rnr_retry_exceeded", "congestion", Severity::Warn, "QPs failed on RNR retries (--interval)"},
      {"congestion.cnp", "congestion", Severity::Info, "congestion notifications exchanged (--interval)"},
      {"verbs.library_missing", "verbs", Severity::Warn, "RDMA devices in sysfs but libibverbs not loadable"},
      {"verbs.device_not_visible", "verbs", Severity::Warn, "device in sysfs that libibverbs cannot use"},
      {"verbs.sysfs_mismatch", "verbs", Severity::Warn, "sysfs and libibverbs disagree about a port"},
      {"nvlink.links_down", "nvlink", Severity::Warn, "GPU with NVLinks down"},
      {"nvlink.links_missing", "nvlink", Severity::Warn, "GPU with fewer NVLinks than its model has"},
      {"nvlink.topology_asymmetric", "nvlink", Severity::Warn, "GPU pair without NVLink where other pairs have it"},
      {"nvlink.p2p_disabled", "nvlink", Severity::Warn, "P2P refused between GPUs joined by NVLink"},
      {"nvlink.errors", "nvlink", Severity::Warn, "NVLink replay, recovery or CRC flit errors counted"},
      {"nvlink.errors_growing", "nvlink", Severity::Warn, "NVLink error counters growing (--interval)"},
  });
  return r;
}

namespace {

void sort_findings(std::vector<Finding>& out) {
  // Most severe first; registry order, then each family's own order, within a severity.
  const auto& reg = registry();
  std::stable_sort(out.begin(), out.end(), [&](const Finding& a, const Finding& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    return finding_rank(reg, a.id) < finding_rank(reg, b.id);
  });
}

void append(std::vector<Finding>& out, std::vector<Finding> fs) {
  out.insert(out.end(), std::make_move_iterator(fs.begin()), std::make_move_iterator(fs.end()));
}

std::vector<Finding> run_families(const NodeInfo& node) {
  std::vector<Finding> out;
  for (auto* family : {check_link, check_roce, check_gdr, check_pcie, check_os, check_versions, check_lossless,
                       check_bonds, check_irq, check_sriov, check_firewall, check_lldp, check_verbs, check_nvlink})
    append(out, family(node));
  return out;
}

}  // namespace

std::vector<Finding> run(const NodeInfo& node) {
  auto out = run_families(node);
  sort_findings(out);
  return out;
}

std::vector<Finding> run(const NodeInfo& after, const NodeInfo& before, double seconds) {
  auto out = run_families(after);
  append(out, check_counter_rates(before, after, seconds));
  append(out, check_bond_rates(before, after, seconds));
  append(out, check_nvlink_rates(before, after, seconds));
  sort_findings(out);
  return out;
}

}  // namespace fabscope::checks
