#include "fabric/slurm_topology.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
#include <sstream>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/hostlist.hpp"
#include "core/strings.hpp"
#include "fabric/judge.hpp"

namespace fabscope::fabric {

const std::vector<FindingInfo>& topology_checks() {
  static const std::vector<FindingInfo> r = finding_table("docs/fabric.md", {
      {"fabric.topology_duplicate_name", "fabric", Severity::Fail, "two hosts of the fabric claim one name"},
      {"fabric.topology_name_unmapped", "fabric", Severity::Warn, "HCAs whose host cannot be named"},
      {"fabric.topology_host_unplaced", "fabric", Severity::Warn, "a host whose HCAs reach no switch"},
      {"fabric.topology_uplinks_degraded", "fabric", Severity::Warn, "a leaf with uplinks down or below their tier"},
      {"fabric.topology_host_not_found", "fabric", Severity::Warn, "hosts of the host list the fabric lacks"},
      {"fabric.topology_host_moved", "fabric", Severity::Warn, "a topology file places a host under another leaf"},
      {"fabric.topology_host_missing", "fabric", Severity::Warn, "hosts of the fabric a topology file lacks"},
      {"fabric.topology_host_unknown", "fabric", Severity::Warn, "hosts of a topology file the fabric lacks"},
      {"fabric.topology_switch_gone", "fabric", Severity::Warn, "a switch of a topology file the fabric lacks"},
      {"fabric.topology_host_rails", "fabric", Severity::Info, "hosts with HCAs on several leaves (rails)"},
  });
  return r;
}

namespace {

constexpr std::size_t kMaxTopoNameChars = 63;  // a Kubernetes label value; Slurm's switch names allow 64

Finding topology_finding(const std::string& id, Severity sev, std::string subject, std::string message,
                     std::string evidence, std::string remedy) {
  return registered_finding(topology_checks(), id, sev, std::move(subject), std::move(message), std::move(evidence),
                            std::move(remedy));
}

bool topo_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

// What Slurm's hostlist parser and a Kubernetes label value both take: letters, digits, '-', '_',
// '.', starting and ending with a letter or digit, at most 63 characters.
bool topo_usable_name(const std::string& n) {
  if (n.empty() || n.size() > kMaxTopoNameChars) return false;
  if (!std::isalnum(static_cast<unsigned char>(n.front())) || !std::isalnum(static_cast<unsigned char>(n.back())))
    return false;
  return std::all_of(n.begin(), n.end(), topo_name_char);
}

std::string topo_shown(const std::string& s) {
  return "'" + core::printable(s.substr(0, 60)) + (s.size() > 60 ? "...'" : "'");
}

// Natural order: "node2" before "node10".
struct TopoNaturalKey {
  std::string prefix;
  std::size_t width = 0;
  unsigned long long number = 0;
  bool has_number = false;
};
TopoNaturalKey topo_natural_key(const std::string& s) {
  std::size_t i = s.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(s[i - 1]))) --i;
  TopoNaturalKey k;
  k.prefix = s.substr(0, i);
  const std::string digits = s.substr(i);
  if (!digits.empty() && digits.size() <= 18) {
    k.has_number = true;
    k.width = digits.size();
    k.number = std::stoull(digits);
  } else {
    k.prefix = s;
  }
  return k;
}
bool topo_natural_less(const std::string& a, const std::string& b) {
  const TopoNaturalKey x = topo_natural_key(a), y = topo_natural_key(b);
  if (x.prefix != y.prefix) return x.prefix < y.prefix;
  if (x.has_number != y.has_number) return !x.has_number;
  if (x.number != y.number) return x.number < y.number;
  return a < b;
}
void topo_natural_sort(std::vector<std::string>& v) {
  std::sort(v.begin(), v.end(), topo_natural_less);
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

// A port that carries traffic: Active, or linked with its PortInfo not read (a saved sweep of an
// older fabric) — the cable is there.
bool topo_port_up(const Port& p) {
  if (p.remote_node < 0) return false;
  return !p.info || p.info->state == PortState::Active;
}

const std::string* mapped_name(const NameMap& m, const Node& n) {
  if (auto it = m.by_guid.find(n.guid); it != m.by_guid.end()) return &it->second;
  for (const auto& p : n.ports)
    if (p.guid)
      if (auto it = m.by_guid.find(p.guid); it != m.by_guid.end()) return &it->second;
  if (auto it = m.by_description.find(n.description); it != m.by_description.end()) return &it->second;
  return nullptr;
}

// The part of a switch's description that names it: "MF0;leaf01:MQM9700/U1" -> "leaf01"
// (Mellanox/NVIDIA switches), else the description with characters a name cannot hold made '-'.
std::string topo_switch_candidate(const std::string& d) {
  std::string c = d;
  if (const auto semi = d.find(';'), colon = d.find(':', d.find(';') + 1);
      semi != std::string::npos && colon != std::string::npos && colon > semi + 1)
    c = d.substr(semi + 1, colon - semi - 1);
  for (char& ch : c)
    if (!topo_name_char(ch)) ch = '-';
  while (!c.empty() && !std::isalnum(static_cast<unsigned char>(c.front()))) c.erase(c.begin());
  while (!c.empty() && !std::isalnum(static_cast<unsigned char>(c.back()))) c.pop_back();
  return c;
}

// Node descriptions nobody set: rdma-core's default before rdma-ndd runs names the device
// ("MT4123 ConnectX6 Mellanox Technologies"), never the host.
bool topo_default_description(const std::string& d) {
  const auto words = core::split_ws(d);
  if (words.empty()) return true;
  const std::string& w = words.front();
  if (w.size() > 2 && w[0] == 'M' && w[1] == 'T' &&
      w.find_first_not_of("0123456789", 2) == std::string::npos)
    return true;
  return core::contains(d, "Mellanox Technologies");
}

std::string topo_list(const std::vector<std::string>& items, std::size_t max_items = 8) {
  return core::join(items, ", ", max_items);
}

struct TopoBuilder {
  const Subnet& s;
  const TopologyOptions& opt;
  std::vector<int> level;
  std::vector<std::string> switch_name;   // per node index ("" for non-switches)
  SchedTopology out;

  void name_switches() {
    switch_name.assign(s.nodes.size(), "");
    std::map<std::string, int> uses;
    std::vector<std::string> candidate(s.nodes.size());
    for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n) {
      const Node& node = s.nodes[n];
      if (node.type != NodeType::Switch) continue;
      const std::string* m = mapped_name(opt.names, node);
      candidate[n] = m ? *m : topo_switch_candidate(node.description);
      ++uses[candidate[n]];
    }
    for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n) {
      if (s.nodes[n].type != NodeType::Switch) continue;
      const std::string& c = candidate[n];
      switch_name[n] = topo_usable_name(c) && uses[c] == 1 ? c : guid_hex(s.nodes[n].guid);
    }
  }

  struct Hca {
    int node;
    std::string host;
    std::vector<int> leaves;  // switch node indexes its up ports reach
  };

  void build() {
    level = levels(s);
    name_switches();
    out.source = s.source;
    out.swept_at = s.swept_at;

    // HCAs to hosts.
    std::vector<Hca> hcas;
    std::vector<std::string> unmapped, left_out;
    for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n) {
      const Node& node = s.nodes[n];
      if (node.type != NodeType::Hca) continue;
      std::string host;
      std::string why;
      if (const std::string* m = mapped_name(opt.names, node)) {
        host = *m;
      } else if (node.description.empty()) {
        why = "no node description";
      } else if (topo_default_description(node.description)) {
        why = "default description " + topo_shown(node.description);
      } else {
        host = core::split_ws(node.description).front();
        if (!topo_usable_name(host)) why = "first word " + topo_shown(host) + " is no Slurm node name", host.clear();
      }
      if (!host.empty() && !opt.keep.empty() && !opt.keep.count(host)) {
        // rdma-ndd writes the hostname as the system has it: a fully qualified one matches the
        // short node name Slurm knows.
        const std::string shrt = host.substr(0, host.find('.'));
        if (opt.keep.count(shrt)) host = shrt;
        else {
          left_out.push_back(host);
          continue;
        }
      }
      if (host.empty()) {
        unmapped.push_back(guid_hex(node.guid) + " (" + why + ")");
        continue;
      }
      Hca h{n, host, {}};
      for (const auto& p : node.ports)
        if (topo_port_up(p) && p.remote_node < static_cast<int>(s.nodes.size()) &&
            s.nodes[p.remote_node].type == NodeType::Switch)
          h.leaves.push_back(p.remote_node);
      std::sort(h.leaves.begin(), h.leaves.end());
      h.leaves.erase(std::unique(h.leaves.begin(), h.leaves.end()), h.leaves.end());
      hcas.push_back(std::move(h));
    }
    if (!unmapped.empty())
      out.findings.push_back(topology_finding(
          "fabric.topology_name_unmapped", Severity::Warn, std::to_string(unmapped.size()) + " HCA(s)",
          std::to_string(unmapped.size()) +
              " HCA(s) have no usable host name and are left out of the topology: their hosts are in no "
              "switch",
          "hcas=" + topo_list(unmapped),
          "set the node description on the host (rdma-ndd, or 'echo \"$(hostname -s) mlx5_0\" > "
          "/sys/class/infiniband/mlx5_0/node_desc'), or name the GUID in a --name-map file"));

    // Hosts: their HCAs grouped by name; a description held by two HCAs is two hosts claiming a name.
    std::map<std::string, std::vector<const Hca*>> by_host;
    for (const auto& h : hcas) by_host[h.host].push_back(&h);
    std::set<std::string> duplicate;
    for (const auto& [host, list] : by_host) {
      std::map<std::string, std::vector<std::uint64_t>> by_desc;
      for (const Hca* h : list)
        if (!mapped_name(opt.names, s.nodes[h->node])) by_desc[s.nodes[h->node].description].push_back(s.nodes[h->node].guid);
      for (const auto& [desc, guids] : by_desc) {
        if (guids.size() < 2) continue;
        duplicate.insert(host);
        std::vector<std::string> g;
        for (auto x : guids) g.push_back(guid_hex(x));
        out.findings.push_back(topology_finding(
            "fabric.topology_duplicate_name", Severity::Fail, host,
            std::to_string(guids.size()) + " HCAs have the node description " + topo_shown(desc) +
                ": two machines claim the host name '" + host + "', so it is left out of the topology",
            "description=" + topo_shown(desc) + " guids=" + topo_list(g),
            "give each machine its own hostname and node description (a cloned image keeps the old one), "
            "or name each GUID in a --name-map file"));
      }
    }

    // Place each host under its first HCA's leaf (the HCA whose description sorts first: mlx5_0).
    std::map<int, std::vector<std::string>> hosts_of_leaf;
    std::vector<std::string> unplaced;
    std::vector<std::string> rails;
    for (auto& [host, list] : by_host) {
      if (duplicate.count(host)) continue;
      std::vector<const Hca*> sorted = list;
      std::sort(sorted.begin(), sorted.end(), [&](const Hca* a, const Hca* b) {
        const Node &x = s.nodes[a->node], &y = s.nodes[b->node];
        return std::pair(x.description, x.guid) < std::pair(y.description, y.guid);
      });
      TopoHost th;
      th.name = host;
      std::vector<int> leaves;
      for (const Hca* h : sorted) {
        th.hca_guids.push_back(s.nodes[h->node].guid);
        for (int l : h->leaves)
          if (std::find(leaves.begin(), leaves.end(), l) == leaves.end()) leaves.push_back(l);
      }
      for (int l : leaves) th.leaves.push_back(switch_name[l]);
      if (leaves.empty()) {
        unplaced.push_back(host);
      } else {
        hosts_of_leaf[leaves.front()].push_back(host);
        th.leaf = switch_name[leaves.front()];
        if (leaves.size() > 1) rails.push_back(host + " (" + core::join(th.leaves, "+") + ")");
      }
      out.hosts.push_back(std::move(th));
    }
    if (!unplaced.empty())
      out.findings.push_back(topology_finding(
          "fabric.topology_host_unplaced", Severity::Warn, std::to_string(unplaced.size()) + " host(s)",
          std::to_string(unplaced.size()) +
              " host(s) have no active link to a switch and are in no switch of the topology; Slurm "
              "warns 'switches lack access' and places no multi-node job on them",
          "hosts=" + topo_list(unplaced),
          "check the hosts' cables and ports ('ibstat' on the host, 'fabscope fabric' for the link), then "
          "sweep and write the topology again"));
    if (!rails.empty())
      out.findings.push_back(topology_finding(
          "fabric.topology_host_rails", Severity::Info, std::to_string(rails.size()) + " host(s)",
          std::to_string(rails.size()) +
              " host(s) have HCAs on more than one leaf (rails); each is placed under the leaf of its first "
              "HCA (by node description, mlx5_0 first), so jobs are packed by their first rail",
          "hosts=" + topo_list(rails),
          "nothing to do in a rail-optimized fabric (hosts sharing a first-rail leaf share the other "
          "rails' leaves too); otherwise recable the host so its HCAs share a leaf"));

    // Leaves: switches with hosts; their uplinks against the usual count and their tier.
    std::map<int, int> uplinks;
    std::map<int, std::vector<std::string>> slow_uplinks;
    const auto facts = link_facts(s);
    for (const auto& [leaf, hosts] : hosts_of_leaf) {
      int up = 0;
      for (const auto& p : s.nodes[leaf].ports)
        if (p.number > 0 && topo_port_up(p) && p.remote_node < static_cast<int>(s.nodes.size()) &&
            s.nodes[p.remote_node].type == NodeType::Switch && level[p.remote_node] > level[leaf])
          ++up;
      uplinks[leaf] = up;
    }
    for (const auto& f : facts) {
      for (auto [a, b] : {std::pair{f.node, f.peer}, std::pair{f.peer, f.node}})
        if (hosts_of_leaf.count(a) && b >= 0 && s.nodes[b].type == NodeType::Switch && level[b] > level[a] &&
            f.below_tier)
          slow_uplinks[a].push_back(f.name + " at " + std::to_string(f.width) + "X " + to_string(f.speed) +
                                    " (tier " + std::to_string(f.tier_width) + "X " + to_string(f.tier_speed) + ")");
    }
    std::map<int, int> count_of_uplinks;
    for (const auto& [leaf, up] : uplinks) ++count_of_uplinks[up];
    int usual = 0, most = 0;
    for (const auto& [up, n] : count_of_uplinks)
      if (n >= most) usual = up, most = n;  // a tie goes to the higher count

    std::set<int> skipped;
    for (const auto& [leaf, hosts] : hosts_of_leaf) {
      TopoSwitch sw;
      sw.name = switch_name[leaf];
      sw.node = leaf;
      sw.level = 1;
      sw.hosts = hosts;
      topo_natural_sort(sw.hosts);
      sw.uplinks = uplinks[leaf];
      sw.uplinks_usual = usual;
      const bool fewer = sw.uplinks < usual;
      const auto& slow = slow_uplinks[leaf];
      sw.degraded = fewer || !slow.empty();
      if (sw.degraded) {
        std::string what;
        if (fewer) what = std::to_string(sw.uplinks) + " of the usual " + std::to_string(usual) + " uplinks active";
        if (!slow.empty()) what += std::string(what.empty() ? "" : "; ") + std::to_string(slow.size()) + " below their tier";
        const bool skip = opt.skip_degraded_leaves;
        if (skip) skipped.insert(leaf);
        out.findings.push_back(topology_finding(
            "fabric.topology_uplinks_degraded", Severity::Warn, sw.name,
            "leaf " + sw.name + " has " + what + ": its " + std::to_string(sw.hosts.size()) +
                " host(s) reach the rest of the fabric through less bandwidth than the topology tells the "
                "scheduler" +
                (skip ? "; left out of the placement (--skip-degraded)" : ""),
            "uplinks=" + std::to_string(sw.uplinks) + " usual=" + std::to_string(usual) +
                (slow.empty() ? "" : " slow=" + topo_list(slow, 4)) + " hosts=" + topo_list(sw.hosts),
            "find the missing or slow uplinks with 'fabscope fabric' (fabric.link_degraded, "
            "fabric.link_missing with --expect) and repair them; until then keep multi-leaf jobs off " +
                sw.name + (skip ? "" : " (--skip-degraded leaves its hosts out of the placement)")));
      }
      if (skip_leaf(leaf, skipped)) {
        for (auto& h : out.hosts)
          if (h.leaf == sw.name) h.leaf.clear();
        continue;
      }
      out.switches.push_back(std::move(sw));
    }

    // Upper switches, level by level: each with the switches one level down that are in the
    // topology; a switch left with no child is left out.
    std::set<int> present;
    for (const auto& sw : out.switches) present.insert(sw.node);
    int max_level = 0;
    for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n)
      if (s.nodes[n].type == NodeType::Switch) max_level = std::max(max_level, level[n]);
    for (int lv = 2; lv <= max_level; ++lv) {
      std::vector<TopoSwitch> row;
      for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n) {
        if (s.nodes[n].type != NodeType::Switch || level[n] != lv || hosts_of_leaf.count(n)) continue;
        TopoSwitch sw;
        sw.name = switch_name[n];
        sw.node = n;
        sw.level = lv;
        for (const auto& p : s.nodes[n].ports)
          if (p.number > 0 && topo_port_up(p) && p.remote_node < static_cast<int>(s.nodes.size()) &&
              present.count(p.remote_node) && level[p.remote_node] == lv - 1)
            sw.children.push_back(switch_name[p.remote_node]);
        topo_natural_sort(sw.children);
        if (!sw.children.empty()) row.push_back(std::move(sw));
      }
      for (auto& sw : row) present.insert(sw.node), out.switches.push_back(std::move(sw));
    }
    std::stable_sort(out.switches.begin(), out.switches.end(), [](const TopoSwitch& a, const TopoSwitch& b) {
      if (a.level != b.level) return a.level < b.level;
      return topo_natural_less(a.name, b.name);
    });
    std::sort(out.hosts.begin(), out.hosts.end(),
              [](const TopoHost& a, const TopoHost& b) { return topo_natural_less(a.name, b.name); });

    if (!opt.keep.empty()) {
      std::vector<std::string> absent;
      for (const auto& k : opt.keep)
        if (!out.find_host(k)) absent.push_back(k);
      topo_natural_sort(absent);
      if (!absent.empty())
        out.findings.push_back(topology_finding(
            "fabric.topology_host_not_found", Severity::Warn, std::to_string(absent.size()) + " host(s)",
            std::to_string(absent.size()) +
                " host(s) of the host list have no HCA of that name in the fabric (powered off, cabled to "
                "another subnet, or named otherwise in their node description): they are in no switch",
            "hosts=" + topo_list(absent),
            "check that the hosts are up and on this subnet ('ibstat' on the host); map names that differ "
            "with --name-map"));
    }
    (void)left_out;
    const auto& reg = topology_checks();
    std::stable_sort(out.findings.begin(), out.findings.end(), [&](const Finding& a, const Finding& b) {
      if (a.severity != b.severity) return a.severity > b.severity;
      return finding_rank(reg, a.id) < finding_rank(reg, b.id);
    });
  }

  static bool skip_leaf(int leaf, const std::set<int>& skipped) { return skipped.count(leaf) > 0; }
};

