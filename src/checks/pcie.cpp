// pcie.*: link speed and width of GPUs and HCAs, GPU-NIC distance, ACS on the path between them.
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "checks/families.hpp"

namespace fabscope::checks {

namespace {

struct Link {
  bool slow = false, narrow = false;
  std::string evidence;
};

std::optional<Link> degraded(const PciDevice& p) {
  Link l;
  l.slow = p.current_link_speed_gts && p.max_link_speed_gts && *p.current_link_speed_gts < *p.max_link_speed_gts;
  l.narrow = p.current_link_width && p.max_link_width && *p.current_link_width < *p.max_link_width;
  if (!l.slow && !l.narrow) return std::nullopt;
  auto num = [](const std::optional<double>& v) { return v ? format_number(*v) : std::string("unknown"); };
  auto lanes = [](const std::optional<int>& v) { return v ? std::to_string(*v) : std::string("unknown"); };
  l.evidence = "current_link_speed=" + num(p.current_link_speed_gts) + " GT/s max_link_speed=" +
               num(p.max_link_speed_gts) + " GT/s current_link_width=x" + lanes(p.current_link_width) +
               " max_link_width=x" + lanes(p.max_link_width);
  return l;
}

void gpu_links(const NodeInfo& node, std::vector<Finding>& out) {
  for (const auto& g : node.gpus) {
    const PciDevice* p = node.find_pci(g.pci_address);
    if (!p) continue;
    auto l = degraded(*p);
    if (!l) continue;
    const std::string subject = "gpu " + g.pci_address;
    if (l->narrow) {
      out.push_back(make_finding(
          "pcie.gpu_link_narrow", Severity::Warn, subject,
          "GPU " + g.pci_address + " trained at x" + std::to_string(*p->current_link_width) + " of x" +
              std::to_string(*p->max_link_width) + " lanes: host and NIC transfers get a fraction of the bandwidth",
          l->evidence,
          "reseat the GPU or its riser, check the slot's wiring in the board manual and BIOS "
          "bifurcation settings; lspci -vv -s " + g.pci_address + " shows LnkSta against LnkCap"));
    } else {
      // GPUs lower their PCIe speed when idle to save power and raise it under load, so a
      // lower speed alone on an idle node is expected.
      out.push_back(make_finding(
          "pcie.gpu_link_downclocked", Severity::Info, subject,
          "GPU " + g.pci_address + " link runs at " + format_number(*p->current_link_speed_gts) + " of " +
              format_number(*p->max_link_speed_gts) +
              " GT/s; normal while the GPU is idle (power saving), a problem only if it stays low under load",
          l->evidence,
          "probe again while a job runs (nvidia-smi -q -d PCIE shows current and max generation); if "
          "it stays low, reseat the GPU and check BIOS PCIe speed settings"));
    }
  }
}

void nic_links(const NodeInfo& node, std::vector<Finding>& out) {
  for (const auto& d : node.rdma_devices) {
    if (!is_pci_rdma(d)) continue;
    const PciDevice* p = node.find_pci(d.pci_address);
    if (!p) continue;
    auto l = degraded(*p);
    if (!l) continue;
    out.push_back(make_finding(
        "pcie.nic_link_degraded", Severity::Warn, d.name,
        d.name + " (" + d.pci_address + ") PCIe link is below its maximum " +
            (l->slow && l->narrow ? "speed and width" : l->slow ? "speed" : "width") +
            ": the HCA cannot feed its network port at full rate (HCAs do not slow down when idle)",
        l->evidence,
        "reseat the HCA, move it to a slot wired for its full width and generation, check BIOS PCIe "
        "settings; lspci -vv -s " + d.pci_address + " shows LnkSta against LnkCap"));
  }
}

// Closest-first order of nvidia-smi topo levels.
int level_rank(const std::string& level) {
  static const std::map<std::string, int> order{{"PIX", 0}, {"PXB", 1}, {"PHB", 2}, {"NODE", 3}, {"SYS", 4}};
  auto it = order.find(level);
  return it == order.end() ? -1 : it->second;
}

void gpu_nic_distance(const NodeInfo& node, std::vector<Finding>& out) {
  for (const auto& g : node.gpus) {
    std::string best_level, evidence;
    int best = 99;
    bool unknown = false, any = false;
    for (const auto& a : node.gpu_nic_affinity) {
      if (a.gpu != g.pci_address) continue;
      const RdmaDevice* d = node.find_rdma(a.nic);  // affinity lists netdevs when there is no HCA
      if (!d || !is_pci_rdma(*d)) continue;
      any = true;
      evidence += (evidence.empty() ? "" : " ") + a.nic + "=" + (a.level.empty() ? "unknown" : a.level);
      int r = level_rank(a.level);
      if (r < 0) {
        unknown = true;
        continue;
      }
      if (r < best) {
        best = r;
        best_level = a.level;
      }
    }
    // Far only when every HCA is known to be far: an unknown distance may be the close one.
    if (!any || unknown || best < level_rank("NODE")) continue;
    out.push_back(make_finding(
        "pcie.gpu_nic_far", Severity::Warn, "gpu " + g.pci_address,
        "GPU " + g.pci_address + " has no RDMA HCA closer than " + best_level +
            " (across host bridges" + (best_level == "SYS" ? " and CPU sockets" : "") +
            "): NCCL does not use GPUDirect RDMA at this distance by default and stages through host memory",
        evidence,
        "put an HCA under the same PCIe switch as this GPU (PIX/PXB in nvidia-smi topo -m); where the "
        "board has none, NCCL_NET_GDR_LEVEL=SYS forces GPUDirect RDMA at the cost of crossing the CPU"));
  }
}

const PciDevice* pci_of(const NodeInfo& node, const std::string& address) {
  return address.empty() ? nullptr : node.find_pci(address);
}

void acs(const NodeInfo& node, std::vector<Finding>& out) {
  // Bridges below the lowest common one of a GPU and an HCA are where peer-to-peer requests
  // turn; ACS redirect there sends them up to the root complex (slower, or blocked by the IOMMU).
  std::map<std::string, std::set<std::string>> pairs_by_bridge;
  for (const auto& g : node.gpus) {
    const PciDevice* gp = pci_of(node, g.pci_address);
    if (!gp || gp->root_complex.empty()) continue;
    for (const auto& d : node.rdma_devices) {
      const PciDevice* np = pci_of(node, d.pci_address);
      if (!np || np->root_complex != gp->root_complex) continue;
      std::size_t common = 0;
      while (common < gp->upstream.size() && common < np->upstream.size() &&
             gp->upstream[common] == np->upstream[common])
        ++common;
      for (const auto* chain : {&gp->upstream, &np->upstream})
        for (std::size_t i = common; i < chain->size(); ++i) {
          const PciDevice* b = node.find_pci((*chain)[i]);
          if (b && b->acs_enabled && *b->acs_enabled)
            pairs_by_bridge[b->address].insert(g.pci_address + "<->" + d.name);
        }
    }
  }
  for (const auto& [bridge, pairs] : pairs_by_bridge) {
    const PciDevice* b = node.find_pci(bridge);
    std::string list;
    for (const auto& p : pairs) list += (list.empty() ? "" : " ") + p;
    char ctrl[16] = "unknown";
    if (b->acs_ctrl) std::snprintf(ctrl, sizeof ctrl, "0x%04x", static_cast<unsigned>(*b->acs_ctrl));
    out.push_back(make_finding(
        "pcie.acs_enabled", Severity::Warn, "bridge " + bridge,
        "ACS redirects peer-to-peer traffic at bridge " + bridge +
            ", on the path between GPU and HCA: GPUDirect RDMA goes through the root complex or fails",
        "acs_ctrl=" + std::string(ctrl) + " pairs: " + list,
        "disable ACS on PCIe switch ports for bare-metal GPU nodes (BIOS option, or setpci -s " + bridge +
            " ECAP_ACS+0x6.w=0000 at every boot); keep it where VMs need device isolation"));
  }
}

}  // namespace

std::vector<Finding> check_pcie(const NodeInfo& node) {
  std::vector<Finding> out;
  gpu_links(node, out);
  nic_links(node, out);
  gpu_nic_distance(node, out);
  acs(node, out);
  return out;
}

}  // namespace fabscope::checks
