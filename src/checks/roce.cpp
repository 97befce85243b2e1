// roce.*: GID table and MTU of ports whose link layer is Ethernet.
#include <map>
#include <optional>

#include "checks/families.hpp"

namespace fabscope::checks {

namespace {

// include/rdma/ib_addr.h, iboe_get_mtu(): the RoCE path MTU is the largest IB MTU that fits in
// the netdev MTU less 96 bytes of RoCE v2 headers (GRH 40, UDP 8, BTH 12, XRC 4, AtomicETH 28,
// ICRC 4). The same rule as probe/rdma.cpp's, repeated here because checks read values only.
std::optional<int> roce_mtu_for(int netdev_mtu) {
  for (int mtu : {4096, 2048, 1024, 512, 256})
    if (netdev_mtu - 96 >= mtu) return mtu;
  return std::nullopt;
}
constexpr int kNetdevMtuFor4096 = 4096 + 96;

std::optional<int> ipv4_v2_index(const RdmaPort& p) {
  for (const auto& g : p.gids)
    if (g.type == "RoCE v2" && g.ipv4_mapped) return g.index;
  return std::nullopt;
}

std::string gid_list(const RdmaPort& p) {
  std::string s;
  for (const auto& g : p.gids)
    s += (s.empty() ? "" : " ") + ("gid[" + std::to_string(g.index) + "]=" +
                                    (g.type.empty() ? std::string("?") : "\"" + g.type + "\"") +
                                    (g.ipv4_mapped ? "(ipv4)" : ""));
  return s;
}

void gids(const RdmaDevice& d, const RdmaPort& p, std::vector<Finding>& out) {
  bool any_type = false, any_v2 = false;
  for (const auto& g : p.gids) {
    any_type = any_type || !g.type.empty();
    any_v2 = any_v2 || g.type == "RoCE v2";
  }
  // An empty table or one without types is unknown (unreadable gid_attrs), not "no RoCE v2".
  if (!any_type) return;
  const std::string name = port_name(d, p);
  const std::string dev = p.netdev.empty() ? std::string("DEV") : p.netdev;
  if (!any_v2) {
    out.push_back(make_finding(
        "roce.no_v2_gid", Severity::Warn, name,
        name + " has no RoCE v2 GID: RoCE v1 is not routable, so traffic cannot cross an IP router "
               "and NCCL's default GID choice finds no v2 entry",
        gid_list(p),
        "use a driver and firmware with RoCE v2 (ConnectX-4 and later list a RoCE v2 entry beside "
        "each v1 one; ibv_devinfo -v -d " + d.name + " shows the GID types) and give " + dev +
            " an IPv4 address"));
    return;
  }
  if (!ipv4_v2_index(p)) {
    out.push_back(make_finding(
        "roce.no_ipv4_gid", Severity::Warn, name,
        name + " has RoCE v2 GIDs but none for an IPv4 address: only link-local entries, which do not "
               "route; NCCL (NCCL_IB_ADDR_FAMILY=AF_INET by default) finds no GID to use",
        gid_list(p),
        "assign the data-network IPv4 address to " + dev + " (ip addr add A.B.C.D/N dev " + dev +
            "); the kernel adds the GID itself"));
  }
}

void mtu(const NodeInfo& node, const RdmaDevice& d, const RdmaPort& p, std::vector<Finding>& out) {
  if (p.netdev.empty()) return;
  const Netdev* nd = node.find_netdev(p.netdev);
  if (!nd || !nd->mtu) return;
  const std::string name = port_name(d, p);
  const int netdev_mtu = *nd->mtu;
  const auto allowed = roce_mtu_for(netdev_mtu);
  const std::string allowed_text = allowed ? std::to_string(*allowed) : std::string("none");
  if (netdev_mtu < kNetdevMtuFor4096) {
    out.push_back(make_finding(
        "roce.mtu_low", Severity::Warn, name,
        p.netdev + " MTU " + std::to_string(netdev_mtu) + " limits " + name + " to a RoCE MTU of " + allowed_text +
            " bytes; 4096 needs a netdev MTU of at least " + std::to_string(kNetdevMtuFor4096) +
            " (RoCE v2 headers take 96 bytes)",
        "sys/class/net/" + p.netdev + "/mtu=" + std::to_string(netdev_mtu) +
            (p.active_mtu ? " active_mtu=" + std::to_string(*p.active_mtu) : std::string()),
        "ip link set " + p.netdev + " mtu 9000 (and persist it in the network configuration); every "
            "switch port on the path needs the same or a larger MTU"));
  }
  if (!p.active_mtu) return;
  // Smaller than the netdev allows: the port MTU was capped (e.g. by a driver or firmware
  // setting); larger: frames of that size do not fit the netdev and are dropped.
  const bool capped = allowed && *p.active_mtu < *allowed;
  const bool too_big = *p.active_mtu > netdev_mtu;
  if (!capped && !too_big) return;
  out.push_back(make_finding(
      "roce.mtu_mismatch", Severity::Warn, name,
      name + " active MTU " + std::to_string(*p.active_mtu) + " does not match " + p.netdev + " MTU " +
          std::to_string(netdev_mtu) + " (which allows a RoCE MTU of " + allowed_text + ")",
      "active_mtu=" + std::to_string(*p.active_mtu) + " sys/class/net/" + p.netdev + "/mtu=" +
          std::to_string(netdev_mtu),
      "set the same MTU on the netdev and the port: ip link set " + p.netdev +
          " mtu 9000, then compare ibv_devinfo -d " + d.name + " (active_mtu); a port MTU capped "
          "below the netdev's is a driver or firmware setting (mlxconfig, or the rxe/siw link)"));
}

}  // namespace

std::vector<Finding> check_roce(const NodeInfo& node) {
  std::vector<Finding> out;
  // NCCL_IB_GID_INDEX is one value for every HCA (and NCCL before 2.21 has no automatic
  // choice), so the IPv4 RoCE v2 entry must sit at the same index on all of them.
  std::map<int, std::vector<std::string>> by_index;
  for (const auto& d : node.rdma_devices)
    for (const auto& p : d.ports) {
      if (p.link_layer != "Ethernet") continue;
      gids(d, p, out);
      mtu(node, d, p, out);
      if (auto i = ipv4_v2_index(p)) by_index[*i].push_back(port_name(d, p));
    }
  if (by_index.size() > 1) {
    std::string evidence;
    std::size_t most = 0;
    int common = 0;
    for (const auto& [i, ports] : by_index) {
      for (const auto& n : ports) evidence += (evidence.empty() ? "" : " ") + n + "=" + std::to_string(i);
      if (ports.size() > most) {
        most = ports.size();
        common = i;
      }
    }
    out.push_back(make_finding(
        "roce.gid_index_mismatch", Severity::Warn, "node",
        "the IPv4 RoCE v2 GID sits at different indexes on different ports, so no single "
        "NCCL_IB_GID_INDEX fits all of them",
        "ipv4 RoCE v2 gid index: " + evidence,
        "leave NCCL_IB_GID_INDEX unset with NCCL >= 2.21 (it picks per port), or make the tables "
        "agree (same address family and VLAN setup on every port, e.g. remove extra IPv6 addresses "
        "or VLAN interfaces), then use NCCL_IB_GID_INDEX=" + std::to_string(common)));
  }
  return out;
}

}  // namespace fabscope::checks