std::string topo_header(const SchedTopology& t, const std::string& what) {
  std::ostringstream os;
  int leaves = 0, upper = 0;
  std::size_t placed = 0;
  for (const auto& sw : t.switches) (sw.level == 1 ? leaves : upper)++;
  for (const auto& h : t.hosts) placed += !h.leaf.empty();
  os << "# " << what << ", written by fabscope fabric from the sweep of " << core::printable(t.source)
     << (t.swept_at.empty() ? "" : " at " + core::printable(t.swept_at)) << "\n";
  os << "# " << leaves << " leaf switch(es), " << upper << " switch(es) above them, " << placed << " host(s) placed";
  if (placed < t.hosts.size()) os << ", " << t.hosts.size() - placed << " not placed";
  os << "\n";
  for (const auto& f : t.findings) {
    std::string line = f.id + " (" + to_string(f.severity) + "): " + f.subject + ": " + f.message;
    os << "# note: " << core::printable(line) << "\n";
  }
  return os.str();
}

std::string topo_yaml_quoted(const std::string& s) { return "\"" + s + "\""; }  // names hold no '"' or '\'

}  // namespace

const TopoSwitch* SchedTopology::find_switch(const std::string& name) const {
  for (const auto& sw : switches)
    if (sw.name == name) return &sw;
  return nullptr;
}

