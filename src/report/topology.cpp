#include "report/topology.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "fabric/judge.hpp"

namespace fabscope::report {

namespace {

using fabric::NodeType;
using fabric::PortState;

bool is_switch(const fabric::Subnet& s, int n) { return s.nodes[static_cast<std::size_t>(n)].type == NodeType::Switch; }

// Entry of port `number` in node n's ports (switches list 0..N, the others 1..N).
int port_slot(const fabric::Node& n, int number) { return n.type == NodeType::Switch ? number : number - 1; }

std::string state_text(const fabric::Port* p) { return p && p->info ? fabric::to_string(p->info->state) : "?"; }

std::uint64_t add_sat(std::uint64_t a, std::uint64_t b) { return a + b < a ? ~0ull : a + b; }

void add_errors(const fabric::Subnet& s, int node, const fabric::Port* p, TopoLink& l) {
  if (!p || !p->counters) return;
  for (int k = 0; k < fabric::kCounterCount; ++k) {
    const auto c = static_cast<fabric::Counter>(k);
    const auto& v = (*p->counters)[c];
    if (!fabric::is_error_counter(c) || !v || *v == 0) continue;
    l.errors.push_back(fabric::port_name(s, node, p->number) + " " + fabric::counter_name(c) + "=" + std::to_string(*v));
    l.error_total = add_sat(l.error_total, *v);
  }
}

int severity_rank(const TopoLink& l) {
  switch (l.look) {
    case LinkLook::NotActive: return 0;
    case LinkLook::Degraded: return 1;
    case LinkLook::Unknown: return 2;
    default: return 3;
  }
}

std::string end_name(const fabric::Subnet& s, int node, int port) { return s.name(node) + ":" + std::to_string(port); }

}  // namespace

const char* to_string(LinkLook l) {
  switch (l) {
    case LinkLook::Active: return "active";
    case LinkLook::Degraded: return "degraded";
    case LinkLook::NotActive: return "not-active";
    case LinkLook::Unknown: return "unknown";
  }
  return "?";
}

bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i])), db = std::isdigit(static_cast<unsigned char>(b[j]));
    if (da && db) {
      std::size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      std::string x = a.substr(i, ie - i), y = b.substr(j, je - j);
      x.erase(0, std::min(x.find_first_not_of('0'), x.size()));
      y.erase(0, std::min(y.find_first_not_of('0'), y.size()));
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = ie, j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
    }
  }
  if ((a.size() - i) != (b.size() - j)) return a.size() - i < b.size() - j;
  return a < b;
}

int Topology::link_at(int node, int port) const {
  if (node < 0 || static_cast<std::size_t>(node) >= port_base.size() || port < 0) return -1;
  const std::size_t base = port_base[static_cast<std::size_t>(node)];
  const std::size_t end = static_cast<std::size_t>(node) + 1 < port_base.size() ? port_base[static_cast<std::size_t>(node) + 1]
                                                                                : link_index.size();
  // Switch ports are stored from 0, the others from 1 (tier 0 nodes).
  const int slot = tier_of_node[static_cast<std::size_t>(node)] > 0 ? port : port - 1;
  if (slot < 0 || base + static_cast<std::size_t>(slot) >= end) return -1;
  return link_index[base + static_cast<std::size_t>(slot)];
}

