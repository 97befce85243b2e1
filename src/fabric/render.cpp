#include "fabric/render.hpp"

#include "fabric/route_checks.hpp"
#include "fabric/routes.hpp"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

#include "checks/render.hpp"
#include "core/table.hpp"

namespace fabscope::fabric {

namespace {

// The LID a hop is known by: a switch's own; an HCA's or router's, the port the route leaves by
// (at the source) or enters by: the two ports of one dual-port HCA hold different LIDs.
std::uint16_t hop_lid(const Subnet& s, const Hop& h) {
  const Node& n = s.nodes[static_cast<std::size_t>(h.node)];
  if (n.type == NodeType::Switch) return n.lid();
  const Port* p = n.port(h.in_port ? h.in_port : h.out_port);
  return p && p->info && p->info->lid ? p->info->lid : n.lid();
}

std::string rate(int width, Speed speed) {
  return (width > 0 ? std::to_string(width) + "X" : std::string("?")) + " " + to_string(speed);
}

// "S-leaf1:31 (LID 3, 0x0002c90300000103)": one end of a link, as ibportstate and iblinkinfo
// name it. A switch's LID is its port 0's; an HCA port has its own.
std::string end_text(const Subnet& s, int node, int port) {
  if (node < 0 || node >= static_cast<int>(s.nodes.size())) return "?:" + std::to_string(port);
  const auto& n = s.nodes[static_cast<std::size_t>(node)];
  std::uint16_t lid = 0;
  std::uint64_t guid = n.guid;
  if (n.type == NodeType::Switch) {
    lid = n.lid();
  } else if (const Port* p = n.port(port)) {
    if (p->info) lid = p->info->lid;
    if (p->guid) guid = p->guid;
  }
  return s.name(node) + ":" + std::to_string(port) + " (LID " + (lid ? std::to_string(lid) : std::string("?")) + ", " +
         guid_hex(guid) + ")";
}

}  // namespace

std::string render_text(const Subnet& s, const std::vector<LinkFact>& facts, const std::vector<Finding>& findings,
                        std::size_t width, bool compared) {
  width = std::max<std::size_t>(width, 60);
  std::ostringstream os;
  int switches = 0, hcas = 0, routers = 0, other = 0;
  for (const auto& n : s.nodes) {
    switch (n.type) {
      case NodeType::Switch: ++switches; break;
      case NodeType::Hca: ++hcas; break;
      case NodeType::Router: ++routers; break;
      default: ++other;
    }
  }
  std::size_t links = 0;
  for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n)
    for (const auto& p : s.nodes[n].ports)
      if (p.remote_node >= 0 && std::pair(n, p.number) < std::pair(p.remote_node, p.remote_port)) ++links;
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.2f", s.sweep_s);
  os << core::wrap("Subnet seen from " + (s.source.empty() ? std::string("?") : s.source) +
                       (s.swept_at.empty() ? std::string() : ", swept " + s.swept_at) + " in " + secs + " s",
                   width, "");
  os << "  " << switches << " switches, " << hcas << " HCAs, " << routers << " routers";
  if (other) os << ", " << other << " unknown";
  os << "; " << links << " links (" << facts.size() << " active)\n";
  if (!compared)
    os << core::wrap("a cable missing since an earlier sweep shows only against a saved topology: `fabscope fabric "
                     "--save FILE` now, `--expect FILE` later",
                     width, "  ");
  if (s.sms.empty()) os << "  subnet managers: none answered\n";
  for (const auto& m : s.sms) {
    std::string who = m.node >= 0 ? s.name(m.node) : guid_hex(m.guid);
    os << core::wrap("SM " + who + " lid " + std::to_string(m.lid) + " " + to_string(m.state) + " priority " +
                         std::to_string(m.priority),
                     width, "  ");
  }
  // The links a finding names: both ends in full (name:port, LID, GUID), then what they run at.
  std::string problems;
  std::size_t shown = 0;
  for (const auto& f : facts) {
    std::string why;
    for (const auto& fi : findings)
      if (fi.subject == f.name && fi.severity >= Severity::Warn) {
        std::string short_id = fi.id.substr(fi.id.find('.') + 1);
        if (why.find(short_id) == std::string::npos) why += (why.empty() ? "" : ",") + short_id;
      }
    if (why.empty()) continue;
    ++shown;
    problems += core::wrap(end_text(s, f.node, f.port) + " <-> " + end_text(s, f.peer, f.peer_port), width, "  ");
    problems += core::wrap(why + ": " + f.tier + " link, active " + rate(f.width, f.speed) + ", could be " +
                               rate(f.could_width, f.could_speed) + ", tier usual " + rate(f.tier_width, f.tier_speed) +
                               ", MTU " + (f.mtu ? std::to_string(f.mtu) : "?"),
                           width, "      ");
  }
  if (shown) os << "\nProblem links (" << shown << "):\n" << problems;
  os << "\n";
  if (findings.empty()) os << "no findings\n";
  else os << checks::render_findings(findings, width);
  const SeverityCounts c = count_severities(findings);
  os << "\n" << findings.size() << " finding(s): " << checks::counts_text(c) << "; exit code "
     << exit_code_for(findings) << "\n";
  return os.str();
}