const TopoHost* SchedTopology::find_host(const std::string& name) const {
  for (const auto& h : hosts)
    if (h.name == name) return &h;
  return nullptr;
}

SchedTopology scheduler_topology(const Subnet& s, const TopologyOptions& opt) {
  TopoBuilder b{s, opt, {}, {}, {}};
  b.build();
  return std::move(b.out);
}

NameMap parse_name_map(const std::string& text, const std::string& origin) {
  NameMap m;
  int line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line(core::trim(std::string_view(text).substr(pos, end - pos)));
    pos = end + 1;
    ++line_no;
    const std::string at = origin + ":" + std::to_string(line_no) + ": ";
    if (line.empty() || line[0] == '#') continue;
    if (line.size() > 1024) throw Error(at + "line longer than 1024 characters");
    // The name is the last word, or the last double-quoted string.
    std::string key, name;
    if (line.back() == '"') {
      const auto open = line.rfind('"', line.size() - 2);
      if (open == std::string::npos) throw Error(at + "unbalanced quote in " + topo_shown(line));
      name = line.substr(open + 1, line.size() - open - 2);
      key = std::string(core::trim(std::string_view(line).substr(0, open)));
    } else {
      const auto sp = line.find_last_of(" \t");
      if (sp == std::string::npos)
        throw Error(at + "expected 'GUID NAME' or 'DESCRIPTION NAME', got only " + topo_shown(line));
      name = line.substr(sp + 1);
      key = std::string(core::trim(std::string_view(line).substr(0, sp)));
    }
    if (key.size() >= 2 && key.front() == '"' && key.back() == '"') key = key.substr(1, key.size() - 2);
    if (key.empty()) throw Error(at + "no GUID or description before the name " + topo_shown(name));
    if (!topo_usable_name(name))
      throw Error(at + "name " + topo_shown(name) +
                  " is not a Slurm node name (letters, digits, '-', '_', '.', at most 63, starting and ending "
                  "with a letter or digit)");
    auto put = [&](auto& table, const auto& k, const std::string& shown_key) {
      auto [it, fresh] = table.emplace(k, name);
      if (!fresh && it->second != name)
        throw Error(at + shown_key + " is mapped to " + topo_shown(it->second) + " already, now to " + topo_shown(name));
    };
    if (key.size() > 2 && key[0] == '0' && (key[1] == 'x' || key[1] == 'X')) {
      const bool hex = key.size() <= 18 && key.find_first_not_of("0123456789abcdefABCDEF", 2) == std::string::npos;
      const std::uint64_t g = hex ? parse_guid(key) : 0;
      if (!g) throw Error(at + topo_shown(key) + " is not a GUID (0x and up to 16 hex digits)");
      put(m.by_guid, g, "GUID " + key);
    } else {
      put(m.by_description, key, "description " + topo_shown(key));
    }
  }
  return m;
}