Topology build_topology(const fabric::Subnet& s, const std::vector<Finding>& findings) {
  Topology t;
  const int count = static_cast<int>(s.nodes.size());
  std::vector<int> level = fabric::levels(s);  // the judgements' levels
  int top = 0;
  for (int n = 0; n < count; ++n) top = std::max(top, level[static_cast<std::size_t>(n)]);
  t.top_unreached = false;
  for (int n = 0; n < count; ++n)
    if (level[static_cast<std::size_t>(n)] < 0) {
      level[static_cast<std::size_t>(n)] = top + 1;  // no HCA reaches it: a tier of its own above the rest
      t.top_unreached = true;
    }
  t.tier_of_node = level;
  // Switches by tier, by name within a tier.
  std::vector<int> sw;
  for (int n = 0; n < count; ++n)
    if (is_switch(s, n)) sw.push_back(n);
    else ++t.hosts;
  std::stable_sort(sw.begin(), sw.end(), [&](int a, int b) {
    if (level[static_cast<std::size_t>(a)] != level[static_cast<std::size_t>(b)])
      return level[static_cast<std::size_t>(a)] < level[static_cast<std::size_t>(b)];
    return natural_less(s.name(a), s.name(b));
  });
  t.switch_of_node.assign(static_cast<std::size_t>(count), -1);
  for (int n : sw) {
    TopoSwitch x;
    x.node = n;
    x.tier = level[static_cast<std::size_t>(n)];
    x.name = s.name(n);
    t.switch_of_node[static_cast<std::size_t>(n)] = static_cast<int>(t.switches.size());
    if (static_cast<int>(t.tiers.size()) < x.tier) t.tiers.resize(static_cast<std::size_t>(x.tier));
    t.tiers[static_cast<std::size_t>(x.tier - 1)].push_back(static_cast<int>(t.switches.size()));
    t.switches.push_back(std::move(x));
  }
  // Port slots of every node, for link_at.
  for (const auto& n : s.nodes) {
    t.port_base.push_back(t.link_index.size());
    t.link_index.resize(t.link_index.size() + n.ports.size(), -1);
  }
  // The active links as fabric judges them (width, speed, what the tier usually runs at).
  std::map<std::pair<int, int>, const fabric::LinkFact*> fact_at;
  const auto facts = fabric::link_facts(s);
  for (const auto& f : facts) fact_at[{f.node, f.port}] = &f;
  std::map<std::string, std::vector<std::string>> ids_by_subject;
  for (const auto& f : findings) ids_by_subject[f.subject].push_back(f.id);

  std::vector<std::set<int>> hosts_of(t.switches.size());
  std::vector<bool> attached(static_cast<std::size_t>(count), false);
  for (int n = 0; n < count; ++n) {
    const auto& node = s.nodes[static_cast<std::size_t>(n)];
    for (const auto& p : node.ports) {
      const int r = p.remote_node;
      if (r < 0 || r >= count) continue;
      if (std::pair(n, p.number) > std::pair(r, p.remote_port)) continue;  // each cable once
      int x = n, xp = p.number, y = r, yp = p.remote_port;
      if (level[static_cast<std::size_t>(y)] < level[static_cast<std::size_t>(x)]) std::swap(x, y), std::swap(xp, yp);
      TopoLink l;
      l.lo_node = x, l.lo_port = xp, l.hi_node = y, l.hi_port = yp;
      l.name = fabric::port_name(s, x, xp) + " <-> " + fabric::port_name(s, y, yp);
      const fabric::Port* a = s.nodes[static_cast<std::size_t>(x)].port(xp);
      const fabric::Port* b = s.nodes[static_cast<std::size_t>(y)].port(yp);
      l.lo_state = state_text(a), l.hi_state = state_text(b);
      l.host_link = !is_switch(s, x) || !is_switch(s, y);
      if (!a || !a->info || !b || !b->info || a->info->state == PortState::Unknown ||
          b->info->state == PortState::Unknown) {
        l.look = LinkLook::Unknown;
      } else if (a->info->state != PortState::Active || b->info->state != PortState::Active) {
        l.look = LinkLook::NotActive;
      }
      auto f = fact_at.find({x, xp});
      if (f == fact_at.end()) f = fact_at.find({y, yp});
      if (f != fact_at.end()) {
        const auto& k = *f->second;
        l.width = k.width, l.speed = k.speed, l.could_width = k.could_width, l.could_speed = k.could_speed;
        l.tier_width = k.tier_width, l.tier_speed = k.tier_speed, l.below_capability = k.below_capability;
        if (l.look == LinkLook::Active && k.below_tier) l.look = LinkLook::Degraded;
      } else if (a && a->info) {
        l.width = a->info->width_active, l.speed = a->info->speed_active;
      }
      add_errors(s, x, a, l);
      add_errors(s, y, b, l);
      if (auto it = ids_by_subject.find(l.name); it != ids_by_subject.end()) l.finding_ids = it->second;
      const int index = static_cast<int>(t.links.size());
      for (auto [nn, pp] : {std::pair(x, xp), std::pair(y, yp)}) {
        const int slot = port_slot(s.nodes[static_cast<std::size_t>(nn)], pp);
        if (slot >= 0) t.link_index[t.port_base[static_cast<std::size_t>(nn)] + static_cast<std::size_t>(slot)] = index;
      }
      if (l.host_link && is_switch(s, y) && !is_switch(s, x)) {
        TopoSwitch& leaf = t.switches[static_cast<std::size_t>(t.switch_of_node[static_cast<std::size_t>(y)])];
        hosts_of[static_cast<std::size_t>(t.switch_of_node[static_cast<std::size_t>(y)])].insert(x);
        if (l.problem()) ++leaf.host_problems;
        attached[static_cast<std::size_t>(x)] = true;
      }
      t.links.push_back(std::move(l));
    }
  }
  for (std::size_t i = 0; i < t.switches.size(); ++i) t.switches[i].hosts = hosts_of[i].size();
  for (int n = 0; n < count; ++n)
    if (!is_switch(s, n) && !attached[static_cast<std::size_t>(n)]) ++t.hosts_alone;
  return t;
}

