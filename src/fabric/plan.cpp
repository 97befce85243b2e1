#include "fabric/plan.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/strings.hpp"
#include "fabric/judge.hpp"

namespace fabscope::fabric {

namespace {

int plan_port(std::string_view text, const std::string& where) {
  if (text.empty() || text.size() > 3 || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    throw Error(where + ": port '" + core::printable(text) + "' is not a number");
  int p = std::stoi(std::string(text));
  if (p < 1 || p > 254) throw Error(where + ": port " + std::to_string(p) + " is outside 1-254");
  return p;
}

// "NODE:PORT" (the port after the last ':').
PlanEnd plan_end(std::string_view text, const std::string& where) {
  std::string t(core::trim(text));
  auto colon = t.rfind(':');
  if (colon == std::string::npos || colon == 0)
    throw Error(where + ": '" + core::printable(t) + "' is not NODE:PORT");
  PlanEnd e;
  e.node = std::string(core::trim(std::string_view(t).substr(0, colon)));
  if (e.node.size() > 256) throw Error(where + ": a node name longer than 256 bytes");
  e.port = plan_port(core::trim(std::string_view(t).substr(colon + 1)), where);
  return e;
}

// ibnetdiscover's names for nodes without a known description: "S-<guid>", "H-<guid>", "R-<guid>".
std::uint64_t plan_guid(const std::string& name) {
  std::string n = name;
  if (n.size() == 18 && (n[0] == 'S' || n[0] == 'H' || n[0] == 'R') && n[1] == '-') n = "0x" + n.substr(2);
  if (n.rfind("0x", 0) != 0 || n.size() < 3 || n.size() > 18) return 0;
  return parse_guid(n);
}

// A quoted name at text[pos] ('"' ... '"'); pos moves past it.
std::string quoted(std::string_view text, std::size_t& pos, const std::string& where) {
  if (pos >= text.size() || text[pos] != '"') throw Error(where + ": expected a quoted node name");
  auto end = text.find('"', pos + 1);
  if (end == std::string_view::npos) throw Error(where + ": a node name without its closing quote");
  std::string name(text.substr(pos + 1, end - pos - 1));
  pos = end + 1;
  return name;
}

struct PlanKey {
  std::string node;
  int port;
  bool operator<(const PlanKey& o) const { return node != o.node ? node < o.node : port < o.port; }
};

}  // namespace

Plan parse_plan(std::string_view text, const std::string& source) {
  Plan plan;
  plan.source = source;
  std::map<PlanKey, std::pair<PlanKey, int>> peer;  // end -> (other end, line)
  std::string current;                              // ibnetdiscover: the node of the block
  int line_no = 0;
  std::size_t start = 0;
  auto add = [&](PlanEnd a, PlanEnd b, const std::string& where, int line) {
    if (a.node == b.node && a.port == b.port) throw Error(where + ": a cable from " + a.node + ":" + std::to_string(a.port) + " to itself");
    PlanKey ka{a.node, a.port}, kb{b.node, b.port};
    for (auto [x, y] : {std::pair{ka, kb}, std::pair{kb, ka}}) {
      auto it = peer.find(x);
      if (it == peer.end()) continue;
      if (it->second.first.node == y.node && it->second.first.port == y.port) return;  // listed from the other end too
      throw Error(where + ": " + x.node + ":" + std::to_string(x.port) + " is planned to " + it->second.first.node + ":" +
                  std::to_string(it->second.first.port) + " on line " + std::to_string(it->second.second) + " already");
    }
    peer[ka] = {kb, line};
    peer[kb] = {ka, line};
    plan.cables.push_back({std::move(a), std::move(b), line});
  };
  while (start <= text.size()) {
    auto nl = text.find('\n', start);
    std::string_view raw = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    start = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    line_no++;
    const std::string where = source + ":" + std::to_string(line_no);
    if (raw.size() > 4096) throw Error(where + ": a line longer than 4096 bytes");
    std::string line(core::trim(raw));
    if (line.empty() || line[0] == '#') continue;
    // ibnetdiscover's header lines: vendid=, devid=, sysimgguid=, switchguid=, caguid=, ...
    if (line.find('=') != std::string::npos && line.find(',') == std::string::npos && line[0] != '[' &&
        line.find('"') == std::string::npos)
      continue;
    if (line.rfind("Switch", 0) == 0 || line.rfind("Hca", 0) == 0 || line.rfind("Ca", 0) == 0 || line.rfind("Rt", 0) == 0) {
      auto q = line.find('"');
      if (q == std::string::npos) throw Error(where + ": a node line without its quoted name");
      current = quoted(line, q, where);
      if (current.empty()) throw Error(where + ": an empty node name");
      continue;
    }
    if (line[0] == '[') {
      if (current.empty()) throw Error(where + ": a port line before any Switch or Hca line");
      auto close = line.find(']');
      if (close == std::string::npos) throw Error(where + ": '[' without ']'");
      int port = plan_port(std::string_view(line).substr(1, close - 1), where);
      std::size_t pos = close + 1;
      while (pos < line.size() && line[pos] != '"' && line[pos] != '#') pos++;  // a port GUID "(...)" may sit between
      if (pos >= line.size() || line[pos] == '#') continue;                       // a port without a cable
      std::string remote = quoted(line, pos, where);
      if (pos >= line.size() || line[pos] != '[') throw Error(where + ": the remote port ([N]) is missing after \"" + remote + "\"");
      auto rclose = line.find(']', pos);
      if (rclose == std::string::npos) throw Error(where + ": '[' without ']'");
      int rport = plan_port(std::string_view(line).substr(pos + 1, rclose - pos - 1), where);
      add({current, port}, {remote, rport}, where, line_no);
      continue;
    }
    line = std::string(core::trim(std::string_view(line).substr(0, line.find('#'))));  // a comment after the cable
    auto comma = line.find(',');
    if (comma == std::string::npos || line.find(',', comma + 1) != std::string::npos)
      throw Error(where + ": expected NODE:PORT,NODE:PORT or ibnetdiscover's topology lines, got '" +
                  core::printable(line.substr(0, 80)) + "'");
    add(plan_end(std::string_view(line).substr(0, comma), where), plan_end(std::string_view(line).substr(comma + 1), where),
        where, line_no);
  }
  if (plan.cables.empty()) throw Error(source + ": no cable in the plan");
  return plan;
}

Plan load_plan(const std::string& path) { return parse_plan(core::read_input(path, 16u << 20), path); }

std::string plan_csv(const Subnet& s) {
  std::map<std::string, int> uses;
  for (const auto& n : s.nodes) uses[n.description]++;
  auto name = [&](int node) {
    const auto& d = s.nodes[node].description;
    bool ok = !d.empty() && uses[d] == 1 && d.find(',') == std::string::npos && d.find('#') == std::string::npos &&
              core::printable(d) == d && core::trim(d) == d && plan_guid(d) == 0;
    return ok ? d : guid_hex(s.nodes[node].guid);
  };
  std::string o = "# cabling plan: NODE:PORT,NODE:PORT, one cable a line (fabscope fabric --save-plan; docs/fabric.md)\n";
  o += "# from " + (s.source.empty() ? std::string("a sweep") : s.source) +
       (s.swept_at.empty() ? std::string() : " at " + s.swept_at) + "\n";
  for (int n = 0; n < static_cast<int>(s.nodes.size()); n++)
    for (const auto& p : s.nodes[n].ports) {
      if (p.number == 0 || p.remote_node < 0 || p.remote_node >= static_cast<int>(s.nodes.size())) continue;
      if (std::pair(p.remote_node, p.remote_port) < std::pair(n, p.number)) continue;  // each cable once
      o += name(n) + ":" + std::to_string(p.number) + "," + name(p.remote_node) + ":" + std::to_string(p.remote_port) + "\n";
    }
  return o;
}

std::vector<Finding> judge_plan(const Subnet& s, const Plan& plan) {
  std::vector<Finding> out;
  // Node names: GUIDs, then descriptions (a description held by two nodes names neither).
  std::map<std::string, int> by_desc;
  for (int n = 0; n < static_cast<int>(s.nodes.size()); n++) {
    auto [it, fresh] = by_desc.emplace(s.nodes[n].description, n);
    if (!fresh) it->second = -2;
  }
  std::set<std::string> missing_said;
  auto resolve = [&](const std::string& name, int line) -> int {
    if (std::uint64_t g = plan_guid(name)) {
      int n = s.find_guid(g);
      if (n >= 0) return n;
    } else if (auto it = by_desc.find(name); it != by_desc.end()) {
      if (it->second >= 0) return it->second;
      if (missing_said.insert(name).second)
        out.push_back(make_finding("fabric.plan_node_missing", Severity::Fail, name,
                                   "the plan's node \"" + name + "\" cannot be told apart: two or more nodes have that description",
                                   plan.source + ":" + std::to_string(line),
                                   "name the node by its GUID in the plan (`fabscope fabric --save-plan` does where "
                                   "descriptions repeat)"));
      return -1;
    }
    if (missing_said.insert(name).second)
      out.push_back(make_finding("fabric.plan_node_missing", Severity::Fail, name,
                                 "the plan's node \"" + name + "\" is not in the fabric (powered off, every cable "
                                 "pulled, a new description, or a name the plan got wrong)",
                                 plan.source + ":" + std::to_string(line),
                                 "check the node's power and cables; if it was renamed or replaced, update the plan "
                                 "(a replaced HCA or switch has a new GUID)"));
    return -1;
  };
  std::set<std::pair<int, int>> planned;  // (node, port) mentioned by the plan and resolved
  auto actual = [&](int node, int port) -> std::pair<int, int> {
    const Port* p = s.nodes[node].port(port);
    if (!p || p->remote_node < 0) return {-1, 0};
    return {p->remote_node, p->remote_port};
  };
  auto end_name = [&](int node, int port) { return port_name(s, node, port); };
  for (const auto& c : plan.cables) {
    int a = resolve(c.a.node, c.line), b = resolve(c.b.node, c.line);
    if (a >= 0) planned.insert({a, c.a.port});
    if (b >= 0) planned.insert({b, c.b.port});
    if (a < 0 || b < 0) continue;
    const std::string where = plan.source + ":" + std::to_string(c.line);
    const std::string want = end_name(a, c.a.port) + " <-> " + end_name(b, c.b.port);
    bool bad_port = false;
    for (auto [n, port] : {std::pair{a, c.a.port}, std::pair{b, c.b.port}})
      if (port > s.nodes[n].num_ports && !bad_port) {
        bad_port = true;
        out.push_back(make_finding("fabric.plan_miswired", Severity::Warn, want,
                                   "the plan cables port " + std::to_string(port) + " of " + s.name(n) + ", which has " +
                                       std::to_string(s.nodes[n].num_ports) + " ports",
                                   where, "correct the plan: the port number is wrong"));
      }
    if (bad_port) continue;
    auto ra = actual(a, c.a.port), rb = actual(b, c.b.port);
    if (ra == std::pair(b, c.b.port)) continue;  // as planned
    if (ra.first < 0 && rb.first < 0) {
      out.push_back(make_finding("fabric.plan_cable_missing", Severity::Warn, want,
                                 "the planned cable " + want + " is not there: both ports have no link",
                                 where + "; both ends down or not cabled",
                                 "cable it as planned (or reseat the cable: a link that never trained looks the same); "
                                 "`ibportstate` on either end shows its physical state"));
      continue;
    }
    std::string found;
    if (ra.first >= 0) found += end_name(a, c.a.port) + " goes to " + end_name(ra.first, ra.second);
    if (rb.first >= 0) found += std::string(found.empty() ? "" : "; ") + end_name(b, c.b.port) + " goes to " + end_name(rb.first, rb.second);
    const bool same_node = (ra.first == b) || (rb.first == a);
    out.push_back(make_finding("fabric.plan_miswired", Severity::Warn, want,
                               "the planned cable " + want + " is wired otherwise: " + found +
                                   (same_node ? " (the right node, the wrong port)" : " (another node)"),
                               where,
                               "move the cable to the planned port, or correct the plan if the cabling was changed on "
                               "purpose; routing and port maps assume the plan"));
  }
  // Cables between two ports the plan does not mention.
  {
    for (int n = 0; n < static_cast<int>(s.nodes.size()); n++)
      for (const auto& p : s.nodes[n].ports) {
        if (p.number == 0 || p.remote_node < 0 || p.remote_node >= static_cast<int>(s.nodes.size())) continue;
        if (std::pair(p.remote_node, p.remote_port) < std::pair(n, p.number)) continue;
        if (planned.count({n, p.number}) || planned.count({p.remote_node, p.remote_port})) continue;
        const std::string name = end_name(n, p.number) + " <-> " + end_name(p.remote_node, p.remote_port);
        out.push_back(make_finding("fabric.plan_cable_extra", Severity::Info, name,
                                   "the cable " + name + " is not in the plan", "plan " + plan.source,
                                   "if it was added on purpose, add it to the plan (`fabscope fabric --save-plan FILE` "
                                   "writes the cabling as it is)"));
      }
  }
  return out;
}

}  // namespace fabscope::fabric
