#include "probe/net.hpp"

#include "probe/read_util.hpp"

namespace fabscope::probe {

std::vector<Netdev> collect_netdevs(const core::Root& root, std::vector<std::string>& notes) {
  std::vector<Netdev> out;
  NotedReader r(root, notes);
  const std::string class_dir = "sys/class/net";
  for (const auto& name : root.list(class_dir)) {
    std::string dir = class_dir + "/" + name;
    if (!root.is_dir(dir)) {
      // bonding_masters is a plain file in sys/class/net; anything else vanished mid-probe.
      if (name != "bonding_masters") notes.push_back(dir + ": listed but not readable (removed?), skipped");
      continue;
    }
    Netdev n;
    n.name = name;
    if (auto v = r.integer(dir + "/mtu", true); v && *v > 0 && *v <= 1 << 20) n.mtu = static_cast<int>(*v);
    n.operstate = r.text(dir + "/operstate").value_or("");
    // speed: -1 (or EINVAL on read) when the link is down or the driver does not know; some
    // drivers print SPEED_UNKNOWN as the unsigned 4294967295 (include/uapi/linux/ethtool.h).
    if (auto line = root.read_line(dir + "/speed")) {
      auto v = core::parse_int(*line);
      if (v && *v > 0 && *v != 0xffffffffLL) n.speed_mbps = *v;
      else if (!v) notes.push_back(dir + "/speed: not a number: " + quote(*line));
    }
    if (auto v = r.integer(dir + "/type"); v && *v >= 0 && *v <= 0xffff) n.type = static_cast<int>(*v);
    n.address = r.text(dir + "/address").value_or("");
    // Physical interfaces have a "device" link to their bus device (a PCI function, or a
    // virtio device below one); loopback, bridges, bonds, VLANs and tunnels have none.
    if (auto dev = root.link_target(dir + "/device")) {
      n.pci_address = last_pci_component(*dev);
      if (n.pci_address.empty()) {
        if (auto real = root.resolve(dir + "/device")) n.pci_address = last_pci_component(*real);
      }
    } else {
      n.is_virtual = true;
    }
    out.push_back(std::move(n));
  }
  return out;
}

void link_rdma_ports(const std::vector<RdmaDevice>& rdma, std::vector<Netdev>& netdevs) {
  for (auto& n : netdevs) n.rdma_ports.clear();
  for (const auto& d : rdma)
    for (const auto& p : d.ports) {
      if (p.netdev.empty()) continue;
      for (auto& n : netdevs)
        if (n.name == p.netdev) n.rdma_ports.push_back(d.name + ":" + std::to_string(p.port));
    }
}

}  // namespace fabscope::probe