NameMap load_name_map(const std::string& path) { return parse_name_map(core::read_input(path, 16u << 20), path); }

std::string compress_hostlist(std::vector<std::string> names) {
  topo_natural_sort(names);
  std::vector<std::string> items;
  std::size_t i = 0;
  while (i < names.size()) {
    const TopoNaturalKey k = topo_natural_key(names[i]);
    if (!k.has_number || k.prefix.empty() || k.prefix.find_first_of("[],") != std::string::npos) {
      items.push_back(names[i++]);
      continue;
    }
    // Names of one prefix and digit width; consecutive numbers make a range.
    std::vector<std::string> ranges;
    std::size_t j = i;
    std::string digits_lo;
    unsigned long long lo = 0, prev = 0;
    auto close = [&](unsigned long long last, const std::string& hi_digits) {
      ranges.push_back(last == lo ? digits_lo : digits_lo + "-" + hi_digits);
    };
    std::string prev_digits;
    while (j < names.size()) {
      const TopoNaturalKey kj = topo_natural_key(names[j]);
      if (!kj.has_number || kj.prefix != k.prefix || kj.width != k.width) break;
      const std::string digits = names[j].substr(kj.prefix.size());
      if (j == i) {
        lo = prev = kj.number, digits_lo = prev_digits = digits;
      } else if (kj.number == prev + 1) {
        prev = kj.number, prev_digits = digits;
      } else {
        close(prev, prev_digits);
        lo = prev = kj.number, digits_lo = prev_digits = digits;
      }
      ++j;
    }
    close(prev, prev_digits);
    if (j - i == 1) items.push_back(names[i]);
    else items.push_back(k.prefix + "[" + core::join(ranges, ",") + "]");
    i = j;
  }
  return core::join(items, ",");
}