std::vector<TierLinks> tier_links(const Topology& t) {
  std::map<std::pair<int, int>, TierLinks> by;
  for (const auto& l : t.links) {
    const int lo = t.tier_of_node[static_cast<std::size_t>(l.lo_node)];
    const int hi = t.tier_of_node[static_cast<std::size_t>(l.hi_node)];
    TierLinks& x = by[{lo, hi}];
    x.lo_tier = lo, x.hi_tier = hi;
    ++x.links;
    if (l.look == LinkLook::Degraded) ++x.degraded;
    if (l.look == LinkLook::NotActive) ++x.not_active;
    if (l.look == LinkLook::Unknown) ++x.unknown;
    if (l.erroring()) ++x.erroring;
    x.suspects.insert(x.suspects.end(), l.suspects.begin(), l.suspects.end());
  }
  std::vector<TierLinks> out;
  for (auto& [k, v] : by) {
    std::sort(v.suspects.begin(), v.suspects.end());
    v.suspects.erase(std::unique(v.suspects.begin(), v.suspects.end()), v.suspects.end());
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<int> problem_links(const Topology& t, std::size_t max, std::size_t* total) {
  std::vector<int> out;
  for (std::size_t i = 0; i < t.links.size(); ++i)
    if (t.links[i].problem() || !t.links[i].suspects.empty()) out.push_back(static_cast<int>(i));
  std::stable_sort(out.begin(), out.end(), [&](int a, int b) {
    const TopoLink& x = t.links[static_cast<std::size_t>(a)];
    const TopoLink& y = t.links[static_cast<std::size_t>(b)];
    if (x.suspects.empty() != y.suspects.empty()) return !x.suspects.empty();
    if (severity_rank(x) != severity_rank(y)) return severity_rank(x) < severity_rank(y);
    return x.error_total > y.error_total;
  });
  if (total) *total = out.size();
  if (out.size() > max) out.resize(max);
  return out;
}

std::string localization_mismatch(const fabric::Subnet& s, const cluster::SavedLocalization& l) {
  if (!l.attempted) return "its localization was not attempted" + (l.why_not.empty() ? "" : " (" + l.why_not + ")");
  if (l.fabric_source != s.source)
    return "it was located in a sweep from \"" + l.fabric_source + "\", this fabric was swept from \"" + s.source + "\"";
  const int count = static_cast<int>(s.nodes.size());
  for (std::size_t k = 0; k < l.suspects.size(); ++k) {
    const cluster::SavedSuspect& x = l.suspects[k];
    const std::string which = "suspect #" + std::to_string(k + 1) + " \"" + x.name + "\"";
    if (x.a_node < 0) return which + " was placed by LLDP neighbours, not in a fabric";
    if (x.kind == "switch") {
      if (x.a_node >= count) return which + " is node " + std::to_string(x.a_node) + ", beyond this fabric's nodes";
      if (!is_switch(s, x.a_node) || s.name(x.a_node) != x.name)
        return which + " is node " + std::to_string(x.a_node) + ", which is " + s.name(x.a_node) + " here";
      continue;
    }
    if (x.a_node >= count || x.b_node >= count) return which + " names a node beyond this fabric's nodes";
    const fabric::Port* p = s.nodes[static_cast<std::size_t>(x.a_node)].port(x.a_port);
    if (!p || p->remote_node != x.b_node || p->remote_port != x.b_port)
      return which + ": there is no cable " + end_name(s, x.a_node, x.a_port) + " - " +
             end_name(s, x.b_node, x.b_port) + " in this fabric";
    const std::string ends = end_name(s, x.a_node, x.a_port), other = end_name(s, x.b_node, x.b_port);
    if (x.name != ends + " -> " + other && x.name != ends + " <-> " + other)
      return which + " is " + ends + " - " + other + " here";
  }
  return "";
}

void mark_suspects(Topology& t, const std::vector<cluster::SavedSuspect>& suspects, int first) {
  for (std::size_t k = 0; k < suspects.size(); ++k) {
    const cluster::SavedSuspect& x = suspects[k];
    const int number = first + static_cast<int>(k);
    if (x.kind == "switch") {
      if (x.a_node >= 0 && static_cast<std::size_t>(x.a_node) < t.switch_of_node.size() &&
          t.switch_of_node[static_cast<std::size_t>(x.a_node)] >= 0)
        t.switches[static_cast<std::size_t>(t.switch_of_node[static_cast<std::size_t>(x.a_node)])].suspects.push_back(number);
      continue;
    }
    const int i = t.link_at(x.a_node, x.a_port);
    if (i < 0) continue;
    TopoLink& l = t.links[static_cast<std::size_t>(i)];
    l.suspects.push_back(number);
    if (l.host_link) {
      const int sw = t.switch_of_node[static_cast<std::size_t>(l.hi_node)];
      if (sw >= 0) t.switches[static_cast<std::size_t>(sw)].host_suspects.push_back(number);
    }
  }
}

std::vector<HeatGroup> leaf_groups(const cluster::SavedResult& c, const fabric::Subnet& s, const Topology& t,
                                   std::string* why) {
  auto fail = [&](const std::string& w) {
    if (why) *why = w;
    return std::vector<HeatGroup>{};
  };
  std::map<int, std::vector<int>> ranks_of_leaf;  // index into t.switches -> ranks
  std::size_t with_ports = 0;
  for (const auto& node : c.nodes) {
    const cluster::IbPortFact* pick = nullptr;
    for (const auto& p : node.ib_ports) {
      std::string st = p.state;
      std::transform(st.begin(), st.end(), st.begin(), [](unsigned char ch) { return std::toupper(ch); });
      if (p.lid != 0 && p.lid < 0xc000 && st.find("ACTIVE") != std::string::npos) {
        pick = &p;
        break;
      }
    }
    if (!node.ib_ports.empty()) ++with_ports;
    if (!pick) continue;
    const int n = s.find_lid(static_cast<std::uint16_t>(pick->lid));
    if (n < 0) continue;  // not in this fabric: left unplaced
    const std::string who = c.names[static_cast<std::size_t>(node.rank)] + " (" + pick->port + ", LID " +
                            std::to_string(pick->lid) + ")";
    if (is_switch(s, n)) return fail(who + " is switch " + s.name(n) + " in this fabric");
    const std::uint64_t guid = fabric::parse_guid(pick->node_guid);
    if (guid != 0 && guid != s.nodes[static_cast<std::size_t>(n)].guid)
      return fail(who + " is " + s.name(n) + " of another node GUID in this fabric");
    int leaf = -1;
    for (const auto& p : s.nodes[static_cast<std::size_t>(n)].ports) {
      if (!p.info || p.info->lid == 0 || p.remote_node < 0) continue;
      const unsigned span = 1u << std::min(p.info->lmc, 7);
      if (pick->lid >= p.info->lid && pick->lid < p.info->lid + span && is_switch(s, p.remote_node))
        leaf = t.switch_of_node[static_cast<std::size_t>(p.remote_node)];
    }
    if (leaf >= 0) ranks_of_leaf[leaf].push_back(node.rank);
  }
  if (ranks_of_leaf.empty())
    return fail(with_ports ? "no node's InfiniBand port is an HCA port cabled to a switch in this fabric"
                           : "the cluster's nodes report no InfiniBand ports (ib_ports)");
  std::vector<HeatGroup> out;
  for (auto& [leaf, ranks] : ranks_of_leaf) {  // std::map: in drawing order
    std::sort(ranks.begin(), ranks.end());
    out.push_back({t.switches[static_cast<std::size_t>(leaf)].name, std::move(ranks)});
  }
  return out;
}

std::vector<HeatGroup> tor_groups(const cluster::SavedResult& c) {
  std::map<std::string, std::vector<int>, bool (*)(const std::string&, const std::string&)> by(natural_less);
  for (const auto& n : c.nodes)
    if (!n.tor_switch.empty()) by[n.tor_switch].push_back(n.rank);
  std::vector<HeatGroup> out;
  for (auto& [name, ranks] : by) {
    std::sort(ranks.begin(), ranks.end());
    out.push_back({name, std::move(ranks)});
  }
  return out;
}

}  // namespace fabscope::report
