#include "fabric/routes.hpp"

#include <algorithm>
#include <set>

#include "core/error.hpp"

namespace fabscope::fabric {

namespace {

constexpr int kMaxHops = 64;
constexpr int kNoEntry = 0xff;

bool linked(const Port& p) {
  return p.info && p.info->state == PortState::Active && p.remote_node >= 0;
}

// "S-leaf1 (0x0000000000200000)": every message names the node both ways.
std::string named(const Subnet& s, int n) { return s.name(n) + " (" + guid_hex(s.nodes[n].guid) + ")"; }

// Whether port p holds lid (its base LID and the LMC range above it).
bool port_owns(const Port& p, std::uint16_t lid) {
  if (!p.info || p.info->lid == 0) return false;
  const unsigned span = 1u << std::min(p.info->lmc, 7);
  return lid >= p.info->lid && lid < p.info->lid + span;
}

// The port of node n that holds lid (a switch's through port 0), as Subnet::find_lid decides it,
// without scanning the whole subnet for every route; nullptr when none does.
const Port* owner_port(const Subnet& s, int n, std::uint16_t lid) {
  const Node& node = s.nodes[static_cast<std::size_t>(n)];
  for (const auto& p : node.ports) {
    if (node.type == NodeType::Switch && p.number != 0) continue;
    if (port_owns(p, lid)) return &p;
  }
  return nullptr;
}

}  // namespace

std::vector<Hop> walk_route(const Subnet& s, int src, int src_port, std::uint16_t dst_lid,
                            const OutPortLookup& out_port, const std::string& who) {
  if (src < 0 || src >= static_cast<int>(s.nodes.size()))
    throw Error(who + ": node index " + std::to_string(src) + " is not in the subnet");
  if (dst_lid == 0 || dst_lid >= 0xc000)
    throw Error(who + ": destination LID " + std::to_string(dst_lid) + " is not a unicast LID");
  if (src_port < 0 || src_port > 254)
    throw Error(who + ": source port " + std::to_string(src_port) + " is not a port number (0 = the first Active one)");
  // Built only for a message: a route per measured pair direction must not allocate it.
  auto to = [dst_lid] { return "route to LID " + std::to_string(dst_lid); };
  std::vector<Hop> hops;
  const Node& first = s.nodes[src];
  int cur = src, in_port = 0;
  if (first.type != NodeType::Switch) {
    // The route starts at one port and ends at the port holding the LID: only a LID of that same
    // port is reached without the fabric. Two ports of one HCA are two end points, each behind its
    // own cable (ibtracert from one to the other crosses the switches, it does not stop at once).
    const Port* out = nullptr;
    if (src_port != 0) {
      out = first.port(src_port);
      if (!out)
        throw Error(who + ": " + named(s, src) + " has no port " + std::to_string(src_port) + " (" + to() + ")");
      if (port_owns(*out, dst_lid)) return {{src, 0, 0}};
      if (!linked(*out))
        throw Error(who + ": " + named(s, src) + " port " + std::to_string(src_port) +
                    " is not Active with a link (" + to() + ")");
    } else {
      for (const auto& p : first.ports)
        if (linked(p)) {
          out = &p;
          break;
        }
      if (!out) {
        if (owner_port(s, src, dst_lid)) return {{src, 0, 0}};  // itself, with no cable to leave by
        throw Error(who + ": " + named(s, src) + " has no Active port with a link (" + to() + ")");
      }
      if (port_owns(*out, dst_lid)) return {{src, 0, 0}};
    }
    hops.push_back({src, 0, out->number});
    cur = out->remote_node;
    in_port = out->remote_port;
  }
  for (int guard = 0; guard < kMaxHops; ++guard) {
    const Node& node = s.nodes[cur];
    if (node.type != NodeType::Switch) {
      const Port* owner = owner_port(s, cur, dst_lid);
      if (!owner) throw Error(to() + " ends at " + named(s, cur) + ", which does not own that LID");
      // The packet enters by in_port; another port of the node holding the LID does not take it.
      const Port* arrival = node.port(in_port);
      if (owner->number != in_port && arrival && arrival->info)
        throw Error(to() + " ends at " + named(s, cur) + " port " + std::to_string(in_port) +
                    ", which does not own that LID (port " + std::to_string(owner->number) + " does)");
      hops.push_back({cur, in_port, 0});
      return hops;
    }
    if (node.lid() == dst_lid) {
      hops.push_back({cur, in_port, 0});
      return hops;
    }
    // A switch already on the path: a loop (at most 64 hops, so a scan of them is cheap).
    if (std::any_of(hops.begin(), hops.end(), [cur](const Hop& h) { return h.node == cur; }))
      throw Error(to() + " loops back to switch " + named(s, cur));
    const int out = out_port(cur, dst_lid);
    if (out == kNoEntry)
      throw Error(to() + " breaks at switch " + named(s, cur) + ": no forwarding entry for that LID");
    if (out == 0) {
      hops.push_back({cur, in_port, 0});
      return hops;
    }
    const Port* p = node.port(out);
    if (!p || !linked(*p)) {
      const char* why = !p ? ", which the switch does not have"
                      : !p->info || p->info->state != PortState::Active ? ", which is down"
                                                                        : ", which has no link";
      throw Error(to() + " breaks at switch " + named(s, cur) + ": it forwards to port " + std::to_string(out) + why);
    }
    hops.push_back({cur, in_port, out});
    in_port = p->remote_port;
    cur = p->remote_node;
  }
  throw Error(to() + " is longer than " + std::to_string(kMaxHops) + " hops (the last switch reached: " +
              named(s, cur) + ")");
}

std::vector<Hop> route_from_lfts(const Subnet& s, int src, int src_port, std::uint16_t dst_lid) {
  auto saved = [&s](int node, std::uint16_t lid) -> int {
    const auto& lft = s.nodes[node].lft;
    if (lft.empty())
      throw Error("route to LID " + std::to_string(lid) + ": switch " + named(s, node) +
                  " has no saved forwarding table (sweep with --routes)");
    return lid < lft.size() ? lft[lid] : kNoEntry;  // beyond LinearFDBTop: no entry
  };
  return walk_route(s, src, src_port, dst_lid, saved, "route_from_lfts");
}

bool has_routes(const Subnet& s) {
  if (s.nodes.empty()) return false;
  for (const auto& n : s.nodes)
    if (n.type == NodeType::Switch && n.lft.empty()) return false;
  return true;
}

}  // namespace fabscope::fabric