std::string render_slurm_tree(const SchedTopology& t) {
  std::ostringstream os;
  os << topo_header(t, "topology.conf for TopologyPlugin=topology/tree");
  for (const auto& sw : t.switches) {
    if (sw.level == 1) os << "SwitchName=" << sw.name << " Nodes=" << compress_hostlist(sw.hosts) << "\n";
    else os << "SwitchName=" << sw.name << " Switches=" << compress_hostlist(sw.children) << "\n";
  }
  return os.str();
}

namespace {
std::size_t topo_smallest_block(const SchedTopology& t) {
  std::size_t smallest = 0;
  for (const auto& sw : t.switches)
    if (sw.level == 1 && (smallest == 0 || sw.hosts.size() < smallest)) smallest = sw.hosts.size();
  return smallest;
}
}  // namespace

std::string render_slurm_block(const SchedTopology& t) {
  std::ostringstream os;
  os << topo_header(t, "topology.conf for TopologyPlugin=topology/block (Slurm 23.11 and later), one block per leaf");
  for (const auto& sw : t.switches)
    if (sw.level == 1) os << "BlockName=" << sw.name << " Nodes=" << compress_hostlist(sw.hosts) << "\n";
  // The base block is the smallest leaf: every block holds at least one whole base block.
  if (const std::size_t b = topo_smallest_block(t)) os << "BlockSizes=" << b << "\n";
  return os.str();
}

