#include "fabric/route_checks.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "core/strings.hpp"
#include "fabric/judge.hpp"
#include "fabric/routes.hpp"

namespace fabscope::fabric {

namespace {

constexpr std::uint8_t kLftNone = 0xff;

// A destination: one LID and the port that owns it.
struct Dest {
  std::uint16_t lid = 0;
  int node = -1, port = 0;
};

bool port_up(const Port& p) { return !p.info || p.info->state == PortState::Active || p.info->state == PortState::Unknown; }

// Where switch x sends LID d, and what is there: the next node (-1: x is the end), or a reason.
struct Step {
  int out = 0;       // output port, 0: the switch itself
  int next = -1;     // the node behind it
  int next_port = 0;
  std::string why;   // non-empty: the walk breaks here
};

Step step_of(const Subnet& s, int x, std::uint16_t d) {
  Step st;
  const auto& n = s.nodes[x];
  std::uint8_t p = d < n.lft.size() ? n.lft[d] : kLftNone;
  if (p == kLftNone) {
    st.why = s.name(x) + " has no entry for LID " + std::to_string(d);
    return st;
  }
  st.out = p;
  if (p == 0) return st;
  const Port* port = n.port(p);
  if (!port || port->remote_node < 0) {
    st.why = s.name(x) + " sends LID " + std::to_string(d) + " to port " + std::to_string(p) + ", which has no link";
    return st;
  }
  if (!port_up(*port)) {
    st.why = s.name(x) + " sends LID " + std::to_string(d) + " to port " + std::to_string(p) + ", which is " +
             to_string(port->info->state);
    return st;
  }
  st.next = port->remote_node;
  st.next_port = port->remote_port;
  return st;
}

// Whether port `port` of node n owns LID d (its LMC range).
bool owns(const Subnet& s, int node, int port, std::uint16_t d) {
  const Port* p = s.nodes[node].port(port);
  if (!p || !p->info || p->info->lid == 0) return false;
  unsigned span = 1u << std::min(p->info->lmc, 7);
  return d >= p->info->lid && d < p->info->lid + span;
}

std::string dest_name(const Subnet& s, const Dest& d) {
  return "LID " + std::to_string(d.lid) + " (" + (d.port ? port_name(s, d.node, d.port) : s.name(d.node)) + ")";
}

std::string channel_name(const Subnet& s, const Channel& c) {
  const Port* p = s.nodes[c.node].port(c.port);
  std::string to = p && p->remote_node >= 0 ? port_name(s, p->remote_node, p->remote_port) : "?";
  return port_name(s, c.node, c.port) + " -> " + to;
}

// Tarjan's strongly connected components, iterative. comp[v]: the component of v.
std::vector<int> strong_components(const std::vector<std::vector<int>>& adj, int& count) {
  const int n = static_cast<int>(adj.size());
  std::vector<int> index(n, -1), low(n, 0), comp(n, -1), stack;
  std::vector<char> on(n, 0);
  int next = 0;
  count = 0;
  std::vector<std::pair<int, std::size_t>> call;  // (vertex, next edge)
  for (int root = 0; root < n; root++) {
    if (index[root] >= 0) continue;
    call.push_back({root, 0});
    index[root] = low[root] = next++;
    stack.push_back(root);
    on[root] = 1;
    while (!call.empty()) {
      auto& [v, e] = call.back();
      if (e < adj[v].size()) {
        int w = adj[v][e++];
        if (index[w] < 0) {
          index[w] = low[w] = next++;
          stack.push_back(w);
          on[w] = 1;
          call.push_back({w, 0});
        } else if (on[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      if (low[v] == index[v]) {
        int w;
        do {
          w = stack.back();
          stack.pop_back();
          on[w] = 0;
          comp[w] = count;
        } while (w != v);
        count++;
      }
      int done = v;
      call.pop_back();
      if (!call.empty()) low[call.back().first] = std::min(low[call.back().first], low[done]);
    }
  }
  return comp;
}

// A shortest cycle through `start` inside its component (BFS over the component's edges).
std::vector<int> cycle_through(const std::vector<std::vector<int>>& adj, const std::vector<int>& comp, int start) {
  std::unordered_map<int, int> parent;
  std::vector<int> queue{start};
  parent[start] = -1;
  for (std::size_t i = 0; i < queue.size(); i++) {
    int v = queue[i];
    for (int w : adj[v]) {
      if (comp[w] != comp[start]) continue;
      if (w == start) {
        std::vector<int> cyc;
        for (int x = v; x != -1; x = parent[x]) cyc.push_back(x);
        std::reverse(cyc.begin(), cyc.end());
        return cyc;
      }
      if (parent.emplace(w, v).second) queue.push_back(w);
    }
  }
  return {start};
}

}  // namespace

RouteCheck check_routes(const Subnet& s, const RouteCheckOptions& o) {
  RouteCheck r;
  if (!has_routes(s)) return r;
  const int n = static_cast<int>(s.nodes.size());
  std::vector<int> switches;
  for (int i = 0; i < n; i++)
    if (s.nodes[i].type == NodeType::Switch) switches.push_back(i);
  if (switches.empty()) return r;
  r.judged = true;
  r.switches = switches.size();

  // Destinations: every LID of every HCA or router port and of every switch; sources: the HCA and
  // router ports cabled to a switch, by that switch.
  std::vector<Dest> dests;
  std::vector<int> sources_at(n, 0);
  for (int i = 0; i < n; i++) {
    const auto& node = s.nodes[i];
    for (const auto& p : node.ports) {
      if (!p.info || p.info->lid == 0) continue;
      if (node.type == NodeType::Switch) {
        if (p.number == 0) dests.push_back({p.info->lid, i, 0});
        continue;
      }
      unsigned span = 1u << std::min(p.info->lmc, 7);
      for (unsigned k = 0; k < span && p.info->lid + k < 0xc000; k++)
        dests.push_back({static_cast<std::uint16_t>(p.info->lid + k), i, p.number});
      if (p.remote_node >= 0 && s.nodes[p.remote_node].type == NodeType::Switch && port_up(p)) {
        sources_at[p.remote_node]++;
        r.sources++;
      }
    }
  }
  r.destinations = dests.size();

  // Channels (node, out port) of switches, densely numbered.
  std::vector<int> chan_base(n, -1);
  std::vector<Channel> chans;
  for (int x : switches) {
    chan_base[x] = static_cast<int>(chans.size());
    for (int p = 0; p <= s.nodes[x].num_ports; p++) chans.push_back({x, p});
  }
  auto chan = [&](int x, int p) { return chan_base[x] + p; };
  std::unordered_map<std::uint64_t, std::uint16_t> edges;  // (from << 32 | to) -> a LID that adds it
  std::vector<std::uint64_t> load(chans.size(), 0);

  // Per destination: each switch's step, its distance to the end (-1 broken), then the walks.
  std::vector<Step> steps(n);
  std::vector<int> dist(n), state(n);  // state: 0 unseen, 1 on the current walk, 2 done
  std::vector<std::uint64_t> carried(n);
  std::vector<std::vector<int>> by_dist;
  for (const auto& d : dests) {
    for (int x : switches) {
      steps[x] = step_of(s, x, d.lid);
      state[x] = 0;
      dist[x] = -1;
      carried[x] = 0;
    }
    // The walk from every switch: the distance where it reaches the owner, -1 where it breaks.
    std::map<int, std::string> broken;  // switch -> why (first switches only matter for the text)
    for (int start : switches) {
      if (state[start] == 2) continue;
      std::vector<int> path;
      int x = start;
      std::string why;
      bool reached = false;
      int base = 0;  // reached: the distance of the node the walk ended at, beyond the path
      while (true) {
        if (state[x] == 2) {  // walked before: reached, or broken further on (said there)
          reached = dist[x] >= 0;
          base = dist[x];
          break;
        }
        if (state[x] == 1) {
          why = "the tables loop for LID " + std::to_string(d.lid) + " through " + s.name(x);
          break;
        }
        state[x] = 1;
        path.push_back(x);
        const Step& st = steps[x];
        if (!st.why.empty()) {
          why = st.why;
          break;
        }
        if (st.out == 0) {  // the switch itself: the end when it is the LID's owner
          if (d.port == 0 && d.node == x) reached = true, base = -1;
          else why = s.name(x) + " takes LID " + std::to_string(d.lid) + " for itself, it is not its LID";
          break;
        }
        if (s.nodes[st.next].type != NodeType::Switch) {
          if (st.next == d.node && (d.port == 0 || owns(s, st.next, st.next_port, d.lid))) reached = true, base = 0;
          else
            why = s.name(x) + " sends LID " + std::to_string(d.lid) + " to " + port_name(s, st.next, st.next_port) +
                  ", which does not own it";
          break;
        }
        x = st.next;
      }
      // Unwind the walk: everything on it gets the distance through the end, or is broken.
      for (auto it = path.rbegin(); it != path.rend(); ++it) {
        state[*it] = 2;
        if (reached) dist[*it] = ++base;
        else {
          dist[*it] = -1;
          if (!why.empty()) broken.emplace(*it, why);
        }
      }
    }
    std::vector<int> bad;
    std::string first_why;
    for (int x : switches)
      if (dist[x] < 0) {
        bad.push_back(x);
        if (first_why.empty()) {
          // the reason where this switch's own walk broke
          int y = x;
          for (int guard = 0; guard <= n && first_why.empty(); guard++) {
            auto it = broken.find(y);
            if (it != broken.end()) first_why = it->second;
            else if (steps[y].next >= 0 && s.nodes[steps[y].next].type == NodeType::Switch) y = steps[y].next;
            else break;
          }
        }
      }
    if (!bad.empty()) {
      UnreachableLid u;
      u.lid = d.lid;
      u.node = d.node;
      u.port = d.port;
      u.from_count = bad.size();
      u.from.assign(bad.begin(), bad.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(bad.size(), 16)));
      u.why = first_why.empty() ? "the walk breaks" : first_why;
      r.unreachable.push_back(std::move(u));
    }
    // Traffic from the HCA ports to d: the switches it enters by, in order of distance (farthest
    // first), carrying it on; every switch-to-switch hop adds a dependency.
    int maxd = 0;
    for (int x : switches) maxd = std::max(maxd, dist[x]);
    by_dist.assign(static_cast<std::size_t>(maxd) + 1, {});
    for (int x : switches)
      if (dist[x] >= 0) by_dist[static_cast<std::size_t>(dist[x])].push_back(x);
    const bool counted = d.port != 0 && d.lid == s.nodes[d.node].port(d.port)->info->lid;  // HCA base LIDs only
    for (int k = maxd; k >= 1; k--)
      for (int x : by_dist[static_cast<std::size_t>(k)]) {
        std::uint64_t own = static_cast<std::uint64_t>(sources_at[x]);
        if (d.port != 0 && s.nodes[d.node].port(d.port)->remote_node == x && port_up(*s.nodes[d.node].port(d.port)))
          own -= own ? 1 : 0;  // the destination port does not send to itself
        carried[x] += own;
        if (carried[x] == 0) continue;
        const Step& st = steps[x];
        if (counted) load[static_cast<std::size_t>(chan(x, st.out))] += carried[x];
        if (st.next >= 0 && s.nodes[st.next].type == NodeType::Switch) {
          carried[st.next] += carried[x];
          const Step& nx = steps[st.next];
          if (nx.out != 0 && dist[st.next] >= 1) {
            std::uint64_t key = static_cast<std::uint64_t>(chan(x, st.out)) << 32 | static_cast<std::uint32_t>(chan(st.next, nx.out));
            edges.emplace(key, d.lid);
          }
        }
      }
  }
  r.dependencies = edges.size();

  // Cycles in the dependency graph.
  std::vector<std::vector<int>> adj(chans.size());
  for (const auto& [key, lid] : edges) adj[key >> 32].push_back(static_cast<int>(key & 0xffffffffu));
  for (auto& a : adj) std::sort(a.begin(), a.end());
  int ncomp = 0;
  auto comp = strong_components(adj, ncomp);
  std::vector<int> size(static_cast<std::size_t>(ncomp), 0);
  for (int c : comp) size[static_cast<std::size_t>(c)]++;
  std::vector<char> reported(static_cast<std::size_t>(ncomp), 0);
  for (int v = 0; v < static_cast<int>(chans.size()); v++) {
    int c = comp[v];
    if (size[static_cast<std::size_t>(c)] < 2 || reported[static_cast<std::size_t>(c)]) continue;
    reported[static_cast<std::size_t>(c)] = 1;
    r.loops_found++;
    if (r.loops.size() >= o.max_loops) continue;
    CreditLoop loop;
    loop.channels = static_cast<std::size_t>(size[static_cast<std::size_t>(c)]);
    auto cyc = cycle_through(adj, comp, v);
    for (std::size_t i = 0; i < cyc.size(); i++) {
      loop.cycle.push_back(chans[static_cast<std::size_t>(cyc[i])]);
      std::uint64_t key = static_cast<std::uint64_t>(cyc[i]) << 32 | static_cast<std::uint32_t>(cyc[(i + 1) % cyc.size()]);
      auto it = edges.find(key);
      if (it != edges.end() && std::find(loop.lids.begin(), loop.lids.end(), it->second) == loop.lids.end())
        loop.lids.push_back(it->second);
    }
    r.loops.push_back(std::move(loop));
  }

  // Load of the switch-to-switch ports.
  for (int x : switches) {
    SwitchLoad sl;
    sl.node = x;
    for (const auto& p : s.nodes[x].ports) {
      if (p.number == 0 || p.remote_node < 0 || s.nodes[p.remote_node].type != NodeType::Switch || !port_up(p)) continue;
      std::uint64_t l = load[static_cast<std::size_t>(chan(x, p.number))];
      sl.ports++;
      sl.total_routes += l;
      if (l > sl.max_routes || sl.max_port == 0) {
        sl.max_routes = std::max(sl.max_routes, l);
        if (l >= sl.max_routes) sl.max_port = p.number;
      }
      r.busiest.push_back({{x, p.number}, l});
    }
    if (sl.ports >= 2 && static_cast<double>(sl.total_routes) / sl.ports >= o.min_mean && sl.ratio() >= o.max_ratio)
      r.unbalanced.push_back(sl);
  }
  std::stable_sort(r.busiest.begin(), r.busiest.end(), [](const PortLoad& a, const PortLoad& b) { return a.routes > b.routes; });
  if (r.busiest.size() > 10) r.busiest.resize(10);
  std::stable_sort(r.unbalanced.begin(), r.unbalanced.end(),
                   [](const SwitchLoad& a, const SwitchLoad& b) { return a.ratio() > b.ratio(); });
  return r;
}

std::vector<Finding> route_findings(const Subnet& s, const RouteCheck& r, const RouteCheckOptions& o) {
  std::vector<Finding> out;
  if (!r.judged) return out;
  auto f = [&](const char* id, Severity sev, std::string subject, std::string msg, std::string ev, std::string remedy) {
    out.push_back(make_finding(id, sev, std::move(subject), std::move(msg), std::move(ev), std::move(remedy)));
  };
  for (const auto& l : r.loops) {
    std::vector<std::string> links, lids;
    for (const auto& c : l.cycle) links.push_back(channel_name(s, c));
    for (auto lid : l.lids) {
      int owner = s.find_lid(lid);
      lids.push_back(std::to_string(lid) + (owner >= 0 ? " (" + s.name(owner) + ")" : ""));
    }
    f("fabric.credit_loop", Severity::Fail, s.name(l.cycle.front().node),
      "the forwarding tables make a credit loop over " + std::to_string(l.cycle.size()) + " link(s): " +
          core::join(links, ", ", 8) + ", back to the first: traffic on them can deadlock",
      "channel-dependency cycle over " + std::to_string(l.cycle.size()) + " links (" + std::to_string(l.channels) +
          " links in its strongly connected part); dependencies added by routes to LID(s) " + core::join(lids, ", ", 6) +
          (r.loops_found > r.loops.size() ? "; " + std::to_string(r.loops_found) + " such parts in all" : ""),
      "run the subnet manager with a deadlock-free routing engine for this topology: ftree or updn (up/down) for fat "
      "trees (OpenSM: routing_engine ftree, with a root GUID file if the roots are not found), dfsssp or lash for "
      "other topologies, which use virtual lanes to break cycles (this check reads one lane: with those engines, "
      "confirm with ibdiagnet's routing checks); then `fabscope fabric --routes` again");
  }
  for (const auto& u : r.unreachable) {
    std::vector<std::string> from;
    for (int x : u.from) from.push_back(s.name(x));
    f("fabric.lid_unreachable", Severity::Fail, u.port ? port_name(s, u.node, u.port) : s.name(u.node),
      dest_name(s, {u.lid, u.node, u.port}) + " cannot be reached from " + std::to_string(u.from_count) + " of " +
          std::to_string(r.switches) + " switch(es): " + u.why,
      "unreachable from " + core::join(from, ", ", 8) + (u.from_count > u.from.size() ? ", ..." : ""),
      "a subnet manager sweep should fill every table: check that the master SM runs and is not stuck (`sminfo`, "
      "its log), that the port is Active, and whether a link on the way is down (`fabscope fabric`); a heavy sweep "
      "(`kill -HUP` OpenSM's pid, or `opensm -R` settings) rebuilds the tables");
    if (out.size() > 64) break;
  }
  for (const auto& sl : r.unbalanced) {
    f("fabric.routes_unbalanced", Severity::Warn, s.name(sl.node),
      s.name(sl.node) + " sends " + std::to_string(sl.max_routes) + " routes out of port " + std::to_string(sl.max_port) +
          ", " + core::format_double("%.1f", sl.ratio()) + "x the mean of its " + std::to_string(sl.ports) +
          " switch-to-switch ports (" + core::format_double("%.1f", static_cast<double>(sl.total_routes) / sl.ports) + ")",
      "routes counted over every pair of HCA ports, one per source port and destination LID; judged at " +
          core::format_double("%.1f", o.max_ratio) + "x the mean or more",
      "routes crowd onto few links: after a link came back, the SM may not have rerouted (a heavy sweep balances "
      "again); with min-hop on a fat tree, use the ftree or updn routing engine; a port carrying no route beside busy "
      "ones may be a link the SM does not use");
  }
  return out;
}

json to_json(const Subnet& s, const RouteCheck& r) {
  json loops = json::array(), unreach = json::array(), busiest = json::array(), unbalanced = json::array();
  for (const auto& l : r.loops) {
    json cyc = json::array();
    for (const auto& c : l.cycle) cyc.push_back({{"node", s.name(c.node)}, {"guid", guid_hex(s.nodes[c.node].guid)}, {"port", c.port}});
    loops.push_back({{"cycle", std::move(cyc)}, {"channels", l.channels}, {"lids", l.lids}});
  }
  for (const auto& u : r.unreachable) {
    json from = json::array();
    for (int x : u.from) from.push_back(s.name(x));
    unreach.push_back({{"lid", u.lid}, {"node", s.name(u.node)}, {"port", u.port}, {"from", std::move(from)},
                       {"from_count", u.from_count}, {"why", u.why}});
  }
  for (const auto& b : r.busiest)
    busiest.push_back({{"node", s.name(b.channel.node)}, {"port", b.channel.port}, {"routes", b.routes}});
  for (const auto& sl : r.unbalanced)
    unbalanced.push_back({{"node", s.name(sl.node)}, {"ports", sl.ports}, {"max_routes", sl.max_routes},
                          {"max_port", sl.max_port}, {"total_routes", sl.total_routes}, {"ratio", sl.ratio()}});
  return {{"judged", r.judged}, {"switches", r.switches}, {"destinations", r.destinations}, {"sources", r.sources},
          {"dependencies", r.dependencies}, {"credit_loops", r.loops_found}, {"loops", std::move(loops)},
          {"unreachable", std::move(unreach)}, {"busiest_ports", std::move(busiest)},
          {"unbalanced", std::move(unbalanced)}};
}

std::string render_route_check(const Subnet& s, const RouteCheck& r) {
  if (!r.judged) return "";
  std::string o = "Routing: " + std::to_string(r.destinations) + " LIDs, " + std::to_string(r.switches) + " switches, " +
                  std::to_string(r.sources) + " HCA ports sending\n  credit loops " + std::to_string(r.loops_found) +
                  ", LIDs unreachable from some switch " + std::to_string(r.unreachable.size()) +
                  ", unbalanced switches " + std::to_string(r.unbalanced.size()) + "\n";
  if (!r.busiest.empty() && r.busiest.front().routes) {
    o += "  busiest switch-to-switch ports (routes between HCA ports):\n";
    for (std::size_t i = 0; i < r.busiest.size() && i < 5; i++) {
      const auto& c = r.busiest[i].channel;
      const Port* p = s.nodes[c.node].port(c.port);
      std::string head = "    " + std::to_string(r.busiest[i].routes) + "  " + port_name(s, c.node, c.port);
      std::string tail = "-> " + (p && p->remote_node >= 0 ? port_name(s, p->remote_node, p->remote_port) : "?");
      // names are never cut: a pair too long for 100 columns goes on two lines
      o += head.size() + 1 + tail.size() <= 100 ? head + " " + tail + "\n" : head + "\n      " + tail + "\n";
    }
  }
  return o;
}

}  // namespace fabscope::fabric
