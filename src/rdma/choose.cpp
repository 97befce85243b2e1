#include "rdma/choose.hpp"

#include <cstdio>

#include "probe/rdma.hpp"
#include "rdma/findings.hpp"

namespace fabscope::rdma {

namespace {

std::string name_of(const RdmaDevice& d, const RdmaPort& p) { return d.name + ":" + std::to_string(p.port); }

bool has_ipv4(const Netdev& n, const std::string& addr) {
  for (const auto& a : n.ipv4)
    if (a.substr(0, a.find('/')) == addr) return true;
  return false;
}

struct Pick {
  const RdmaDevice* dev = nullptr;
  const RdmaPort* port = nullptr;
  std::string reason;
};

Pick by_address(const NodeInfo& node, const ChoiceInput& in) {
  Pick p;
  if (in.local_ipv4.empty()) return p;
  std::string why = in.server ? "the client reached this server at " + in.local_ipv4
                              : in.local_ipv4 + " is the source address of the route to " + in.peer;
  // RoCE: a RoCE v2 GID holding the address names the port directly.
  for (const auto& d : node.rdma_devices)
    for (const auto& port : d.ports)
      for (const auto& g : port.gids)
        if (g.type == "RoCE v2" && gid_ipv4(g.gid) == in.local_ipv4) {
          p = {&d, &port, "netdev " + (g.netdev.empty() ? port.netdev : g.netdev) + " holds " +
                              in.local_ipv4 + " (" + why + ")"};
          return p;
        }
  // InfiniBand with IPoIB (or a GID table not filled yet): the netdev holding the address.
  for (const auto& n : node.netdevs) {
    if (!has_ipv4(n, in.local_ipv4)) continue;
    for (const auto& d : node.rdma_devices)
      for (const auto& port : d.ports)
        if (!port.netdev.empty() && port.netdev == n.name) {
          p = {&d, &port, "netdev " + n.name + " holds " + in.local_ipv4 + " (" + why + ")"};
          return p;
        }
  }
  return p;
}

Pick first_active(const NodeInfo& node) {
  for (const char* layer : {"InfiniBand", ""})
    for (const auto& d : node.rdma_devices)
      for (const auto& port : d.ports)
        if (port.state == "ACTIVE" && (layer[0] == '\0' || port.link_layer == layer))
          return {&d, &port,
                  std::string("the first ACTIVE ") + (layer[0] ? "InfiniBand " : "") + "port" +
                      (layer[0] ? "" : " (no InfiniBand port is ACTIVE)")};
  return {};
}

std::string list_devices(const NodeInfo& node) {
  std::string s;
  for (const auto& d : node.rdma_devices)
    for (const auto& p : d.ports) s += (s.empty() ? "" : ", ") + name_of(d, p) + " " + (p.state.empty() ? "?" : p.state);
  return s.empty() ? "none" : s;
}

}  // namespace

std::string gid_ipv4(const std::string& gid) {
  if (!probe::is_ipv4_mapped_gid(gid)) return "";
  unsigned a = 0, b = 0;
  if (std::sscanf(gid.c_str() + 30, "%4x:%4x", &a, &b) != 2) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%u.%u.%u.%u", (a >> 8) & 0xff, a & 0xff, (b >> 8) & 0xff, b & 0xff);
  return buf;
}

Chosen choose(const NodeInfo& node, const ChoiceInput& in) {
  Chosen c;
  c.endpoint.host = node.hostname;
  Pick pick;
  if (!in.device.empty()) {
    const RdmaDevice* d = node.find_rdma(in.device);
    if (!d) {
      c.problems.push_back(no_device("RDMA device '" + in.device + "' (-d) does not exist here; devices: " +
                                         list_devices(node),
                                     "Name one of the devices `fabscope probe` lists, or leave -d out."));
      return c;
    }
    for (const auto& p : d->ports)
      if (in.port ? p.port == *in.port : (p.state == "ACTIVE" || !pick.port)) {
        pick = {d, &p, in.port ? "given with -d" : "given with -d (port: the first ACTIVE one)"};
        if (in.port || p.state == "ACTIVE") break;
      }
    if (!pick.port) {
      c.problems.push_back(no_device("port " + std::to_string(in.port.value_or(1)) + " of " + in.device +
                                         " does not exist; ports: " + list_devices(node),
                                     "Give -d DEV:PORT with a port the device has."));
      return c;
    }
  } else {
    pick = by_address(node, in);
    if (!pick.port) {
      pick = first_active(node);
      if (pick.port && !in.local_ipv4.empty())
        pick.reason += "; no RDMA port holds " + in.local_ipv4 + ", the address toward " + in.peer;
    }
    if (!pick.port) {
      c.problems.push_back(no_device(
          "no ACTIVE RDMA port here; ports: " + list_devices(node),
          node.rdma_devices.empty()
              ? "Load the RDMA driver (mlx5_ib, rdma_rxe for soft-RoCE: `rdma link add rxe0 type rxe netdev "
                "eth0`) and check `fabscope probe`."
              : "Bring a port up (cable, switch, subnet manager) or name one with -d."));
      return c;
    }
  }
  const RdmaDevice& d = *pick.dev;
  const RdmaPort& p = *pick.port;
  Endpoint& e = c.endpoint;
  e.device = d.name;
  e.port = p.port;
  e.link_layer = p.link_layer;
  e.netdev = p.netdev;
  e.active_mtu = p.active_mtu;
  e.rate_gbps = p.rate_gbps;
  e.software = d.pci_address.empty();
  c.choices.push_back({"device", name_of(d, p), pick.reason});

  const bool roce = p.link_layer == "Ethernet";
  if (in.gid_index) {
    const GidEntry* g = nullptr;
    for (const auto& x : p.gids)
      if (x.index == *in.gid_index) g = &x;
    std::string better;
    if (roce)
      if (auto b = probe::preferred_roce_v2_gid(p)) better = std::to_string(*b);
    if (!g) {
      c.problems.push_back(gid_index(e, *in.gid_index, "", "", better));
    } else {
      e.gid_index = g->index;
      e.gid = g->gid;
      c.choices.push_back({"gid_index", std::to_string(g->index), "given with -x (" + g->type + " " + g->gid + ")"});
      if (roce && (g->type != "RoCE v2" || gid_ipv4(g->gid).empty())) {
        Finding f = gid_index(e, g->index, g->gid, g->type, better);
        f.severity = Severity::Warn;
        c.problems.push_back(f);  // the caller decides: a warning before the run, cause if it fails
      }
      if (auto v4 = gid_ipv4(g->gid); !v4.empty()) e.address = v4;
    }
  } else if (roce) {
    const GidEntry* g = nullptr;
    for (const auto& x : p.gids)
      if (x.type == "RoCE v2" && !in.local_ipv4.empty() && gid_ipv4(x.gid) == in.local_ipv4) g = &x;
    std::string why = g ? "RoCE v2 entry holding " + in.local_ipv4 : "";
    if (!g)
      if (auto idx = probe::preferred_roce_v2_gid(p))
        for (const auto& x : p.gids)
          if (x.index == *idx) {
            g = &x;
            why = gid_ipv4(x.gid).empty() ? "the first RoCE v2 entry (no IPv4 RoCE v2 entry)"
                                          : "the first RoCE v2 entry with an IPv4 address";
          }
    if (!g) {
      c.problems.push_back(gid_index(e, -1, "", "", ""));
      c.problems.back().message = "no RoCE v2 GID on " + name_of(d, p) + ": the netdev " +
                                  (p.netdev.empty() ? std::string("?") : p.netdev) + " has no IP address";
      c.problems.back().remedy = "Give the RoCE netdev an IPv4 address (`ip addr add ... dev " +
                                 (p.netdev.empty() ? std::string("<netdev>") : p.netdev) + "`).";
    } else {
      e.gid_index = g->index;
      e.gid = g->gid;
      e.address = gid_ipv4(g->gid);
      c.choices.push_back({"gid_index", std::to_string(g->index), why + " (" + g->gid + ")"});
    }
  } else {
    e.gid_index = 0;
    for (const auto& x : p.gids)
      if (x.index == 0) e.gid = x.gid;
    c.choices.push_back({"gid_index", "0", "InfiniBand: the port GID (subnet prefix + port GUID)"});
    if (p.lid) {
      e.lid = p.lid;
      c.choices.push_back({"lid", std::to_string(*p.lid), "the port's LID from the subnet manager"});
    }
  }
  if (e.address.empty()) e.address = in.local_ipv4;
  if (p.active_mtu)
    c.choices.push_back({"mtu", std::to_string(*p.active_mtu),
                         "the port's active_mtu" + std::string(roce ? " (from the netdev MTU)" : "") +
                             "; the path uses the smaller of both ends"});
  if (p.state != "ACTIVE") c.problems.push_back(port_not_active(e, p.state, p.phys_state));
  return c;
}

}  // namespace fabscope::rdma