std::string render_slurm_yaml(const SchedTopology& t) {
  std::ostringstream os;
  os << topo_header(t, "topology.yaml (Slurm 25.05 and later): the tree topology, and one block per leaf");
  os << "---\n";
  os << "- topology: fabric-tree\n  cluster_default: true\n  tree:\n    switches:\n";
  for (const auto& sw : t.switches) {
    os << "      - switch: " << topo_yaml_quoted(sw.name) << "\n";
    if (sw.level == 1) os << "        nodes: " << topo_yaml_quoted(compress_hostlist(sw.hosts)) << "\n";
    else os << "        children: " << topo_yaml_quoted(compress_hostlist(sw.children)) << "\n";
  }
  os << "- topology: fabric-block\n  block:\n";
  if (const std::size_t b = topo_smallest_block(t)) os << "    block_sizes:\n      - " << b << "\n";
  os << "    blocks:\n";
  for (const auto& sw : t.switches)
    if (sw.level == 1)
      os << "      - block: " << topo_yaml_quoted(sw.name) << "\n        nodes: " << topo_yaml_quoted(compress_hostlist(sw.hosts))
         << "\n";
  return os.str();
}

std::map<std::string, std::map<std::string, std::string>> k8s_labels(const SchedTopology& t) {
  // The first parent by name of each switch.
  std::map<std::string, std::string> parent;
  for (const auto& sw : t.switches)
    for (const auto& c : sw.children) {
      auto it = parent.find(c);
      if (it == parent.end() || topo_natural_less(sw.name, it->second)) parent[c] = sw.name;
    }
  std::map<std::string, std::map<std::string, std::string>> out;
  const char* const keys[] = {"network.topology.nvidia.com/block", "network.topology.nvidia.com/spine",
                              "network.topology.nvidia.com/datacenter"};
  for (const auto& h : t.hosts) {
    if (h.leaf.empty()) continue;
    auto& labels = out[h.name];
    std::string at = h.leaf;
    for (const char* key : keys) {
      labels[key] = at;
      auto it = parent.find(at);
      if (it == parent.end()) break;
      at = it->second;
    }
  }
  return out;
}

json k8s_labels_json(const SchedTopology& t) {
  json nodes = json::object();
  for (const auto& [host, labels] : k8s_labels(t)) {
    json l = json::object();
    for (const auto& [k, v] : labels) l[k] = v;
    nodes[host] = std::move(l);
  }
  return json{{"schema", "fabscope.fabric.k8s-labels"}, {"schema_version", 1}, {"nodes", std::move(nodes)},
              {"findings", t.findings}};
}

std::string k8s_labels_script(const SchedTopology& t) {
  std::ostringstream os;
  os << "#!/bin/sh\n" << topo_header(t, "Kubernetes node labels (topograph's keys)");
  os << "set -e\n";
  const auto labels = k8s_labels(t);
  std::vector<std::string> hosts;
  for (const auto& [h, l] : labels) hosts.push_back(h);
  std::sort(hosts.begin(), hosts.end(), topo_natural_less);
  for (const auto& h : hosts) {
    os << "kubectl label --overwrite node " << h;
    for (const auto& [k, v] : labels.at(h)) os << " " << k << "=" << v;
    os << "\n";
  }
  return os.str();
}

json topology_json(const SchedTopology& t, const std::string& format, const std::string& text) {
  json sws = json::array();
  for (const auto& sw : t.switches) {
    json j{{"name", sw.name}, {"level", sw.level}};
    if (sw.level == 1) {
      j["hosts"] = sw.hosts;
      j["uplinks"] = sw.uplinks;
      j["uplinks_usual"] = sw.uplinks_usual;
      j["degraded"] = sw.degraded;
    } else {
      j["children"] = sw.children;
    }
    sws.push_back(std::move(j));
  }
  json hosts = json::array();
  for (const auto& h : t.hosts) {
    json g = json::array();
    for (auto x : h.hca_guids) g.push_back(guid_hex(x));
    hosts.push_back({{"name", h.name}, {"leaf", h.leaf}, {"leaves", h.leaves}, {"hca_guids", std::move(g)}});
  }
  const SeverityCounts c = count_severities(t.findings);
  return json{{"schema", "fabscope.fabric.topology"},
              {"schema_version", 1},
              {"source", t.source},
              {"swept_at", t.swept_at},
              {"format", format},
              {"switches", std::move(sws)},
              {"hosts", std::move(hosts)},
              {"text", text},
              {"findings", t.findings},
              {"summary", {{"fail", c.fail}, {"warn", c.warn}, {"info", c.info}, {"worst", to_string(worst(t.findings))}}},
              {"exit_code", exit_code_for(t.findings)}};
}

