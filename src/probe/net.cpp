#include "probe/net.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include "probe/read_util.hpp"

namespace fabscope::probe {

std::vector<Netdev> collect_netdevs(const core::Root& root, std::vector<std::string>& notes) {
  std::vector<Netdev> out;
  NotedReader r(root, notes);
  const std::string class_dir = "sys/class/net";
  for (const auto& name : root.list(class_dir)) {
    if (!is_valid_utf8(name)) {
      notes.push_back(class_dir + ": an interface whose name is not text (" + quote(name) + "), skipped");
      continue;
    }
    std::string dir = class_dir + "/" + name;
    if (!root.is_dir(dir)) {
      // bonding_masters is a plain file in sys/class/net; anything else vanished mid-probe.
      if (name != "bonding_masters") notes.push_back(dir + ": listed but not readable (removed?), skipped");
      continue;
    }
    std::size_t notes_before = notes.size();
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
    if (!root.is_dir(dir)) {
      // Removed while being read (a veth or VF torn down): drop the half-read interface.
      notes.resize(notes_before);
      notes.push_back(dir + ": removed while being read, skipped");
      continue;
    }
    out.push_back(std::move(n));
  }
  return out;
}

std::string ipv4_with_prefix(std::uint32_t addr_be, std::uint32_t mask_be) {
  std::uint32_t mask = ntohl(mask_be);
  int prefix = 0;
  while (prefix < 32 && (mask & (0x80000000u >> prefix))) ++prefix;
  if (prefix < 32 && (mask << prefix) != 0) return "";  // holes in the mask
  char buf[INET_ADDRSTRLEN] = {};
  in_addr a{};
  a.s_addr = addr_be;
  if (!inet_ntop(AF_INET, &a, buf, sizeof buf)) return "";
  return std::string(buf) + "/" + std::to_string(prefix);
}

void fill_ipv4_live(std::vector<Netdev>& netdevs) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return;
  for (auto* ifa = list; ifa; ifa = ifa->ifa_next) {
    if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != AF_INET || !ifa->ifa_name) continue;
    std::uint32_t addr = reinterpret_cast<const sockaddr_in*>(ifa->ifa_addr)->sin_addr.s_addr;
    std::uint32_t mask =
        ifa->ifa_netmask ? reinterpret_cast<const sockaddr_in*>(ifa->ifa_netmask)->sin_addr.s_addr : 0xffffffffu;
    // IP aliases show up as "eth0:1"; the address belongs to eth0.
    std::string name = ifa->ifa_name;
    if (auto colon = name.find(':'); colon != std::string::npos) name.resize(colon);
    for (auto& n : netdevs) {
      if (n.name != name) continue;
      auto text = ipv4_with_prefix(addr, mask);
      if (!text.empty()) n.ipv4.push_back(std::move(text));
    }
  }
  freeifaddrs(list);
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
