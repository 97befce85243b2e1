// sriov.*: SR-IOV virtual functions. A VF is a PCI function of its own with its own RDMA device
// (mlx5_N) sharing the physical port of its PF, so which devices NCCL should use depends on
// where the job runs: the PFs on the host, the VF passed in inside a VM or container.
#include <map>

#include "checks/families.hpp"

namespace fabscope::checks {

namespace {

std::string port_states(const RdmaDevice& d) {
  std::string s;
  for (const auto& p : d.ports) s += (s.empty() ? "" : ",") + (p.state.empty() ? std::string("?") : p.state);
  return s;
}

}  // namespace

std::vector<Finding> check_sriov(const NodeInfo& node) {
  std::vector<Finding> out;
  // RDMA devices by PCI address; VFs grouped by their PF.
  std::map<std::string, const RdmaDevice*> by_pci;
  for (const auto& d : node.rdma_devices)
    if (!d.pci_address.empty()) by_pci[d.pci_address] = &d;
  std::map<std::string, std::vector<const RdmaDevice*>> vfs_of;
  std::vector<const RdmaDevice*> vfs;
  for (const auto& d : node.rdma_devices) {
    const PciDevice* p = d.pci_address.empty() ? nullptr : node.find_pci(d.pci_address);
    if (!p || p->physfn.empty()) continue;
    vfs_of[p->physfn].push_back(&d);
    vfs.push_back(&d);
  }
  for (const auto& p : node.pci_devices) {
    if (!p.sriov_numvfs || *p.sriov_numvfs == 0) continue;
    auto pf = by_pci.find(p.address);
    const std::string pf_name = pf == by_pci.end() ? p.address : pf->second->name + " (" + p.address + ")";
    const auto& here = vfs_of[p.address];
    std::string ev = "sriov_numvfs=" + std::to_string(*p.sriov_numvfs) +
                     (p.sriov_totalvfs ? " sriov_totalvfs=" + std::to_string(*p.sriov_totalvfs) : std::string()) +
                     "; VF RDMA devices here:";
    for (const auto* v : here) ev += " " + v->name + "[" + port_states(*v) + "]";
    if (here.empty()) ev += " none";
    out.push_back(make_finding(
        "sriov.vfs_enabled", Severity::Info, pf_name,
        pf_name + " has " + std::to_string(*p.sriov_numvfs) + " virtual functions enabled; they share its "
        "physical port" + std::string(here.empty() ? " (none has an RDMA device on this host: passed to VMs or unbound)" : ""),
        ev, "for jobs on this host use the PF: NCCL_IB_HCA=" +
                (pf == by_pci.end() ? std::string("<pf device>") : "=" + pf->second->name) +
                "; inside a VM or container use the VF passed in"));
    if (pf != by_pci.end() && !here.empty()) {
      std::string names;
      for (const auto* v : here) names += "," + v->name;
      out.push_back(make_finding(
          "sriov.pf_and_vfs", Severity::Warn, pf->second->name,
          "both " + pf->second->name + " and its virtual functions (" + names.substr(1) + ") are RDMA devices "
          "here: NCCL without NCCL_IB_HCA uses all of them as separate NICs, though they share one port, "
          "so it overestimates the bandwidth and overloads the port",
          ev, "NCCL_IB_HCA==" + pf->second->name + " on this host (exact match: the leading '='), or "
              "exclude the VFs: NCCL_IB_HCA=^" + names.substr(1)));
    }
  }
  if (!vfs.empty()) {
    std::string ev, active;
    for (const auto* v : vfs) {
      const PciDevice* p = node.find_pci(v->pci_address);
      ev += (ev.empty() ? "" : " ") + v->name + "=VF of " + (p ? p->physfn : std::string("?")) + "[" + port_states(*v) + "]";
      bool up = false;
      for (const auto& port : v->ports) up = up || port.state == "ACTIVE" || port.state == "ACTIVE_DEFER";
      if (up) active += (active.empty() ? "" : ",") + v->name;
    }
    out.push_back(make_finding(
        "sriov.vf_devices", Severity::Info, "node",
        std::to_string(vfs.size()) + " RDMA device(s) here are SR-IOV virtual functions" +
            std::string(active.empty() ? ", none with an ACTIVE port" : "; ACTIVE: " + active),
        ev,
        active.empty() ? "bring the VF links up (ip link set PF vf N state auto|enable on the host)"
                       : "inside the VM or container: NCCL_IB_HCA==" + active +
                             "; on the host, leave the VFs to their guests (NCCL_IB_HCA=^" + active + ")"));
  }
  return out;
}

}  // namespace fabscope::checks
