// Routes through saved forwarding tables (minimal walk).
#include "subnet/routes.hpp"
#include <set>
namespace fabscope::subnet {
bool has_routes(const Subnet& s) {
  bool any = false;
  for (const auto& n : s.nodes) if (n.type == NodeType::Switch) { if (n.lft.empty()) return false; any = true; }
  return any;
}
std::vector<Hop> route_from_lfts(const Subnet& s, int src, int src_port, std::uint16_t dst_lid) {
  std::vector<Hop> hops;
  int cur = src, in_port = 0;
  const Node& first = s.nodes.at(src);
  if (first.type != NodeType::Switch) {
    const Port* out = nullptr;
    for (const auto& p : first.ports)
      if ((src_port == 0 || p.number == src_port) && p.remote_node >= 0) { out = &p; break; }
    if (!out) throw Error("no port");
    if (out->info && out->info->lid == dst_lid) return {{src, 0, 0}};
    hops.push_back({src, 0, out->number});
    cur = out->remote_node; in_port = out->remote_port;
  }
  for (int g = 0; g < 64; ++g) {
    const Node& n = s.nodes[cur];
    if (n.type != NodeType::Switch) { hops.push_back({cur, in_port, 0}); return hops; }
    if (dst_lid >= n.lft.size()) throw Error("no entry");
    int out = n.lft[dst_lid];
    if (out == 0xff) throw Error("no entry");
    if (out == 0) { hops.push_back({cur, in_port, 0}); return hops; }
    const Port* p = n.port(out);
    if (!p || p->remote_node < 0) throw Error("down");
    hops.push_back({cur, in_port, out});
    cur = p->remote_node; in_port = p->remote_port;
  }
  throw Error("loop");
}
}
