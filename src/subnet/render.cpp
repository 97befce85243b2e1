#include "subnet/render.hpp"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

#include "checks/report.hpp"
#include "core/table.hpp"

namespace fabscope::subnet {

namespace {

std::string rate(int width, Speed speed) {
  return (width > 0 ? std::to_string(width) + "X" : std::string("?")) + " " + to_string(speed);
}

std::string cut(const std::string& s, std::size_t n) { return s.size() <= n ? s : s.substr(0, n - 1) + "~"; }

}  // namespace

std::string render_text(const Subnet& s, const std::vector<LinkFact>& facts, const std::vector<Finding>& findings,
                        std::size_t width) {
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
  os << "Subnet seen from " << (s.source.empty() ? "?" : cut(s.source, 40));
  if (!s.swept_at.empty()) os << ", swept " << cut(s.swept_at, 32);
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.2f", s.sweep_s);
  os << " in " << secs << " s\n";
  os << "  " << switches << " switches, " << hcas << " HCAs, " << routers << " routers";
  if (other) os << ", " << other << " unknown";
  os << "; " << links << " links (" << facts.size() << " active)\n";
  if (s.sms.empty()) os << "  subnet managers: none answered\n";
  for (const auto& m : s.sms) {
    std::string who = m.node >= 0 ? s.name(m.node) : guid_hex(m.guid);
    os << "  SM " << cut(who, 48) << " lid " << m.lid << " " << to_string(m.state) << " priority " << m.priority
       << "\n";
  }
  // The links a finding names or a fact singles out.
  std::set<std::string> named;
  for (const auto& f : findings)
    if (f.severity >= Severity::Warn) named.insert(f.subject);
  core::Table t({"LINK", "TIER", "ACTIVE", "COULD BE", "TIER USUAL", "MTU", "PROBLEM"});
  for (const auto& f : facts) {
    std::string why;
    for (const auto& fi : findings)
      if (fi.subject == f.name && fi.severity >= Severity::Warn) {
        std::string short_id = fi.id.substr(fi.id.find('.') + 1);
        if (why.find(short_id) == std::string::npos) why += (why.empty() ? "" : ",") + short_id;
      }
    if (why.empty()) continue;
    t.add({f.name, f.tier, rate(f.width, f.speed), rate(f.could_width, f.could_speed),
           rate(f.tier_width, f.tier_speed), f.mtu ? std::to_string(f.mtu) : "?", why});
  }
  if (t.rows()) os << "\nProblem links:\n" << t.render(width);
  os << "\n";
  if (findings.empty()) os << "no findings\n";
  else os << checks::render_findings(findings, width);
  const SeverityCounts c = count_severities(findings);
  os << "\n" << findings.size() << " finding(s): " << checks::counts_text(c) << "; exit code "
     << exit_code_for(findings) << "\n";
  return os.str();
}

json fabric_json(const Subnet& s, const std::vector<LinkFact>& facts, const std::vector<Finding>& findings) {
  json j = fabric_json_without_nodes(s, facts, findings);
  json nodes = to_json(s)["nodes"];
  j["nodes"] = std::move(nodes);
  return j;
}

void write_fabric_json(std::ostream& out, const Subnet& s, const std::vector<LinkFact>& facts,
                       const std::vector<Finding>& findings) {
  write_json(out, s, fabric_json_without_nodes(s, facts, findings));
}

json fabric_json_without_nodes(const Subnet& s, const std::vector<LinkFact>& facts, const std::vector<Finding>& findings) {
  json j = to_json_without_nodes(s);
  json lf = json::array();
  for (const auto& f : facts) lf.push_back(to_json(f));
  j["link_facts"] = std::move(lf);
  json checks = json::array();
  for (const auto& c : fabric_checks())
    checks.push_back({{"id", c.id}, {"severity", to_string(c.severity)}, {"title", c.title}});
  j["checks"] = std::move(checks);
  j["findings"] = findings;
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
           ok ? guid_hex(s.nodes[h.node].guid) : "?", ok ? std::to_string(s.nodes[h.node].lid()) : "?",
           h.in_port ? std::to_string(h.in_port) : "-", h.out_port ? std::to_string(h.out_port) : "-", link});
  }
  t.align_right(0).align_right(4).align_right(5).align_right(6);
  std::ostringstream os;
  if (!hops.empty())
    os << "Route from " << s.name(hops.front().node) << " to " << s.name(hops.back().node) << ": " << hops.size()
       << " hop(s)\n";
  os << t.render(width);
  return os.str();
}

json route_json(const Subnet& s, const std::vector<Hop>& hops) {
  json a = json::array();
  for (const auto& h : hops) {
    const bool ok = h.node >= 0 && h.node < static_cast<int>(s.nodes.size());
    a.push_back({{"node", h.node}, {"name", ok ? s.name(h.node) : ""}, {"guid", ok ? guid_hex(s.nodes[h.node].guid) : ""},
                 {"lid", ok ? s.nodes[h.node].lid() : 0}, {"in_port", h.in_port}, {"out_port", h.out_port}});
  }
  return json{{"schema", "fabscope.fabric.route"}, {"schema_version", 1}, {"hops", std::move(a)}};
}

}  // namespace fabscope::subnet
