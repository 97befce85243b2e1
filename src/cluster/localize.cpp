#include "cluster/localize.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <cstdio>
#include <functional>
#include <iterator>
#include <set>
#include <unordered_map>

#include "cluster/registry.hpp"
#include "core/strings.hpp"
#include "fabric/routes.hpp"

namespace fabscope::cluster {

namespace {

using fabric::NodeType;

bool is_switch(const fabric::Subnet& s, int node) {
  return node >= 0 && node < static_cast<int>(s.nodes.size()) && s.nodes[node].type == NodeType::Switch;
}

std::string end_name(const fabric::Subnet& s, int node, int port) { return s.name(node) + ":" + std::to_string(port); }

// A component: what the suspect list names, and the observations crossing it.
struct Comp {
  SuspectKind kind = SuspectKind::Cable;
  std::string name;       // this direction: "S-leaf03:33 -> S-spine01:4"; a switch's name
  std::string both_name;  // both directions: "S-leaf03:33 <-> S-spine01:4" ("" for a switch)
  std::string cable;      // the cable both directions share ("" for a switch)
  int a_node = -1, a_port = 0, b_node = -1, b_port = 0;  // subnet indexes (-1: not from a subnet)
  int host_rank = -1;
  bool both = false;               // both directions of the cable as one candidate
  std::vector<std::uint32_t> obs;  // observations crossing it, ascending
};

struct Obs {
  int from = 0, to = 0;  // ranks
  bool slow = false;
};

// Components and observations, filled by a path builder (routes through a subnet's forwarding
// tables, or top-of-rack switches from LLDP), then covered.
struct Paths {
  std::vector<Comp> comps;
  std::map<std::string, std::size_t> index;             // key -> comps index
  std::unordered_map<std::uint64_t, std::size_t> by_id;  // the same for numeric keys (one per hop)
  std::vector<Obs> obs;
  Comp& comp(const std::string& key, const std::function<Comp()>& make) {
    auto [it, fresh] = index.try_emplace(key, comps.size());
    if (fresh) comps.push_back(make());
    return comps[it->second];
  }
  template <class Make>
  Comp& comp(std::uint64_t key, const Make& make) {
    auto [it, fresh] = by_id.try_emplace(key, comps.size());
    if (fresh) comps.push_back(make());
    return comps[it->second];
  }
  std::uint32_t observe(int from, int to, bool slow) {
    obs.push_back({from, to, slow});
    return static_cast<std::uint32_t>(obs.size() - 1);
  }
};

// The greedy cover of the header's rule over built paths; fills l's counts and suspects.
void cover(const Paths& built, const LocalizeOptions& opts, Localization& l) {
  // Each cable crossed both ways is also a candidate as a whole: a degraded cable is slow both
  // ways, and a group like a rack's uplinks is crossed out of and into the rack by different
  // pairs, each direction alone explaining half of them.
  std::vector<Comp> comps = built.comps;
  const auto& obs = built.obs;
  {
    std::map<std::string, std::vector<std::size_t>> by_cable;
    for (std::size_t c = 0; c < built.comps.size(); ++c)
      if (!built.comps[c].cable.empty()) by_cable[built.comps[c].cable].push_back(c);
    for (const auto& [cable, dirs] : by_cable) {
      if (dirs.size() != 2) continue;
      Comp both = built.comps[dirs[0]];
      const Comp& other = built.comps[dirs[1]];
      both.name = both.both_name;
      both.both = true;
      if (std::pair{both.b_node, both.b_port} < std::pair{both.a_node, both.a_port}) {
        std::swap(both.a_node, both.b_node);
        std::swap(both.a_port, both.b_port);
      }
      both.obs.clear();
      std::set_union(built.comps[dirs[0]].obs.begin(), built.comps[dirs[0]].obs.end(), other.obs.begin(),
                     other.obs.end(), std::back_inserter(both.obs));
      comps.push_back(std::move(both));
    }
  }
  l.observations = obs.size();
  for (const auto& o : obs) (o.slow ? l.slow : l.fast) += 1;
  std::vector<std::size_t> slow_x(comps.size()), fast_x(comps.size());
  for (std::size_t c = 0; c < comps.size(); ++c)
    for (auto o : comps[c].obs) (obs[o].slow ? slow_x[c] : fast_x[c]) += 1;
  std::vector<char> explained(obs.size(), 0), picked(comps.size(), 0);
  struct Pick {
    std::size_t comp, explained;
  };
  std::vector<Pick> picks;
  std::set<std::string> distinct;  // cables (either direction) and switches named
  while (distinct.size() < opts.max_suspects) {
    std::size_t best = comps.size(), best_new = 0;
    double best_purity = 0;
    for (std::size_t c = 0; c < comps.size(); ++c) {
      if (picked[c]) continue;
      const double purity = static_cast<double>(slow_x[c]) / static_cast<double>(slow_x[c] + fast_x[c]);
      if (purity < opts.min_purity) continue;
      std::size_t fresh = 0;
      for (auto o : comps[c].obs) fresh += obs[o].slow && !explained[o];
      if (fresh < opts.min_slow) continue;
      bool better = best == comps.size() || fresh > best_new;
      if (!better && fresh == best_new) {
        if (purity != best_purity) better = purity > best_purity;
        else if ((comps[c].kind == SuspectKind::Switch) != (comps[best].kind == SuspectKind::Switch))
          better = comps[c].kind != SuspectKind::Switch;
      }
      if (better) best = c, best_new = fresh, best_purity = purity;
    }
    if (best == comps.size()) break;
    picked[best] = 1;
    for (auto o : comps[best].obs)
      if (obs[o].slow) explained[o] = 1;
    picks.push_back({best, best_new});
    distinct.insert(comps[best].cable.empty() ? "switch " + comps[best].name : comps[best].cable);
  }
  for (std::size_t o = 0; o < obs.size(); ++o) l.unexplained += obs[o].slow && !explained[o];

  for (const auto& p : picks) {
    const Comp& c = comps[p.comp];
    // The other direction of a cable already named: one suspect, both directions.
    bool merged = false;
    if (!c.cable.empty())
      for (auto& prev : l.suspects)
        if (prev.kind == c.kind && !prev.both_directions && prev.name != c.name && prev.cable == c.cable) {
          prev.both_directions = true;
          prev.name = c.both_name;
          // Both directions: the ends in the model's link order (lower node index first).
          if (std::pair{prev.b_node, prev.b_port} < std::pair{prev.a_node, prev.a_port}) {
            std::swap(prev.a_node, prev.b_node);
            std::swap(prev.a_port, prev.b_port);
          }
          prev.explained += p.explained;
          prev.slow_crossing += slow_x[p.comp];
          prev.fast_crossing += fast_x[p.comp];
          merged = true;
        }
    if (merged) continue;
    Suspect sp;
    sp.kind = c.kind;
    sp.a_node = c.a_node, sp.a_port = c.a_port, sp.b_node = c.b_node, sp.b_port = c.b_port;
    sp.name = c.name;
    sp.cable = c.cable;
    sp.both_directions = c.both;
    sp.host_rank = c.host_rank;
    sp.explained = p.explained;
    sp.slow_crossing = slow_x[p.comp];
    sp.fast_crossing = fast_x[p.comp];
    for (std::size_t k = 0; k < comps.size() && sp.alternatives.size() < opts.max_alternatives; ++k)
      if (k != p.comp && comps[k].obs == c.obs && comps[k].cable != c.cable) sp.alternatives.push_back(comps[k].name);
    for (auto o : c.obs)
      if (obs[o].slow && sp.examples.size() < 3) sp.examples.emplace_back(obs[o].from, obs[o].to);
    l.suspects.push_back(std::move(sp));
  }
}

}  // namespace

const char* to_string(SuspectKind k) {
  switch (k) {
    case SuspectKind::Cable: return "cable";
    case SuspectKind::HostCable: return "host_cable";
    case SuspectKind::Switch: return "switch";
    case SuspectKind::Uplinks: return "uplinks";
  }
  return "?";
}

HostPort find_host(const fabric::Subnet& s, const std::vector<IbPortFact>& ports, const std::string& preferred,
                   std::string* why) {
  auto say = [&](const std::string& w) {
    if (why) *why = w;
    return HostPort{};
  };
  const IbPortFact* pick = nullptr;
  if (!preferred.empty())
    for (const auto& p : ports)
      if (p.port == preferred && p.lid != 0) pick = &p;
  if (!pick)
    for (const auto& p : ports)
      if (p.state == "ACTIVE" && p.lid != 0) {
        pick = &p;
        break;
      }
  if (!pick) return say(ports.empty() ? "no InfiniBand port" : "no ACTIVE InfiniBand port with a LID");
  if (pick->lid >= 0xc000) return say(pick->port + ": LID " + std::to_string(pick->lid) + " is not a unicast LID");
  const auto lid = static_cast<std::uint16_t>(pick->lid);
  const int node = s.find_lid(lid);
  if (node < 0) return say(pick->port + ": LID " + std::to_string(lid) + " is not in the fabric (" + s.source + ")");
  const auto& n = s.nodes[static_cast<std::size_t>(node)];
  if (n.type == NodeType::Switch)
    return say(pick->port + ": LID " + std::to_string(lid) + " is switch " + s.name(node) + " in the fabric");
  const std::uint64_t guid = fabric::parse_guid(pick->node_guid);
  if (guid != 0 && guid != n.guid)
    return say(pick->port + ": LID " + std::to_string(lid) + " is " + s.name(node) + " (" + fabric::guid_hex(n.guid) +
               ") in the fabric, but this node's GUID is " + fabric::guid_hex(guid) +
               " (a fabric saved elsewhere, or LIDs reassigned since)");
  for (const auto& p : n.ports) {
    if (!p.info || p.info->lid == 0) continue;
    const unsigned span = 1u << std::min(p.info->lmc, 7);
    if (lid >= p.info->lid && lid < p.info->lid + span) return HostPort{node, p.number, lid};
  }
  return HostPort{node, 0, lid};
}

Localization localize(const fabric::Subnet& s, const std::vector<HostPort>& hosts,
                      const std::vector<PairResult>& pairs, double threshold_gbps, const LocalizeOptions& opts) {
  Localization l;
  l.fabric_source = s.source;
  l.threshold_gbps = threshold_gbps;
  if (!fabric::has_routes(s)) {
    l.why_not = "the fabric (" + s.source + ") has no forwarding tables: save it with `fabscope fabric --routes --save`";
    return l;
  }
  if (!(threshold_gbps > 0)) {
    l.why_not = "no outlier threshold (too few measured pairs to judge)";
    return l;
  }
  l.attempted = true;
  auto note = [&](const std::string& n) {
    if (l.notes.size() < opts.max_notes) l.notes.push_back(n);
  };

  Paths P;
  std::set<int> unplaced;
  auto host_of = [&](int rank) -> const HostPort* {
    if (rank < 0 || rank >= static_cast<int>(hosts.size()) || hosts[static_cast<std::size_t>(rank)].node < 0) {
      unplaced.insert(rank);
      return nullptr;
    }
    return &hosts[static_cast<std::size_t>(rank)];
  };
  auto rank_of_hca = [&](int node) {
    for (std::size_t r = 0; r < hosts.size(); ++r)
      if (hosts[r].node == node) return static_cast<int>(r);
    return -1;
  };
  auto observe = [&](int from, int to, const std::optional<double>& gbps) {
    if (!gbps) return;
    const HostPort* src = host_of(from);
    const HostPort* dst = host_of(to);
    if (!src || !dst) {
      ++l.unrouted;
      return;
    }
    std::vector<fabric::Hop> hops;
    try {
      hops = fabric::route_from_lfts(s, src->node, src->port, dst->lid);
    } catch (const std::exception& e) {
      ++l.unrouted;
      note("rank " + std::to_string(from) + " -> rank " + std::to_string(to) + ": " + e.what());
      return;
    }
    const std::uint32_t id = P.observe(from, to, *gbps < threshold_gbps);
    for (std::size_t i = 0; i < hops.size(); ++i) {
      const auto& h = hops[i];
      if (is_switch(s, h.node))
        P.comp((std::uint64_t{1} << 40) | static_cast<std::uint64_t>(h.node), [&] {
           Comp c;
           c.kind = SuspectKind::Switch;
           c.name = s.name(h.node);
           c.a_node = h.node;
           return c;
         }).obs.push_back(id);
      if (h.out_port == 0 || i + 1 == hops.size()) continue;
      const auto& next = hops[i + 1];
      P.comp((std::uint64_t{2} << 40) | (static_cast<std::uint64_t>(h.node) << 8) | static_cast<std::uint64_t>(h.out_port), [&] {
         Comp c;
         const bool host = !is_switch(s, h.node) || !is_switch(s, next.node);
         c.kind = host ? SuspectKind::HostCable : SuspectKind::Cable;
         c.a_node = h.node, c.a_port = h.out_port, c.b_node = next.node, c.b_port = next.in_port;
         c.name = end_name(s, h.node, h.out_port) + " -> " + end_name(s, next.node, next.in_port);
         const bool a_first = std::pair{h.node, h.out_port} < std::pair{next.node, next.in_port};
         const std::string lo = a_first ? end_name(s, h.node, h.out_port) : end_name(s, next.node, next.in_port);
         const std::string hi = a_first ? end_name(s, next.node, next.in_port) : end_name(s, h.node, h.out_port);
         c.both_name = lo + " <-> " + hi;
         c.cable = "cable " + c.both_name;
         if (host) c.host_rank = rank_of_hca(is_switch(s, h.node) ? next.node : h.node);
         return c;
       }).obs.push_back(id);
    }
  };
  for (const auto& p : pairs) {
    observe(p.a, p.b, p.a_to_b_gbps);
    observe(p.b, p.a, p.b_to_a_gbps);
  }
  for (int r : unplaced) note("rank " + std::to_string(r) + " is not placed in the fabric: its pairs are not routed");
  cover(P, opts, l);
  return l;
}

Localization localize_by_switch(const std::vector<TorPlace>& places, const std::vector<PairResult>& pairs,
                                double threshold_gbps, const LocalizeOptions& opts) {
  Localization l;
  l.fabric_source = "LLDP neighbours";
  l.threshold_gbps = threshold_gbps;
  if (!(threshold_gbps > 0)) {
    l.why_not = "no outlier threshold (too few measured pairs to judge)";
    return l;
  }
  std::set<std::string> switches;
  for (const auto& p : places)
    if (!p.sw.empty()) switches.insert(p.sw);
  if (switches.empty()) {
    l.why_not = "no node reported an LLDP neighbour on its RDMA netdev (lldpd not running?)";
    return l;
  }
  l.attempted = true;
  Paths P;
  std::set<int> unplaced;
  auto place = [&](int r) -> const TorPlace* {
    if (r < 0 || r >= static_cast<int>(places.size()) || places[static_cast<std::size_t>(r)].sw.empty()) {
      unplaced.insert(r);
      return nullptr;
    }
    return &places[static_cast<std::size_t>(r)];
  };
  auto host_cable = [&](int rank, const TorPlace& t, bool up) -> Comp& {
    const std::string host = "rank" + std::to_string(rank);
    const std::string sw = t.sw + ":" + (t.port.empty() ? "?" : t.port);
    return P.comp((up ? "u" : "d") + std::to_string(rank), [&] {
      Comp c;
      c.kind = SuspectKind::HostCable;
      c.name = up ? host + " -> " + sw : sw + " -> " + host;
      c.both_name = host + " <-> " + sw;
      c.cable = "host " + host;
      c.host_rank = rank;
      return c;
    });
  };
  auto sw_comp = [&](const std::string& sw) -> Comp& {
    return P.comp("s" + sw, [&] {
      Comp c;
      c.kind = SuspectKind::Switch;
      c.name = sw;
      return c;
    });
  };
  auto uplinks = [&](const std::string& sw, bool out) -> Comp& {
    return P.comp((out ? "o" : "i") + sw, [&] {
      Comp c;
      c.kind = SuspectKind::Uplinks;
      c.name = sw + (out ? " uplinks (out of the rack)" : " uplinks (into the rack)");
      c.both_name = sw + " uplinks";
      c.cable = "uplinks " + sw;
      return c;
    });
  };
  auto observe = [&](int from, int to, const std::optional<double>& gbps) {
    if (!gbps) return;
    const TorPlace* a = place(from);
    const TorPlace* b = place(to);
    if (!a || !b) {
      ++l.unrouted;
      return;
    }
    const std::uint32_t id = P.observe(from, to, *gbps < threshold_gbps);
    host_cable(from, *a, true).obs.push_back(id);
    sw_comp(a->sw).obs.push_back(id);
    if (a->sw != b->sw) {
      uplinks(a->sw, true).obs.push_back(id);
      uplinks(b->sw, false).obs.push_back(id);
      sw_comp(b->sw).obs.push_back(id);
    }
    host_cable(to, *b, false).obs.push_back(id);
  };
  for (const auto& p : pairs) {
    observe(p.a, p.b, p.a_to_b_gbps);
    observe(p.b, p.a, p.b_to_a_gbps);
  }
  for (int r : unplaced)
    if (l.notes.size() < opts.max_notes)
      l.notes.push_back("rank " + std::to_string(r) + " has no LLDP neighbour: its pairs are not placed");
  cover(P, opts, l);
  return l;
}

namespace {

std::string rank_name(const std::vector<std::string>& names, int r) {
  return r >= 0 && r < static_cast<int>(names.size()) ? names[static_cast<std::size_t>(r)] : "rank" + std::to_string(r);
}

std::string evidence_of(const Localization& l, const Suspect& sp, const std::vector<std::string>& names) {
  const std::string buf = core::format_double("%.2f", l.threshold_gbps);
  std::string e = std::to_string(sp.slow_crossing) + " of " + std::to_string(l.slow) + " slow pair directions cross it, " +
      std::to_string(sp.fast_crossing) + " of " + std::to_string(l.fast) + " fast ones do (slow: below " + buf +
      " Gb/s)";
  if (!sp.examples.empty()) {
    e += "; e.g.";
    for (const auto& [a, b] : sp.examples) e += " " + rank_name(names, a) + "->" + rank_name(names, b);
  }
  if (!sp.alternatives.empty()) {
    e += "; crossed by exactly the same pairs, so not told apart: ";
    for (std::size_t i = 0; i < sp.alternatives.size(); ++i) e += (i ? ", " : "") + sp.alternatives[i];
  }
  return e;
}

}  // namespace

std::vector<Finding> localization_findings(const Localization& l, const std::vector<std::string>& names) {
  std::vector<Finding> out;
  for (const auto& sp : l.suspects) {
    if (sp.kind == SuspectKind::HostCable) continue;
    const std::string ev = evidence_of(l, sp, names);
    if (sp.kind == SuspectKind::Uplinks)
      out.push_back(registered_finding(
          "cluster.slow_fabric_link", Severity::Warn, sp.name,
          "the slow pairs are the ones leaving or entering one rack: " + sp.name +
              (sp.both_directions ? " (both directions)" : ""),
          ev + "; ECMP spreads flows over the uplinks, so which uplink is not known from the hosts",
          "on the switch: the uplink ports' error counters, speeds and drops (`show interface counters errors` "
          "or your switch's equivalent), ECN/PFC counters; a flapping or degraded uplink, or an ECMP group "
          "missing a member"));
    else if (sp.kind == SuspectKind::Cable)
      out.push_back(registered_finding(
          "cluster.slow_fabric_link", Severity::Warn, sp.name,
          "the slow pairs share the cable " + sp.name + (sp.both_directions ? " (both directions)" : " (this direction)"),
          ev,
          "check that cable on the switches: `fabscope fabric --interval 10` (its width and speed against what both "
          "ends support, its error counters growing, PortXmitWait); reseat or replace the cable or transceiver, or "
          "disable the port so the subnet manager routes around it"));
    else
      out.push_back(registered_finding(
          "cluster.slow_switch", Severity::Warn, sp.name,
          "the slow pairs share the switch " + sp.name + ": the pairs through it are slow on all of its cables", ev,
          "check the switch: `fabscope fabric --interval 10` (every port of " + sp.name +
              ": errors, PortXmitWait, degraded links), its firmware, temperature and fans; move traffic off it "
              "(disable its ports so the subnet manager routes around it) until it is fixed"));
  }
  return out;
}

json localization_json(const Localization& l, const std::vector<std::string>& names) {
  json suspects = json::array();
  for (const auto& sp : l.suspects) {
    json ex = json::array();
    for (const auto& [a, b] : sp.examples) ex.push_back({{"from", a}, {"to", b}, {"from_name", rank_name(names, a)},
                                                          {"to_name", rank_name(names, b)}});
    json j = {{"kind", to_string(sp.kind)}, {"name", sp.name}, {"explained", sp.explained},
              {"slow_crossing", sp.slow_crossing}, {"fast_crossing", sp.fast_crossing},
              {"alternatives", sp.alternatives}, {"examples", ex}};
    if (sp.kind != SuspectKind::Switch) j["both_directions"] = sp.both_directions;
    // Indexes into the fabric file's nodes (InfiniBand); none for LLDP-placed suspects.
    if (sp.kind == SuspectKind::Switch && sp.a_node >= 0) {
      j["node_index"] = sp.a_node;
    } else if (sp.a_node >= 0) {
      j["a"] = {{"node_index", sp.a_node}, {"port", sp.a_port}};
      j["b"] = {{"node_index", sp.b_node}, {"port", sp.b_port}};
    }
    if (sp.host_rank >= 0) j["host_rank"] = sp.host_rank;
    suspects.push_back(std::move(j));
  }
  return json{{"attempted", l.attempted}, {"why_not", l.why_not}, {"fabric_source", l.fabric_source},
              {"threshold_gbps", l.threshold_gbps}, {"observations", l.observations}, {"slow", l.slow},
              {"fast", l.fast}, {"unrouted", l.unrouted}, {"unexplained", l.unexplained},
              {"suspects", suspects}, {"notes", l.notes}};
}

}  // namespace fabscope::cluster
