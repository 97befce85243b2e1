#include "probe/render.hpp"

#include <algorithm>
#include <sstream>

#include "core/table.hpp"
#include "probe/nvlink.hpp"
#include "probe/rdma.hpp"

namespace fabscope::probe {

namespace {

std::string or_dash(const std::string& s) { return s.empty() ? "-" : s; }
template <typename T>
std::string or_dash(const std::optional<T>& v) {
  return v ? std::to_string(*v) : "-";
}

std::string rate_text(const RdmaPort& p) {
  if (!p.rate_gbps) return "-";
  return core::format_double(*p.rate_gbps, *p.rate_gbps == static_cast<long long>(*p.rate_gbps) ? 0 : 1) +
         " Gb/s";
}

std::string limit_text(const std::optional<std::uint64_t>& v) {
  if (!v) return "unknown";
  if (*v == kUnlimited) return "unlimited";
  return core::format_bytes(static_cast<double>(*v));
}

std::string pcie_text(const PciDevice* d) {
  if (!d || !d->current_link_speed_gts || !d->current_link_width) return "-";
  std::string s = core::format_double(*d->current_link_speed_gts, 1) + " GT/s x" +
                  std::to_string(*d->current_link_width);
  bool degraded = (d->max_link_speed_gts && *d->max_link_speed_gts > *d->current_link_speed_gts) ||
                  (d->max_link_width && *d->max_link_width > *d->current_link_width);
  if (degraded) {
    s += " (max " + (d->max_link_speed_gts ? core::format_double(*d->max_link_speed_gts, 1) : std::string("?")) +
         " x" + (d->max_link_width ? std::to_string(*d->max_link_width) : std::string("?")) + ")";
  }
  return s;
}

void rdma_section(const NodeInfo& info, std::size_t width, std::ostream& os) {
  os << "RDMA ports\n";
  if (info.rdma_devices.empty()) {
    os << "  no RDMA devices found (sys/class/infiniband is empty or absent)\n";
    return;
  }
  core::Table t({"DEVICE", "PORT", "STATE", "PHYS STATE", "RATE", "LINK", "NETDEV", "MTU", "GID v2", "FW"});
  t.align_right(1).align_right(4).align_right(7).align_right(8);
  for (const auto& d : info.rdma_devices) {
    if (d.ports.empty()) t.add({d.name, "-", "-", "-", "-", "-", "-", "-", "-", or_dash(d.fw_ver)});
    for (const auto& p : d.ports) {
      auto gid = preferred_roce_v2_gid(p);
      t.add({d.name, std::to_string(p.port), or_dash(p.state), or_dash(p.phys_state), rate_text(p),
             or_dash(p.link_layer), or_dash(p.netdev), or_dash(p.active_mtu), or_dash(gid), or_dash(d.fw_ver)});
    }
  }
  os << t.render(width);
}

// The link type by the name the kernel's if_arp.h gives it; others by number.
std::string arphrd_name(const std::optional<int>& t) {
  if (!t) return "-";
  switch (*t) {
    case 1: return "ether";
    case 32: return "infiniband";
    case 768: return "ipip";
    case 769: return "ip6tnl";
    case 772: return "loopback";
    case 776: return "sit";
    case 778: return "gre";
    case 823: return "ip6gre";
    case 65534: return "none";
    default: return "arphrd " + std::to_string(*t);
  }
}

void netdev_section(const NodeInfo& info, std::size_t width, std::ostream& os) {
  os << "Network interfaces\n";
  if (info.netdevs.empty()) {
    os << "  none found (sys/class/net is empty or absent)\n";
    return;
  }
  core::Table t({"NAME", "STATE", "MTU", "SPEED", "TYPE", "PCI", "RDMA PORTS", "IPV4"});
  t.align_right(2).align_right(3).align_right(4);
  for (const auto& n : info.netdevs) {
    std::string speed = n.speed_mbps ? (*n.speed_mbps % 1000 == 0 ? std::to_string(*n.speed_mbps / 1000) + " Gb/s"
                                                                  : std::to_string(*n.speed_mbps) + " Mb/s")
                                     : "-";
    std::string ports;
    for (const auto& p : n.rdma_ports) ports += (ports.empty() ? "" : " ") + p;
    t.add({n.name, or_dash(n.operstate), or_dash(n.mtu), speed, arphrd_name(n.type),
           n.is_virtual ? "virtual" : or_dash(n.pci_address), or_dash(ports),
           n.ipv4.empty() ? "-" : n.ipv4.front() + (n.ipv4.size() > 1 ? " +" + std::to_string(n.ipv4.size() - 1) : "")});
  }
  os << t.render(width);
}

// The switch port behind each netdev. Shown on live nodes (the neighbours are read there only)
// and wherever a description carries neighbours.
void lldp_section(const NodeInfo& info, std::size_t width, std::ostream& os) {
  bool any = false;
  for (const auto& n : info.netdevs) any = any || !n.lldp_neighbors.empty();
  if (!any && info.root != "/") return;
  os << "\nLLDP neighbours (switch ports)\n";
  if (!any) {
    os << core::wrap(info.lldp.source.empty() ? "unknown: " + info.lldp.note
                                              : std::string("none heard (lldpd running)"),
                     width, "  ");
    return;
  }
  core::Table t({"NETDEV", "MTU", "SWITCH", "PORT", "MFS", "VLANS", "MGMT ADDRESS"});
  t.align_right(1).align_right(4);
  for (const auto& n : info.netdevs) {
    for (const auto& nb : n.lldp_neighbors) {
      std::string vlans;
      for (int v : nb.vlan_ids) vlans += (vlans.empty() ? "" : ",") + std::to_string(v) + (nb.pvid == v ? "u" : "");
      std::string port = nb.port_id;
      if (!nb.port_descr.empty() && nb.port_descr != nb.port_id) port += " (" + nb.port_descr + ")";
      t.add({n.name, or_dash(n.mtu), or_dash(nb.chassis_name.empty() ? nb.chassis_id : nb.chassis_name),
             or_dash(port), or_dash(nb.mfs_bytes), or_dash(vlans),
             nb.mgmt_addresses.empty() ? "-"
                                       : nb.mgmt_addresses.front() +
                                             (nb.mgmt_addresses.size() > 1
                                                  ? " +" + std::to_string(nb.mgmt_addresses.size() - 1)
                                                  : "")});
    }
  }
  os << t.render(width);
  os << core::wrap("MFS: the largest frame the switch port takes (MTU + 18, + 4 with a VLAN tag); "
                   "u: untagged VLAN (PVID)",
                   width, "  ");
}

void gpu_section(const NodeInfo& info, std::size_t width, std::ostream& os) {
  os << "GPUs\n";
  if (info.gpus.empty()) {
    os << "  no NVIDIA GPUs found on PCI\n";
    return;
  }
  core::Table t({"GPU", "PCI", "NAME", "NUMA", "PCIE", "NVLINK UP"});
  t.align_right(0).align_right(3);
  for (const auto& g : info.gpus) {
    std::string nvlink = g.nvlink_total ? std::to_string(g.nvlink_active.value_or(0)) + "/" +
                                              std::to_string(*g.nvlink_total)
                                        : "-";
    t.add({std::to_string(g.index), g.pci_address, or_dash(g.name), or_dash(g.numa_node),
           pcie_text(info.find_pci(g.pci_address)), nvlink});
  }
  os << t.render(width);
}

std::string counter_sum(const Gpu& g, std::optional<std::uint64_t> NvLink::*field) {
  std::uint64_t sum = 0;
  bool any = false;
  for (const auto& l : g.nvlinks)
    if (auto v = l.*field) {
      sum += *v;
      any = true;
    }
  return any ? std::to_string(sum) : "-";
}

std::string bytes_or_dash(const std::optional<std::uint64_t>& v) {
  return v ? core::format_bytes(static_cast<double>(*v)) : "-";
}

// One row per GPU with NVLinks: links up, version, where they go, the error counters summed
// over its links, the payload bytes over all links.
void nvlink_section(const NodeInfo& info, std::size_t width, std::ostream& os) {
  bool any = false;
  for (const auto& g : info.gpus) any = any || !g.nvlinks.empty();
  if (!any) return;
  os << "NVLinks (NVML; errors summed over the GPU's links)\n";
  core::Table t({"GPU", "UP", "VER", "REMOTE", "REPLAY", "RECOVERY", "CRC FLIT", "CRC DATA", "ECC DATA",
                 "DATA TX", "DATA RX"});
  t.align_right(0).align_right(4).align_right(5).align_right(6).align_right(7).align_right(8).align_right(9)
      .align_right(10);
  std::vector<std::string> down_lines;
  for (const auto& g : info.gpus) {
    if (g.nvlinks.empty()) continue;
    int up = 0;
    std::string down, versions, remotes;
    for (const auto& l : g.nvlinks) {
      if (l.active == true) ++up;
      else down += (down.empty() ? "" : ",") + std::to_string(l.link);
      std::string v = l.version_code ? nvlink_version_name(*l.version_code) : "";
      if (!v.empty() && versions.find(v) == std::string::npos) versions += (versions.empty() ? "" : ",") + v;
      std::string r = l.remote_type == "gpu" ? "gpu " + l.remote_pci_address : l.remote_type;
      if (!r.empty() && remotes.find(r) == std::string::npos) remotes += (remotes.empty() ? "" : ",") + r;
    }
    t.add({std::to_string(g.index), std::to_string(up) + "/" + std::to_string(g.nvlinks.size()), or_dash(versions),
           or_dash(remotes), counter_sum(g, &NvLink::replay_errors), counter_sum(g, &NvLink::recovery_errors),
           counter_sum(g, &NvLink::crc_flit_errors), counter_sum(g, &NvLink::crc_data_errors),
           counter_sum(g, &NvLink::ecc_data_errors), bytes_or_dash(g.nvlink_data_transmitted_bytes),
           bytes_or_dash(g.nvlink_data_received_bytes)});
    if (!down.empty()) down_lines.push_back("GPU " + std::to_string(g.index) + ": links down " + down);
  }
  os << t.render(width);
  for (const auto& l : down_lines) os << core::wrap(l, width, "  ");
}

// The GPU-to-GPU part of nvidia-smi topo -m: NV# where NVLinks join the pair, else the PCIe path.
void gpu_matrix_section(const NodeInfo& info, std::size_t width, std::ostream& os) {
  if (info.gpus.size() < 2 || info.gpu_topology.empty()) return;
  os << "GPU x GPU (as nvidia-smi topo -m)\n";
  std::size_t per_part = std::max<std::size_t>(1, (width > 12 ? width - 12 : 1) / 7);
  for (std::size_t first = 0; first < info.gpus.size(); first += per_part) {
    std::size_t last = std::min(info.gpus.size(), first + per_part);
    std::vector<std::string> headers = {"GPU"};
    for (std::size_t i = first; i < last; ++i) headers.push_back("GPU" + std::to_string(info.gpus[i].index));
    core::Table t(headers);
    for (const auto& a : info.gpus) {
      std::vector<std::string> row = {"GPU" + std::to_string(a.index)};
      for (std::size_t i = first; i < last; ++i) {
        const Gpu& b = info.gpus[i];
        std::string level = "?";
        if (a.pci_address == b.pci_address) level = "X";
        for (const auto& p : info.gpu_topology)
          if ((p.gpu_a == a.pci_address && p.gpu_b == b.pci_address) ||
              (p.gpu_a == b.pci_address && p.gpu_b == a.pci_address))
            level = p.level.empty() ? "?" : p.level;
        row.push_back(level);
      }
      t.add(row);
    }
    os << t.render(width);
  }
  os << core::wrap("NV# # NVLinks (direct, or through NVSwitches: the fewer of the two GPUs' switch links)",
                   width, "  ");
}

void affinity_section(const NodeInfo& info, std::size_t width, std::ostream& os) {
  if (info.gpus.empty() || info.gpu_nic_affinity.empty()) return;
  std::vector<std::string> nics;
  for (const auto& a : info.gpu_nic_affinity)
    if (std::find(nics.begin(), nics.end(), a.nic) == nics.end()) nics.push_back(a.nic);
  os << "GPU x NIC affinity (as nvidia-smi topo -m)\n";
  // Columns of ~9 characters: split wide matrices so each part fits the width.
  std::size_t per_part = std::max<std::size_t>(1, (width > 20 ? width - 20 : 1) / 9);
  for (std::size_t first = 0; first < nics.size(); first += per_part) {
    std::size_t last = std::min(nics.size(), first + per_part);
    std::vector<std::string> headers = {"GPU", "PCI"};
    for (std::size_t i = first; i < last; ++i) headers.push_back(nics[i]);
    core::Table t(headers);
    for (const auto& g : info.gpus) {
      std::vector<std::string> row = {std::to_string(g.index), g.pci_address};
      for (std::size_t i = first; i < last; ++i) {
        std::string level = "?";
        for (const auto& a : info.gpu_nic_affinity)
          if (a.gpu == g.pci_address && a.nic == nics[i]) level = a.level.empty() ? "?" : a.level;
        row.push_back(level);
      }
      t.add(row);
    }
    os << t.render(width);
  }
  os << core::wrap(
      "PIX one PCIe switch, PXB several bridges, PHB through a host bridge, NODE across host "
      "bridges in a NUMA node, SYS across NUMA nodes, ? unknown",
      width, "  ");
}

}  // namespace

std::string render_text(const NodeInfo& info, std::size_t width) {
  std::ostringstream os;
  os << core::wrap("node " + or_dash(info.hostname) + "  kernel " + or_dash(info.kernel.release) +
                       "  nvidia " + or_dash(info.versions.nvidia_driver) + "  nccl " +
                       or_dash(info.versions.nccl) + "  cuda " + or_dash(info.versions.cuda_driver),
                   width, "");
  os << "memlock " << limit_text(info.kernel.memlock_soft_bytes) << " (hard "
     << limit_text(info.kernel.memlock_hard_bytes) << ")  modules";
  int shown = 0;
  for (const char* m : {"mlx5_ib", "mlx4_ib", "ib_uverbs", "rdma_ucm", "ib_ipoib", "nvidia_peermem",
                        "nv_peer_mem", "nvidia", "gdrdrv"}) {
    if (info.has_module(m)) {
      os << " " << m;
      ++shown;
    }
  }
  const bool modules_unknown = std::any_of(info.probe_notes.begin(), info.probe_notes.end(), [](const std::string& n) {
    return n.rfind("proc/modules:", 0) == 0;
  });
  os << (shown ? "\n\n" : modules_unknown ? " unknown (proc/modules unreadable)\n\n" : " (none of the RDMA/GPU modules)\n\n");
  rdma_section(info, width, os);
  os << "\n";
  netdev_section(info, width, os);
  lldp_section(info, width, os);
  os << "\n";
  gpu_section(info, width, os);
  bool any_nvlink = false;
  for (const auto& g : info.gpus) any_nvlink = any_nvlink || !g.nvlinks.empty();
  if (any_nvlink) {
    os << "\n";
    nvlink_section(info, width, os);
  }
  if (info.gpus.size() >= 2 && !info.gpu_topology.empty()) {
    os << "\n";
    gpu_matrix_section(info, width, os);
  }
  if (!info.gpu_nic_affinity.empty()) {
    os << "\n";
    affinity_section(info, width, os);
  }
  if (!info.probe_notes.empty()) {
    os << "\nnotes (values left unknown)\n";
    for (const auto& n : info.probe_notes) os << core::wrap(n, width, "  ");
  }
  return os.str();
}

}  // namespace fabscope::probe