// --- reading topology.conf -------------------------------------------------------------------

TopologyConf parse_topology_conf(const std::string& text, const std::string& origin) {
  TopologyConf conf;
  conf.origin = origin;
  std::map<std::string, std::size_t> index;
  int line_no = 0;
  std::size_t pos = 0;
  auto expand = [&](const std::string& at, const std::string& key, const std::string& value) {
    try {
      auto v = core::expand_hostlist(value);
      if (v.empty()) throw Error(at + key + "= is empty");
      return v;
    } catch (const UsageError& e) {
      throw Error(at + key + "=" + topo_shown(value) + ": " + e.what());
    }
  };
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    const int first_line = ++line_no;
    // Slurm's parser joins a line ending in '\' with the next.
    while (!line.empty() && line.back() == '\\' && pos < text.size()) {
      line.pop_back();
      end = text.find('\n', pos);
      if (end == std::string::npos) end = text.size();
      line += text.substr(pos, end - pos);
      pos = end + 1;
      ++line_no;
    }
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    const std::string at = origin + ":" + std::to_string(first_line) + ": ";
    if (line.size() > 1u << 20) throw Error(at + "line longer than 1 MiB");
    const auto words = core::split_ws(line);
    if (words.empty()) continue;
    ConfSwitch sw;
    sw.line = first_line;
    bool have_nodes = false, have_switches = false, block_sizes = false;
    for (std::size_t i = 0; i < words.size(); ++i) {
      const auto eq = words[i].find('=');
      if (eq == std::string::npos || eq == 0) throw Error(at + "expected KEY=VALUE, got " + topo_shown(words[i]));
      const std::string key = core::lower(words[i].substr(0, eq));
      std::string value = words[i].substr(eq + 1);
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
      if (i == 0) {
        if (key == "blocksizes") {
          block_sizes = true;
          continue;
        }
        if (key != "switchname" && key != "blockname")
          throw Error(at + "a line starts with SwitchName= (or BlockName=, BlockSizes=), not " + topo_shown(words[i]));
        if (value.empty()) throw Error(at + "empty switch name");
        if (value.size() > 64) throw Error(at + "switch name " + topo_shown(value) + " is longer than 64 characters");
        sw.name = value;
      } else if (block_sizes) {
        throw Error(at + "BlockSizes= stands alone on its line");
      } else if (key == "nodes") {
        sw.nodes = expand(at, "Nodes", value);
        have_nodes = true;
      } else if (key == "switches") {
        sw.switches = expand(at, "Switches", value);
        have_switches = true;
      } else if (key == "linkspeed") {
        if (!core::parse_u64(value)) throw Error(at + "LinkSpeed=" + topo_shown(value) + " is not a number");
      } else {
        throw Error(at + "unknown key " + topo_shown(words[i]) + " (SwitchName lines take Nodes=, Switches=, LinkSpeed=)");
      }
    }
    if (block_sizes) continue;
    if (have_nodes && have_switches) throw Error(at + "switch " + topo_shown(sw.name) + " has both Nodes= and Switches=");
    if (!have_nodes && !have_switches) throw Error(at + "switch " + topo_shown(sw.name) + " has neither Nodes= nor Switches=");
    if (auto it = index.find(sw.name); it != index.end())
      throw Error(at + "switch " + topo_shown(sw.name) + " is defined already at line " +
                  std::to_string(conf.switches[it->second].line));
    index[sw.name] = conf.switches.size();
    conf.switches.push_back(std::move(sw));
  }
  bool any_nodes = false;
  for (const auto& sw : conf.switches) {
    any_nodes = any_nodes || !sw.nodes.empty();
    for (const auto& c : sw.switches)
      if (c == sw.name || !index.count(c))
        throw Error(origin + ":" + std::to_string(sw.line) + ": switch " + topo_shown(sw.name) + " has " +
                    (c == sw.name ? "itself" : "the undefined switch " + topo_shown(c)) + " as a child");
  }
  if (!any_nodes) throw Error(origin + ": no switch has Nodes=: Slurm refuses a topology without nodes");
  // A cycle: Slurm resolves levels bottom-up and gives up ("not a tree").
  std::vector<int> state(conf.switches.size(), 0);  // 0 new, 1 on the path, 2 done
  std::function<void(std::size_t)> visit = [&](std::size_t i) {
    state[i] = 1;
    for (const auto& c : conf.switches[i].switches) {
      const std::size_t j = index[c];
      if (state[j] == 1)
        throw Error(origin + ":" + std::to_string(conf.switches[i].line) + ": switch " + topo_shown(conf.switches[i].name) +
                    " and " + topo_shown(c) + " are each other's descendants: not a tree");
      if (state[j] == 0) visit(j);
    }
    state[i] = 2;
  };
  for (std::size_t i = 0; i < conf.switches.size(); ++i)
    if (state[i] == 0) visit(i);
  return conf;
}