json fabric_json(const Subnet& s, const std::vector<LinkFact>& facts, const std::vector<Finding>& findings,
                 const RouteCheck* routes) {
  json j = fabric_json_without_nodes(s, facts, findings, routes);
  json nodes = to_json(s)["nodes"];
  j["nodes"] = std::move(nodes);
  return j;
}

void write_fabric_json(std::ostream& out, const Subnet& s, const std::vector<LinkFact>& facts,
                       const std::vector<Finding>& findings, const RouteCheck* routes) {
  write_json(out, s, fabric_json_without_nodes(s, facts, findings, routes));
}

json fabric_json_without_nodes(const Subnet& s, const std::vector<LinkFact>& facts, const std::vector<Finding>& findings,
                               const RouteCheck* routes) {
  json j = to_json_without_nodes(s);
  json lf = json::array();
  for (const auto& f : facts) lf.push_back(to_json(f));
  j["link_facts"] = std::move(lf);
  json checks = json::array();
  for (const auto& c : fabric_checks())
    checks.push_back({{"id", c.id}, {"severity", to_string(c.severity)}, {"title", c.title}});
  j["checks"] = std::move(checks);
  j["findings"] = findings;
  if (routes) j["routing"] = to_json(s, *routes);
  else if (has_routes(s)) j["routing"] = to_json(s, check_routes(s));  // the tables were read: what they make
  const SeverityCounts c = count_severities(findings);
  j["summary"] = {{"fail", c.fail}, {"warn", c.warn}, {"info", c.info}, {"worst", to_string(worst(findings))}};
  j["exit_code"] = exit_code_for(findings);
  return j;
}

std::string render_route(const Subnet& s, const std::vector<Hop>& hops, std::size_t width) {
  core::Table t({"HOP", "NODE", "TYPE", "GUID", "LID", "IN", "OUT", "LINK OUT"});
  for (std::size_t i = 0; i < hops.size(); ++i) {
    const Hop& h = hops[i];
    const bool ok = h.node >= 0 && h.node < static_cast<int>(s.nodes.size());
    std::string link = "";
    if (ok && h.out_port > 0) {
      if (const Port* p = s.nodes[h.node].port(h.out_port); p && p->info)
        link = rate(p->info->width_active, p->info->speed_active) + " " + to_string(p->info->state);
    }
    t.add({std::to_string(i), ok ? s.name(h.node) : "?", ok ? to_string(s.nodes[h.node].type) : "?",
           ok ? guid_hex(s.nodes[h.node].guid) : "?", ok ? std::to_string(hop_lid(s, h)) : "?",
           h.in_port ? std::to_string(h.in_port) : "-", h.out_port ? std::to_string(h.out_port) : "-", link});
  }
  t.align_right(0).align_right(4).align_right(5).align_right(6);
  std::ostringstream os;
  // Hops are the links crossed, as ibtracert counts them: one fewer than the nodes listed.
  if (!hops.empty())
    os << "Route from " << s.name(hops.front().node) << " to " << s.name(hops.back().node) << ": "
       << hops.size() - 1 << " hop(s)\n";
  os << t.render(width);
  return os.str();
}

json route_json(const Subnet& s, const std::vector<Hop>& hops) {
  json a = json::array();
  for (const auto& h : hops) {
    const bool ok = h.node >= 0 && h.node < static_cast<int>(s.nodes.size());
    a.push_back({{"node", h.node}, {"name", ok ? s.name(h.node) : ""}, {"guid", ok ? guid_hex(s.nodes[h.node].guid) : ""},
                 {"lid", ok ? hop_lid(s, h) : 0}, {"in_port", h.in_port}, {"out_port", h.out_port}});
  }
  return json{{"schema", "fabscope.fabric.route"}, {"schema_version", 1}, {"hops", std::move(a)}};
}

}  // namespace fabscope::fabric
