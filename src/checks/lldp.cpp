// lldp.*: what the switch ports behind the netdevs advertise over LLDP (probe: lldpcli). The MTU
// has to agree on the switch, the NIC and the OS: a frame larger than the switch port's maximum
// frame size is dropped there, without an error on the host.
#include "checks/families.hpp"

namespace fabscope::checks {

namespace {

constexpr int kEthernetOverhead = 14 + 4;  // header + FCS; the MFS counts both
constexpr int kVlanTag = 4;
// RoCE v2 headers the kernel allows for beside the path MTU (iboe_get_mtu(), include/rdma/ib_addr.h):
// GRH 40, UDP 8, BTH 12, XRC 4, AtomicETH 28, ICRC 4. An upper bound on what a RoCE frame carries.
constexpr int kRoceHeaders = 96;

bool is_roce_netdev(const NodeInfo& node, const Netdev& nd) {
  for (const auto& d : node.rdma_devices)
    for (const auto& p : d.ports)
      if (p.netdev == nd.name && p.link_layer == "Ethernet") return true;
  return false;
}

// The largest RoCE path MTU among the ports on this netdev (active_mtu), if any is known.
std::optional<int> roce_active_mtu(const NodeInfo& node, const std::string& netdev) {
  std::optional<int> out;
  for (const auto& d : node.rdma_devices)
    for (const auto& p : d.ports)
      if (p.netdev == netdev && p.link_layer == "Ethernet" && p.active_mtu && (!out || *p.active_mtu > *out))
        out = p.active_mtu;
  return out;
}

// PFC by PCP priority rides in the 802.1Q tag, so that netdev's frames carry 4 bytes more.
bool tagged(const NodeInfo& node, const std::string& netdev) {
  for (const auto& l : node.lossless)
    if (l.netdev == netdev && l.trust == "pcp") return true;
  return false;
}

// A bond's neighbours are heard on its slaves (LLDP frames are link-local, never sent through the bond).
std::vector<LldpNeighbor> neighbors_of(const NodeInfo& node, const Netdev& nd) {
  std::vector<LldpNeighbor> out = nd.lldp_neighbors;
  for (const auto& b : node.bonds)
    if (b.name == nd.name)
      for (const auto& s : b.slaves)
        if (const Netdev* sd = node.find_netdev(s.name))
          out.insert(out.end(), sd->lldp_neighbors.begin(), sd->lldp_neighbors.end());
  return out;
}

std::string switch_name(const LldpNeighbor& n) {
  if (!n.chassis_name.empty()) return n.chassis_name;
  return n.chassis_id.empty() ? std::string("?") : n.chassis_id;
}

void mtu_vs_mfs(const NodeInfo& node, const Netdev& nd, const LldpNeighbor& nb, std::vector<Finding>& out) {
  if (!nd.mtu || !nb.mfs_bytes || *nb.mfs_bytes == 0) return;
  const bool tag = tagged(node, nd.name);
  const int overhead = kEthernetOverhead + (tag ? kVlanTag : 0);
  const int frame = *nd.mtu + overhead;
  if (frame <= *nb.mfs_bytes) return;
  // RoCE frames reach at most the port's path MTU plus its headers; when even those exceed the
  // switch's limit, RDMA traffic itself is dropped, not only full-size IP packets.
  const auto roce = roce_active_mtu(node, nd.name);
  const int roce_frame = roce ? *roce + kRoceHeaders + overhead : 0;
  const bool rdma_dropped = roce && roce_frame > *nb.mfs_bytes;
  const std::string sw = switch_name(nb);
  const std::string port = nb.port_id.empty() ? std::string("?") : nb.port_id;
  const int fitting_mtu = *nb.mfs_bytes - overhead;
  std::string message = nd.name + " MTU " + std::to_string(*nd.mtu) + " makes frames of up to " +
                        std::to_string(frame) + " bytes, but switch " + sw + " port " + port +
                        " takes at most " + std::to_string(*nb.mfs_bytes) +
                        " (LLDP maximum frame size): larger frames are dropped at the switch";
  message += rdma_dropped ? "; RoCE frames (path MTU " + std::to_string(*roce) + ") are among them"
                          : "; full-size IP packets (NCCL's socket transport and bootstrap, TCP) are lost";
  std::string evidence = "netdev=" + nd.name + " mtu=" + std::to_string(*nd.mtu) + " frame=" + std::to_string(frame) +
                         (tag ? " (802.1Q tagged: trust pcp)" : "") + " switch=" + sw + " port=" + port +
                         " mfs=" + std::to_string(*nb.mfs_bytes);
  if (roce) evidence += " roce_active_mtu=" + std::to_string(*roce);
  out.push_back(make_finding(
      "lldp.mtu_above_switch_mfs", rdma_dropped ? Severity::Fail : Severity::Warn, nd.name, message, evidence,
      "make the MTU agree on switch, NIC and OS: raise the MTU of " + sw + " port " + port +
          " (jumbo frames, e.g. 9216 on most switches), or lower the host's: ip link set " + nd.name + " mtu " +
          std::to_string(fitting_mtu > 0 ? fitting_mtu : 1500) + " (and persist it)"));
}

}  // namespace

std::vector<Finding> check_lldp(const NodeInfo& node) {
  std::vector<Finding> out;
  for (const auto& nd : node.netdevs)
    for (const auto& nb : nd.lldp_neighbors) mtu_vs_mfs(node, nd, nb, out);
  // Without lldpd answering, a missing neighbour says nothing (LldpState::note tells why).
  if (node.lldp.source.empty()) return out;
  for (const auto& nd : node.netdevs) {
    if (!is_roce_netdev(node, nd) || nd.operstate == "down" || !neighbors_of(node, nd).empty()) continue;
    out.push_back(make_finding(
        "lldp.no_neighbor", Severity::Info, nd.name,
        "lldpd runs but heard no LLDP neighbour on RoCE netdev " + nd.name +
            ": the switch port it is cabled to is unknown, so its cabling cannot be verified and "
            "`fabscope cluster` cannot group this node by switch",
        "netdev=" + nd.name +
            " rdma_ports=" + (nd.rdma_ports.empty() ? std::string("-") : core::join(nd.rdma_ports, ",")) +
            " operstate=" + (nd.operstate.empty() ? std::string("?") : nd.operstate) + " lldp_neighbors=0",
        "enable LLDP transmit on the switch port (it is off on some switch models by default); check that lldpd "
        "listens on " + nd.name + " (lldpcli show interfaces; an -I or `configure system interface pattern` "
        "that leaves it out) and that the NIC's firmware does not consume LLDP frames itself (Intel i40e: "
        "ethtool --set-priv-flags " + nd.name + " disable-fw-lldp on; ice: fw-lldp-agent off)"));
  }
  return out;
}

}  // namespace fabscope::checks