TopologyConf load_topology_conf(const std::string& path) {
  return parse_topology_conf(core::read_input(path, 64u << 20), path);
}

std::vector<Finding> check_topology_conf(const TopologyConf& conf, const SchedTopology& t) {
  std::vector<Finding> out;
  std::map<std::string, std::string> fabric_leaf;  // placed hosts
  for (const auto& h : t.hosts)
    if (!h.leaf.empty()) fabric_leaf[h.name] = h.leaf;
  std::map<std::string, std::string> file_leaf;
  for (const auto& sw : conf.switches)
    for (const auto& n : sw.nodes) file_leaf.emplace(n, sw.name);

  // Each leaf of the file as the fabric names it: itself, or the fabric leaf of most of its hosts.
  std::map<std::string, std::string> as_fabric;
  for (const auto& sw : conf.switches) {
    if (t.find_switch(sw.name)) {
      as_fabric[sw.name] = sw.name;
      continue;
    }
    std::map<std::string, int> votes;
    for (const auto& n : sw.nodes)
      if (auto it = fabric_leaf.find(n); it != fabric_leaf.end()) ++votes[it->second];
    std::string best;
    int most = 0;
    for (const auto& [leaf, v] : votes)
      if (v > most) best = leaf, most = v;
    as_fabric[sw.name] = best;
    out.push_back(topology_finding(
        "fabric.topology_switch_gone", Severity::Warn, sw.name,
        "switch " + sw.name + " of " + conf.origin + " is not in the fabric" +
            (best.empty() ? std::string(" (and none of its hosts is)")
                          : " (" + std::to_string(most) + " of its " + std::to_string(sw.nodes.size()) +
                                " host(s) are under " + best + " now: renamed or replaced?)"),
        "line=" + std::to_string(sw.line) + (sw.nodes.empty() ? " switches=" + topo_list(sw.switches)
                                                               : " nodes=" + compress_hostlist(sw.nodes)),
        "write the topology again from the fabric (fabscope fabric --slurm-topology tree -o topology.conf) "
        "and 'scontrol reconfigure'"));
  }
  std::vector<std::string> unknown, missing;
  std::vector<std::string> hosts_in_file;
  for (const auto& [h, leaf] : file_leaf) hosts_in_file.push_back(h);
  topo_natural_sort(hosts_in_file);
  for (const auto& h : hosts_in_file) {
    const std::string& leaf = file_leaf[h];
    auto it = fabric_leaf.find(h);
    if (it == fabric_leaf.end()) {
      unknown.push_back(h);
      continue;
    }
    const std::string& want = as_fabric[leaf];
    if (want != it->second)
      out.push_back(topology_finding(
          "fabric.topology_host_moved", Severity::Warn, h,
          conf.origin + " places " + h + " under " + leaf + (want != leaf && !want.empty() ? " (" + want + ")" : "") +
              "; its HCA is cabled to " + it->second + ": jobs packed for " + leaf + " cross the spine",
          "file_leaf=" + leaf + " fabric_leaf=" + it->second + " line=" +
              std::to_string([&] {
                for (const auto& sw : conf.switches)
                  if (sw.name == leaf) return sw.line;
                return 0;
              }()),
          "write the topology again from the fabric (fabscope fabric --slurm-topology tree -o topology.conf) "
          "and 'scontrol reconfigure'; if the host was re-cabled by mistake, put it back on " + leaf));
  }
  for (const auto& [h, leaf] : fabric_leaf)
    if (!file_leaf.count(h)) missing.push_back(h);
  topo_natural_sort(missing);
  if (!missing.empty())
    out.push_back(topology_finding(
        "fabric.topology_host_missing", Severity::Warn, std::to_string(missing.size()) + " host(s)",
        std::to_string(missing.size()) + " host(s) of the fabric are in no switch of " + conf.origin +
            ": Slurm places no multi-node job on them",
        "hosts=" + topo_list(missing),
        "add them (write the topology again from the fabric), or pass --hosts with the cluster's nodes if "
        "they are not Slurm's"));
  if (!unknown.empty())
    out.push_back(topology_finding(
        "fabric.topology_host_unknown", Severity::Warn, std::to_string(unknown.size()) + " host(s)",
        std::to_string(unknown.size()) + " host(s) of " + conf.origin +
            " have no HCA of that name in the fabric: down, on another subnet, or named otherwise",
        "hosts=" + topo_list(unknown),
        "check that the hosts are up ('ibstat' on the host); map names that differ with --name-map; remove "
        "hosts that are gone"));
  const auto& reg = topology_checks();
  std::stable_sort(out.begin(), out.end(), [&](const Finding& a, const Finding& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    return finding_rank(reg, a.id) < finding_rank(reg, b.id);
  });
  return out;
}

}  // namespace fabscope::fabric
