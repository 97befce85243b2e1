#include "fabric/judge.hpp"

#include "core/table.hpp"
#include "fabric/route_checks.hpp"
#include "fabric/routes.hpp"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <map>
#include <set>

namespace fabscope::fabric {

const std::vector<FindingInfo>& fabric_checks() {
  static const std::vector<FindingInfo> r = finding_table("docs/checks.md", {
      {"fabric.sm_none", "fabric", Severity::Fail, "no master subnet manager"},
      {"fabric.sm_multiple_masters", "fabric", Severity::Fail, "more than one master subnet manager"},
      {"fabric.duplicate_guid", "fabric", Severity::Fail, "a node or port GUID held twice"},
      {"fabric.duplicate_lid", "fabric", Severity::Fail, "a LID held twice"},
      {"fabric.node_missing", "fabric", Severity::Fail, "a node of the expected topology is gone"},
      {"fabric.link_missing", "fabric", Severity::Warn, "a link of the expected topology is gone"},
      {"fabric.link_moved", "fabric", Severity::Warn, "a link joins the same nodes on other ports"},
      {"fabric.link_degraded", "fabric", Severity::Warn, "a link runs narrower or slower than its ends and its tier"},
      {"fabric.link_mixed_speed", "fabric", Severity::Warn, "a link is slower than its tier; its ends support no more"},
      {"fabric.port_not_active", "fabric", Severity::Warn, "a linked port stuck in Init or Armed"},
      {"fabric.mtu_below_usual", "fabric", Severity::Warn, "a link's active MTU is below the subnet's usual"},
      {"fabric.error_counters", "fabric", Severity::Warn, "error counters above their thresholds"},
      {"fabric.errors_growing", "fabric", Severity::Warn, "error counters grew during the interval"},
      {"fabric.xmit_discards_growing", "fabric", Severity::Warn, "PortXmitDiscards grew during the interval"},
      {"fabric.xmit_wait", "fabric", Severity::Warn, "PortXmitWait grew: the port waited for credits"},
      {"fabric.counter_saturated", "fabric", Severity::Warn, "a counter stuck at its maximum"},
      {"fabric.counter_reset", "fabric", Severity::Info, "a counter went backwards (cleared by someone)"},
      {"fabric.sm_no_standby", "fabric", Severity::Warn, "no standby subnet manager"},
      {"fabric.sm_priority", "fabric", Severity::Warn, "subnet manager priorities: a standby above the master, or ties"},
      {"fabric.firmware_differs", "fabric", Severity::Warn, "firmware differs among devices of one model"},
      {"fabric.not_answered", "fabric", Severity::Warn, "nodes or ports did not answer the sweep"},
      {"fabric.tier_below_capability", "fabric", Severity::Info, "a tier's links run below what their ends support"},
      {"fabric.node_new", "fabric", Severity::Info, "a node not in the expected topology"},
      {"fabric.link_new", "fabric", Severity::Info, "a link not in the expected topology"},
      {"fabric.plan_node_missing", "fabric", Severity::Fail, "a node of the cabling plan is not in the fabric"},
      {"fabric.plan_cable_missing", "fabric", Severity::Warn, "a cable of the cabling plan is not there (both ports without a link)"},
      {"fabric.plan_miswired", "fabric", Severity::Warn, "a planned port is cabled to another port or node than the plan says"},
      {"fabric.plan_cable_extra", "fabric", Severity::Info, "a cable between two ports the cabling plan does not mention"},
      {"fabric.credit_loop", "fabric", Severity::Fail, "the forwarding tables make a cycle of link dependencies (a deadlock risk)"},
      {"fabric.lid_unreachable", "fabric", Severity::Fail, "a LID that some switch's forwarding table does not lead to"},
      {"fabric.routes_unbalanced", "fabric", Severity::Warn, "a switch sends far more routes out of one port than its others"},
  });
  return r;
}

namespace {

std::string fixed(double v, int precision) { return core::format_double(v, precision); }

std::string width_text(int lanes) { return lanes > 0 ? std::to_string(lanes) + "X" : "?"; }
std::string rate_text(int width, Speed speed) { return width_text(width) + " " + to_string(speed); }

const PortInfo* info(const Subnet& s, int node, int port) {
  if (node < 0 || node >= static_cast<int>(s.nodes.size())) return nullptr;
  const Port* p = s.nodes[node].port(port);
  return p && p->info ? &*p->info : nullptr;
}

// The LID ibportstate addresses a port by: a switch's (its port 0's), an HCA port's own; 0 unknown.
std::uint16_t lid_of(const Subnet& s, int node, int port) {
  if (node < 0 || node >= static_cast<int>(s.nodes.size())) return 0;
  const auto& n = s.nodes[static_cast<std::size_t>(node)];
  if (n.type == NodeType::Switch) return n.lid();
  const PortInfo* i = info(s, node, port);
  return i ? i->lid : 0;
}

// "'ibportstate 3 31 query' (S-leaf1:31)": the command for one end with its real LID and port.
std::string portstate(const Subnet& s, int node, int port, const std::string& verb = "") {
  const std::uint16_t lid = lid_of(s, node, port);
  const bool known = node >= 0 && node < static_cast<int>(s.nodes.size());
  const std::string name = (known ? s.name(node) : std::string("?")) + ":" + std::to_string(port);
  if (!lid) return "'ibportstate <lid> " + std::to_string(port) + (verb.empty() ? "" : " " + verb) + "' (" + name +
                   ", LID not read)";
  return "'ibportstate " + std::to_string(lid) + " " + std::to_string(port) + (verb.empty() ? "" : " " + verb) + "' (" +
         name + ")";
}

// The end to retrain a link from: the switch's when one end is a switch (an HCA port may sit
// behind a host that is down), else the first.
std::pair<int, int> switch_end(const Subnet& s, int a, int ap, int b, int bp) {
  if (b >= 0 && b < static_cast<int>(s.nodes.size()) && s.nodes[static_cast<std::size_t>(b)].type == NodeType::Switch &&
      !(a >= 0 && a < static_cast<int>(s.nodes.size()) && s.nodes[static_cast<std::size_t>(a)].type == NodeType::Switch))
    return {b, bp};
  return {a, ap};
}


std::string level_name(int level) {
  static const char* const names[] = {"HCA", "leaf", "spine", "core"};
  if (level < 0) return "switch";
  if (level < 4) return names[level];
  return "level " + std::to_string(level);
}

template <typename T>
T usual(const std::map<T, int>& counts) {
  T best{};
  int most = 0;
  for (const auto& [v, n] : counts)
    if (n >= most) best = v, most = n;  // ascending keys: a tie goes to the higher value
  return best;
}

// Every finding of one run, ordered at the end.
struct Out {
  std::vector<Finding> findings;
  void add(const std::string& id, Severity sev, std::string subject, std::string message, std::string evidence,
           std::string remedy) {
    findings.push_back(make_finding(id, sev, std::move(subject), std::move(message), std::move(evidence),
                                    std::move(remedy)));
  }
};

// A link's name with the end nearer the HCAs first (then the lower node index and port), the
// same for a fact, a counter and a port state of that link.
std::string link_name(const Subnet& s, const std::vector<int>& level, int n, int port) {
  const Port* p = s.nodes[n].port(port);
  if (!p || p->remote_node < 0 || p->remote_node >= static_cast<int>(s.nodes.size())) return port_name(s, n, port);
  int x = n, xp = port, y = p->remote_node, yp = p->remote_port;
  if (std::pair(y, yp) < std::pair(x, xp)) std::swap(x, y), std::swap(xp, yp);
  if (level[y] >= 0 && (level[x] < 0 || level[y] < level[x])) std::swap(x, y), std::swap(xp, yp);
  return port_name(s, x, xp) + " <-> " + port_name(s, y, yp);
}

// --- links -----------------------------------------------------------------------------------

// The end of a link whose own support limits it in one dimension (width or speed): the one
// supporting less, with what it and the other end support at most ("S-leaf2:9 supports at most
// QDR; H-dual:1 supports HDR"); both ends alike: "both ends support at most QDR". "" unknown.
std::string limiting_end(const Subnet& s, const LinkFact& f, bool width) {
  const PortInfo* a = info(s, f.node, f.port);
  const PortInfo* b = info(s, f.peer, f.peer_port);
  if (!a || !b) return "";
  auto best = [width](const PortInfo* i) {
    return width ? width_text(widest(i->width_supported)) : std::string(to_string(fastest(i->speed_supported)));
  };
  const int ra = width ? widest(a->width_supported) : static_cast<int>(fastest(a->speed_supported));
  const int rb = width ? widest(b->width_supported) : static_cast<int>(fastest(b->speed_supported));
  if (ra == 0 || rb == 0) return "";
  if (ra == rb) return "both ends support at most " + best(a);
  const bool a_less = ra < rb;
  const int ln = a_less ? f.node : f.peer, lp = a_less ? f.port : f.peer_port;
  const int on = a_less ? f.peer : f.node, op = a_less ? f.peer_port : f.port;
  return port_name(s, ln, lp) + " supports at most " + best(a_less ? a : b) + "; " + port_name(s, on, op) +
         " supports " + best(a_less ? b : a);
}

// Width and speed are judged each on its own: a dimension is degraded when it runs below what
// both ends support in it AND below its tier. Judged together, a link at 4X QDR on a port that
// supports QDR at most, whose ends list 12X (ibsim lists every width), was "degraded" against a
// 12X HDR that no end offers (issue 45); it runs at the best both ends can do.
void judge_links(const Subnet& s, const std::vector<LinkFact>& facts, Out& out) {
  std::map<std::string, std::vector<const LinkFact*>> below_cap_by_tier;
  std::map<std::string, int> links_in_tier;
  for (const auto& f : facts) {
    ++links_in_tier[f.tier];
    const std::string evidence = "active=" + rate_text(f.width, f.speed) + " could_be=" +
                                 rate_text(f.could_width, f.could_speed) + " tier=" + f.tier + " tier_usual=" +
                                 rate_text(f.tier_width, f.tier_speed);
    const bool width_tier = f.width > 0 && f.width < f.tier_width;
    const bool speed_tier = f.speed != Speed::Unknown && f.speed < f.tier_speed;
    const bool width_cap = f.width > 0 && f.could_width > f.width;
    const bool speed_cap = f.speed != Speed::Unknown && f.could_speed > f.speed;
    const bool width_degraded = width_tier && width_cap, speed_degraded = speed_tier && speed_cap;
    if (width_degraded || speed_degraded) {
      std::string what;
      if (width_degraded)
        what = "its width " + width_text(f.width) + " is below the " + width_text(f.could_width) +
               " both ends support and the " + width_text(f.tier_width) + " of the other " + f.tier + " links";
      if (speed_degraded)
        what += std::string(what.empty() ? "its" : ", its") + " speed " + to_string(f.speed) + " is below the " +
                to_string(f.could_speed) + " both ends support and the " + to_string(f.tier_speed) +
                " of the other " + f.tier + " links";
      out.add("fabric.link_degraded", Severity::Warn, f.name,
              "link runs at " + rate_text(f.width, f.speed) + ": " + what + ": a bad cable, transceiver or port",
              evidence,
              "reseat the cable at both ends, then replace the cable or transceiver; check the ports with " +
                  portstate(s, f.node, f.port) + " and " + portstate(s, f.peer, f.peer_port) +
                  " and 'iblinkinfo'; after the fix the link must retrain (toggle it with " +
                  [&] {
                    auto [n, p] = switch_end(s, f.node, f.port, f.peer, f.peer_port);
                    return portstate(s, n, p, "reset");
                  }() +
                  ")");
    } else if (width_tier || speed_tier) {
      // At the best both ends can do: one end (or both) supports less than the tier runs at. Name
      // it: a cable moved onto a slower port and an older device read alike here.
      std::string limit;
      for (bool width : {true, false}) {
        if (!(width ? width_tier : speed_tier)) continue;
        const std::string end = limiting_end(s, f, width);
        if (!end.empty()) limit += (limit.empty() ? "" : "; ") + end;
      }
      out.add("fabric.link_mixed_speed", Severity::Warn, f.name,
              "link runs at " + rate_text(f.width, f.speed) + ", below the " + rate_text(f.tier_width, f.tier_speed) +
                  " of the other " + f.tier + " links, and its ends support no more" +
                  (limit.empty() ? "" : " (" + limit + ")") +
                  ": a port, device or cable of an older generation slows every collective that crosses it",
              evidence + (limit.empty() ? "" : " limit=" + limit),
              "if the cable was moved onto this port, move it back to a port of the tier's rate (--expect with a "
              "sweep saved before names moved cables); else replace the slower HCA, switch or cable with the "
              "tier's generation, or keep jobs off this link; " +
                  portstate(s, f.node, f.port, "query") + " and " + portstate(s, f.peer, f.peer_port, "query") +
                  " show the supported rates of both ends");
    } else if (width_cap || speed_cap) {
      below_cap_by_tier[f.tier].push_back(&f);
    }
  }
  // A tier whose links all run alike below what their ends report: the design of the fabric (or
  // a simulator reporting every rate as supported), one finding for the tier.
  for (const auto& [tier, links] : below_cap_by_tier) {
    std::map<std::string, int> could;
    for (const auto* f : links) ++could[rate_text(f->could_width, f->could_speed)];
    const LinkFact& first = *links.front();
    std::string examples;
    for (std::size_t i = 0; i < links.size() && i < 3; ++i) examples += (i ? ", " : "") + links[i]->name;
    if (links.size() > 3) examples += ", ...";
    out.add("fabric.tier_below_capability", Severity::Info, "tier " + tier,
            std::to_string(links.size()) + " of " + std::to_string(links_in_tier[tier]) + " " + tier +
                " links run at the tier's usual " + rate_text(first.tier_width, first.tier_speed) +
                " while both ends report more as supported (" + usual(could) +
                "): cables or switches of a lower rating, or ends that report every rate (ibsim does)",
            "tier=" + tier + " usual=" + rate_text(first.tier_width, first.tier_speed) + " could_be=" + usual(could) +
                " links=" + examples,
            "nothing to do if the tier was built for this rate; else check the cables' rating and the ports' "
            "LinkWidthEnabled/LinkSpeedEnabled, e.g. " +
                portstate(s, first.node, first.port, "query"));
  }
}

void judge_port_states(const Subnet& s, const std::vector<int>& level, Out& out) {
  for (const auto& l : s.links) {
    const PortInfo* a = info(s, l.a_node, l.a_port);
    const PortInfo* b = info(s, l.b_node, l.b_port);
    std::string ends;
    for (auto [node, port, i] : {std::tuple{l.a_node, l.a_port, a}, std::tuple{l.b_node, l.b_port, b}})
      if (i && (i->state == PortState::Init || i->state == PortState::Armed))
        ends += (ends.empty() ? "" : " ") + port_name(s, node, port) + "=" + to_string(i->state);
    if (ends.empty()) continue;
    out.add("fabric.port_not_active", Severity::Warn, link_name(s, level, l.a_node, l.a_port),
            "the link is physically up but not Active: the subnet manager has not configured it (Init) or not "
            "finished (Armed); no traffic crosses it",
            "state " + ends,
            "check that a master SM runs and sweeps ('sminfo', the OpenSM log); a port that stays in Init after "
            "a sweep may be refused by the SM (its log says why); " +
                [&] {
                  auto [n, p] = switch_end(s, l.a_node, l.a_port, l.b_node, l.b_port);
                  return portstate(s, n, p, "reset");
                }() +
                " retrains it");
  }
}

void judge_mtu(const Subnet& s, const std::vector<LinkFact>& facts, Out& out) {
  std::map<int, int> counts;
  for (const auto& f : facts)
    if (f.mtu > 0) ++counts[f.mtu];
  if (counts.empty()) return;
  const int common = usual(counts);
  for (const auto& f : facts) {
    if (f.mtu <= 0 || f.mtu >= common) continue;
    out.add("fabric.mtu_below_usual", Severity::Warn, f.name,
            "active MTU " + std::to_string(f.mtu) + " is below the " + std::to_string(common) +
                " most links run at: packets through this link are smaller, or paths that cross it get the lower MTU",
            "mtu_active=" + std::to_string(f.mtu) + " usual=" + std::to_string(common),
            "check the partition's MTU in the SM's configuration (OpenSM partitions.conf mtu=) and both ports' "
            "MTUCap with " +
                portstate(s, f.node, f.port, "query") + " and " + portstate(s, f.peer, f.peer_port, "query"));
  }
}

// --- counters ------------------------------------------------------------------------------

std::string counter_list(const std::vector<std::pair<std::string, std::string>>& items) {
  std::string s;
  for (const auto& [k, v] : items) s += (s.empty() ? "" : " ") + k + "=" + v;
  return s;
}

void judge_totals(const Subnet& s, const std::vector<int>& level, const Thresholds& t, Out& out) {
  for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n) {
    for (const auto& p : s.nodes[n].ports) {
      if (!p.counters) continue;
      std::vector<std::pair<std::string, std::string>> above, limits;
      for (int k = 0; k < kCounterCount; ++k) {
        const auto c = static_cast<Counter>(k);
        const auto& v = (*p.counters)[c];
        if (!v || p.counters->saturated(c)) continue;
        // ibqueryerrors judges every error counter and PortXmitWait against the file; a total
        // PortXmitWait is normal under load, so here it is judged only when the file names it.
        if (!is_error_counter(c) && !(c == Counter::PortXmitWait && t.has(c))) continue;
        if (*v > t.of(c)) {
          above.emplace_back(counter_name(c), std::to_string(*v));
          if (t.of(c) > 0) limits.emplace_back(counter_name(c), std::to_string(t.of(c)));
        }
      }
      if (above.empty()) continue;
      out.add("fabric.error_counters", Severity::Warn, link_name(s, level, n, p.number),
              "error counters are above their thresholds (totals since they were last cleared; --interval tells "
              "whether they still grow)",
              "at " + port_name(s, n, p.number) + ": " + counter_list(above) +
                  (limits.empty() ? " (threshold 0)" : " thresholds: " + counter_list(limits)),
              "run again with --interval to see whether they grow; growing SymbolErrorCounter or "
              "LinkErrorRecoveryCounter: reseat, then replace the cable or transceiver; 'perfquery <lid> <port>' "
              "reads them");
    }
  }
}

void judge_saturated(const Subnet& s, const std::vector<int>& level, Out& out) {
  for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n) {
    for (const auto& p : s.nodes[n].ports) {
      if (!p.counters) continue;
      std::vector<std::pair<std::string, std::string>> stuck;
      for (int k = 0; k < kCounterCount; ++k)
        if (p.counters->saturated(static_cast<Counter>(k)))
          stuck.emplace_back(counter_name(static_cast<Counter>(k)), std::to_string(*p.counters->value[k]));
      if (stuck.empty()) continue;
      out.add("fabric.counter_saturated", Severity::Warn, link_name(s, level, n, p.number),
              "counters are stuck at their maximum: how many events happened, and whether they still happen, is "
              "unknown",
              "at " + port_name(s, n, p.number) + ": " + counter_list(stuck) + " (maximum of the counter's width)",
              "clear the counters once ('perfquery -R <lid> <port>'; fabscope never resets them), then judge them "
              "again with --interval");
    }
  }
}

void judge_growth(const Subnet& now, const std::vector<int>& level, const Subnet& before, double interval_s,
                  const JudgeOptions& opt, Out& out) {
  for (int n = 0; n < static_cast<int>(now.nodes.size()); ++n) {
    const int bn = before.find_guid(now.nodes[n].guid);
    if (bn < 0) continue;
    for (const auto& p : now.nodes[n].ports) {
      const Port* bp = before.nodes[bn].port(p.number);
      if (!p.counters || !bp || !bp->counters) continue;
      const std::string subject = link_name(now, level, n, p.number), where = port_name(now, n, p.number);
      std::vector<std::pair<std::string, std::string>> grew, reset;
      std::optional<std::uint64_t> discards, wait;
      for (int k = 0; k < kCounterCount; ++k) {
        const auto c = static_cast<Counter>(k);
        const auto& a = (*bp->counters)[c];
        const auto& b = (*p.counters)[c];
        if (!a || !b) continue;
        if (p.counters->saturated(c) || bp->counters->saturated(c)) continue;  // fabric.counter_saturated
        if (*b < *a) {
          reset.emplace_back(counter_name(c), std::to_string(*a) + "->" + std::to_string(*b));
          continue;
        }
        const std::uint64_t d = *b - *a;
        if (c == Counter::PortXmitDiscards) {
          if (d > opt.thresholds.of(c)) discards = d;
        } else if (c == Counter::PortXmitWait) {
          if (d > 0) wait = d;
        } else if (is_error_counter(c) && d > opt.thresholds.of(c)) {
          grew.emplace_back(counter_name(c), "+" + std::to_string(d) + " (" + fixed(d / interval_s, 3) + "/s)");
        }
      }
      const std::string over = " over " + fixed(interval_s, 1) + " s";
      if (!grew.empty())
        out.add("fabric.errors_growing", Severity::Warn, subject,
                "error counters grew" + over +
                    ": the link is failing now (symbol errors and link recoveries: signal quality; link downed: "
                    "the link flaps; receive errors: corrupted packets)",
                "at " + where + ": " + counter_list(grew),
                "reseat the cable at both ends, then replace the cable or transceiver; watch the rate with "
                "'perfquery <lid> <port>' or fabscope exporter; if it continues, move the cable to another port "
                "to tell a bad port from a bad cable");
      if (discards)
        out.add("fabric.xmit_discards_growing", Severity::Warn, subject,
                "the port discarded " + std::to_string(*discards) + " outbound packets" + over +
                    " (link down, or packets that waited too long for credits: congestion)",
                "at " + where + ": PortXmitDiscards=+" + std::to_string(*discards) + " (" +
                    fixed(*discards / interval_s, 3) + "/s)",
                "look for a flapping link on this path (fabric.errors_growing) and for congestion "
                "(fabric.xmit_wait) downstream of this port; 'ibqueryerrors --details' splits the discards");
      if (wait) {
        const double fraction =
            opt.xmit_wait_tick_ns > 0 ? *wait * opt.xmit_wait_tick_ns * 1e-9 / interval_s : -1;
        const bool high = fraction > opt.xmit_wait_fraction;
        out.add("fabric.xmit_wait", high ? Severity::Warn : Severity::Info, subject,
                where + " had data to send but no credits for " + std::to_string(*wait) + " ticks" + over +
                    (fraction >= 0 ? " (" + fixed(100 * fraction, 1) + "% of the time)"
                                   : " (the tick length is device-specific; the share of time is not computed)") +
                    ": congestion downstream of this port",
                "at " + where + ": PortXmitWait=+" + std::to_string(*wait) + " (" + fixed(*wait / interval_s, 0) +
                    " ticks/s)" + (fraction >= 0 ? " tick_ns=" + fixed(opt.xmit_wait_tick_ns, 1) : ""),
                "normal in bursts under all-to-all traffic; steady waiting on few ports points at an oversubscribed "
                "uplink or an unbalanced route: compare the uplinks of the switch, check the routing engine");
      }
      if (!reset.empty())
        out.add("fabric.counter_reset", Severity::Info, subject,
                "counters went backwards" + over +
                    ": someone cleared them (perfquery -R, ibqueryerrors -k, the SM's perfmgr); not judged this time",
                "at " + where + ": " + counter_list(reset),
                "nothing to fix; judge again with --interval; tools that clear counters hide errors from other "
                "monitors (prefer reading rates)");
    }
  }
}

// --- subnet managers ---------------------------------------------------------------------------

std::string sm_name(const Subnet& s, const SmInfo& m) {
  std::string who = m.node >= 0 ? s.name(m.node) : guid_hex(m.guid);
  return who + " (lid " + std::to_string(m.lid) + ")";
}

std::string sm_text(const Subnet& s, const SmInfo& m) {
  return sm_name(s, m) + " " + to_string(m.state) + " priority " + std::to_string(m.priority);
}

void judge_sms(const Subnet& s, Out& out) {
  std::vector<const SmInfo*> masters, standbys;
  std::string all;
  for (const auto& m : s.sms) {
    all += (all.empty() ? "" : "; ") + sm_text(s, m);
    if (m.state == SmState::Master) masters.push_back(&m);
    if (m.state == SmState::Standby) standbys.push_back(&m);
  }
  if (masters.empty()) {
    out.add("fabric.sm_none", Severity::Fail, "subnet",
            s.sms.empty() ? "no subnet manager answered SMInfo: without a master SM no port becomes Active and "
                            "no route is programmed"
                          : "no subnet manager is master: ports stay in Init and changes are not swept",
            all.empty() ? "sms=0" : "sms: " + all,
            "start OpenSM (or the switch's SM) on a node with a port on this subnet: 'systemctl start opensm'; "
            "'sminfo' shows the master");
  } else if (masters.size() > 1) {
    std::string list;
    for (const auto* m : masters) list += (list.empty() ? "" : "; ") + sm_text(s, *m);
    out.add("fabric.sm_multiple_masters", Severity::Fail, "subnet",
            std::to_string(masters.size()) + " subnet managers are master at once: they fight over LIDs and routes "
            "(a subnet split in two that joined again, or SMs that do not see each other)",
            "masters: " + list,
            "keep one SM per subnet as master: stop the extra ones or give them lower priorities, then check "
            "'sminfo' and the OpenSM logs; make sure the SMs share the subnet prefix and SM key");
  }
  if (!masters.empty() && standbys.empty())
    out.add("fabric.sm_no_standby", Severity::Warn, "subnet",
            "no standby subnet manager: when the master's node fails, nothing takes over and the fabric stops "
            "reacting to changes",
            "sms: " + all,
            "run a second SM (OpenSM with a lower priority, 'sm_priority' in opensm.conf) on another node or switch");
  if (masters.size() == 1) {
    const SmInfo& m = *masters.front();
    for (const auto* sb : standbys) {
      if (sb->priority > m.priority)
        out.add("fabric.sm_priority", Severity::Warn, "subnet",
                "standby " + sm_name(s, *sb) + " has a higher priority than the master: the SMs disagree on "
                "who should lead, and a restart moves the master",
                "master: " + sm_text(s, m) + "; standby: " + sm_text(s, *sb),
                "set the intended master's priority highest ('sm_priority' in opensm.conf, 0-15) and restart "
                "the SMs in order");
      else if (sb->priority == m.priority)
        out.add("fabric.sm_priority", Severity::Info, "subnet",
                "standby " + sm_name(s, *sb) + " has the master's priority: which one leads after a failover "
                "depends on GUID order, not on intent",
                "master: " + sm_text(s, m) + "; standby: " + sm_text(s, *sb),
                "give the intended master a higher priority than its standby ('sm_priority' in opensm.conf)");
    }
  }
}

// --- identity ------------------------------------------------------------------------------

void judge_duplicates(const Subnet& s, Out& out) {
  std::map<std::uint64_t, std::vector<std::string>> node_guids, port_guids;
  std::vector<std::tuple<unsigned, unsigned, std::string>> lids;  // first, last, holder
  for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n) {
    const Node& node = s.nodes[n];
    if (node.guid) node_guids[node.guid].push_back(s.name(n));
    for (const auto& p : node.ports) {
      const bool sw = node.type == NodeType::Switch;
      if (sw && p.number != 0) continue;  // a switch's ports share port 0's GUID and LID
      if (p.guid) port_guids[p.guid].push_back(port_name(s, n, p.number));
      if (p.info && p.info->lid) {
        const unsigned span = 1u << std::min(p.info->lmc, 7);
        lids.emplace_back(p.info->lid, p.info->lid + span - 1, port_name(s, n, p.number));
      }
    }
  }
  for (const auto* map : {&node_guids, &port_guids}) {
    for (const auto& [g, holders] : *map) {
      if (holders.size() < 2) continue;
      std::string list;
      for (const auto& h : holders) list += (list.empty() ? "" : ", ") + h;
      const char* what = map == &node_guids ? "node" : "port";
      out.add("fabric.duplicate_guid", Severity::Fail, std::string(what) + " GUID " + guid_hex(g),
              std::string(what) + " GUID " + guid_hex(g) + " is held by " + std::to_string(holders.size()) +
                  " " + what + "s: the SM and every tool mistake one for the other",
              "guid=" + guid_hex(g) + " held_by=" + list,
              "find the devices (a cloned VM or a flashed board with a copied GUID) and give each its own GUID "
              "(the vendor's firmware tool, e.g. 'mlxconfig' / 'flint sg'), then restart the SM");
    }
  }
  std::sort(lids.begin(), lids.end());
  for (std::size_t i = 0; i + 1 < lids.size(); ++i) {
    const auto& [f1, l1, h1] = lids[i];
    const auto& [f2, l2, h2] = lids[i + 1];
    if (f2 > l1) continue;
    out.add("fabric.duplicate_lid", Severity::Fail, "LID " + std::to_string(f2),
            "LID " + std::to_string(f2) + " is held by " + h1 + " and " + h2 +
                ": packets for one reach the other or are lost",
            h1 + " lid=" + std::to_string(f1) + "-" + std::to_string(l1) + " " + h2 + " lid=" + std::to_string(f2) +
                "-" + std::to_string(l2),
            "let one master SM assign LIDs: stop SMs of other subnets joined by mistake, then have the master "
            "resweep ('opensm --once' or 'kill -HUP' the master); a static LID in a guid2lid file may repeat");
  }
}

void judge_firmware(const Subnet& s, Out& out) {
  // (type, vendor, device) -> firmware -> nodes
  std::map<std::tuple<NodeType, std::uint32_t, std::uint16_t>, std::map<std::string, std::vector<int>>> models;
  for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n) {
    const Node& node = s.nodes[n];
    if (!node.firmware.empty()) models[{node.type, node.vendor_id, node.device_id}][node.firmware].push_back(n);
  }
  for (const auto& [model, versions] : models) {
    if (versions.size() < 2) continue;
    const auto& [type, vendor, device] = model;
    std::string evidence, most;
    std::size_t most_n = 0;
    for (const auto& [fw, nodes] : versions) {
      evidence += (evidence.empty() ? "" : "; ") + fw + ": " + std::to_string(nodes.size()) + " (";
      for (std::size_t i = 0; i < nodes.size() && i < 4; ++i) evidence += (i ? ", " : "") + s.name(nodes[i]);
      evidence += nodes.size() > 4 ? ", ...)" : ")";
      if (nodes.size() >= most_n) most = fw, most_n = nodes.size();
    }
    char id[40];
    std::snprintf(id, sizeof id, "%04x:%04x", static_cast<unsigned>(vendor), static_cast<unsigned>(device));
    out.add("fabric.firmware_differs", Severity::Warn, std::string(to_string(type)) + " " + id,
            std::to_string(versions.size()) + " firmware versions among " + to_string(type) + "es of one model (" +
                id + "): behaviour and fixes differ from device to device",
            "vendor:device=" + std::string(id) + " versions: " + evidence,
            "update every " + std::string(to_string(type)) + " of this model to one version (the newest qualified; " +
                most + " is the most common): 'mlxfwmanager' for NVIDIA devices");
  }
}

void judge_not_answered(const Subnet& s, Out& out) {
  for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n) {
    const Node& node = s.nodes[n];
    if (!node.note.empty())
      out.add("fabric.not_answered", Severity::Warn, s.name(n),
              s.name(n) + " did not answer every query of the sweep; what is missing was not judged",
              "node=" + s.name(n) + " guid=" + guid_hex(node.guid) + " dr_path=" + node.dr_path + " note: " + node.note,
              "check the node: 'smpquery nodeinfo -D " + (node.dr_path.empty() ? std::string("<path>") : node.dr_path) +
                  "'; a node that stops answering SMPs is hung or overloaded; raise --timeout-ms for a busy fabric");
    for (const auto& p : node.ports)
      if (!p.note.empty())
        out.add("fabric.not_answered", Severity::Warn, port_name(s, n, p.number),
                port_name(s, n, p.number) + " did not answer every query of the sweep; what is missing was not judged",
                "port=" + port_name(s, n, p.number) + " note: " + p.note,
                "read it by hand ('perfquery' or 'smpquery portinfo'); a port whose PMA does not answer may "
                "need a firmware update; raise --timeout-ms or --retries for a busy fabric");
  }
  for (const auto& note : s.notes)
    out.add("fabric.not_answered", Severity::Warn, "subnet",
            "the sweep did not see everything: " + note, "note: " + note,
            "run again (with a larger --timeout-ms or --retries on a busy fabric); 'ibnetdiscover' shows what it "
            "reaches from the same port");
}

// --- expected topology -----------------------------------------------------------------------

struct LinkKey {
  std::uint64_t a, b;
  int pa, pb;
  auto operator<=>(const LinkKey&) const = default;
};

// Each link once, by its ends' node GUIDs and ports, in the order the ports are met.
std::vector<LinkKey> link_keys(const Subnet& s) {
  std::vector<LinkKey> keys;
  std::set<LinkKey> seen;
  for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n)
    for (const auto& p : s.nodes[n].ports) {
      if (p.remote_node < 0 || p.remote_node >= static_cast<int>(s.nodes.size())) continue;
      LinkKey k{s.nodes[n].guid, s.nodes[p.remote_node].guid, p.number, p.remote_port};
      if (std::pair(k.a, k.pa) > std::pair(k.b, k.pb)) std::swap(k.a, k.b), std::swap(k.pa, k.pb);
      if (seen.insert(k).second) keys.push_back(k);
    }
  return keys;
}

std::string key_name(const Subnet& s, const LinkKey& k) {
  auto end = [&](std::uint64_t g, int p) {
    const int n = s.find_guid(g);
    return (n >= 0 ? s.name(n) : guid_hex(g)) + ":" + std::to_string(p);
  };
  return end(k.a, k.pa) + " <-> " + end(k.b, k.pb);
}

void judge_topology(const Subnet& now, const Subnet& expected, Out& out) {
  for (int n = 0; n < static_cast<int>(expected.nodes.size()); ++n) {
    const Node& e = expected.nodes[n];
    if (now.find_guid(e.guid) >= 0) continue;
    out.add("fabric.node_missing", Severity::Fail, expected.name(n),
            std::string(to_string(e.type)) + " " + expected.name(n) + " of the expected topology was not found "
            "(powered off, cable pulled, or it does not answer)",
            "guid=" + guid_hex(e.guid) + " type=" + to_string(e.type) + " was_at=" + e.dr_path,
            "check the node's power and its cables; 'ibnetdiscover' from here should list GUID " + guid_hex(e.guid));
  }
  for (int n = 0; n < static_cast<int>(now.nodes.size()); ++n) {
    const Node& m = now.nodes[n];
    if (expected.find_guid(m.guid) >= 0) continue;
    out.add("fabric.node_new", Severity::Info, now.name(n),
            std::string(to_string(m.type)) + " " + now.name(n) + " is not in the expected topology",
            "guid=" + guid_hex(m.guid) + " type=" + to_string(m.type),
            "if the node was added on purpose, save the topology again ('fabscope fabric --save FILE')");
  }
  const auto want = link_keys(expected), have = link_keys(now);
  std::set<LinkKey> have_set(have.begin(), have.end()), want_set(want.begin(), want.end());
  std::set<LinkKey> moved_to;
  for (const auto& k : want) {
    if (have_set.count(k)) continue;
    if (now.find_guid(k.a) < 0 || now.find_guid(k.b) < 0) continue;  // fabric.node_missing says it
    // The same two nodes joined on other ports now: the cable moved.
    const LinkKey* moved = nullptr;
    for (const auto& h : have)
      if (!want_set.count(h) && !moved_to.count(h) && ((h.a == k.a && h.b == k.b) || (h.a == k.b && h.b == k.a))) {
        moved = &h;
        break;
      }
    if (moved) {
      moved_to.insert(*moved);
      out.add("fabric.link_moved", Severity::Warn, key_name(now, *moved),
              "the link " + key_name(expected, k) + " of the expected topology now joins the same nodes as " +
                  key_name(now, *moved) + ": a cable moved to other ports",
              "expected=" + key_name(expected, k) + " found=" + key_name(now, *moved),
              "move the cable back (routing and port maps assume the saved layout), or save the topology again if "
              "the move was meant");
      continue;
    }
    out.add("fabric.link_missing", Severity::Warn, key_name(expected, k),
            "the link " + key_name(expected, k) + " of the expected topology is gone: both nodes answer, the cable "
            "does not carry a link",
            "expected=" + key_name(expected, k),
            "check the cable at both ends (" + portstate(now, now.find_guid(k.a), k.pa) + " and " +
                portstate(now, now.find_guid(k.b), k.pb) +
                " show each port's physical state: Polling means no partner, Disabled means switched off); reseat "
                "or replace it");
  }
  for (const auto& h : have) {
    if (want_set.count(h) || moved_to.count(h)) continue;
    if (expected.find_guid(h.a) < 0 || expected.find_guid(h.b) < 0) continue;  // fabric.node_new says it
    out.add("fabric.link_new", Severity::Info, key_name(now, h),
            "the link " + key_name(now, h) + " is not in the expected topology", "found=" + key_name(now, h),
            "if the cable was added on purpose, save the topology again ('fabscope fabric --save FILE')");
  }
}

}  // namespace

std::vector<int> levels(const Subnet& s) {
  std::vector<int> level(s.nodes.size(), -1);
  std::deque<int> queue;
  for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n)
    if (s.nodes[n].type != NodeType::Switch) level[n] = 0, queue.push_back(n);
  while (!queue.empty()) {
    const int n = queue.front();
    queue.pop_front();
    for (const auto& p : s.nodes[n].ports) {
      const int r = p.remote_node;
      if (r < 0 || r >= static_cast<int>(s.nodes.size()) || level[r] >= 0) continue;
      level[r] = level[n] + 1;
      queue.push_back(r);
    }
  }
  return level;
}

std::string port_name(const Subnet& s, int node, int port) { return s.name(node) + ":" + std::to_string(port); }

std::vector<LinkFact> link_facts(const Subnet& s) {
  const auto level = levels(s);
  std::vector<LinkFact> facts;
  for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n) {
    for (const auto& p : s.nodes[n].ports) {
      const int r = p.remote_node;
      if (r < 0 || r >= static_cast<int>(s.nodes.size())) continue;
      if (std::pair(n, p.number) > std::pair(r, p.remote_port)) continue;  // each link once
      const PortInfo* a = p.info ? &*p.info : nullptr;
      const PortInfo* b = info(s, r, p.remote_port);
      if (!a || !b || a->state != PortState::Active || b->state != PortState::Active) continue;
      LinkFact f;
      const bool flip = level[r] >= 0 && (level[n] < 0 || level[r] < level[n]);
      f.node = flip ? r : n, f.port = flip ? p.remote_port : p.number;
      f.peer = flip ? n : r, f.peer_port = flip ? p.number : p.remote_port;
      f.name = link_name(s, level, n, p.number);
      f.tier = level_name(level[f.node]) + "<->" + level_name(level[f.peer]);
      f.width = std::min(a->width_active, b->width_active);
      f.speed = std::min(a->speed_active, b->speed_active);
      if (a->width_supported && b->width_supported) f.could_width = widest(a->width_supported & b->width_supported);
      if (a->speed_supported && b->speed_supported) f.could_speed = fastest(a->speed_supported & b->speed_supported);
      f.mtu = a->mtu_active && b->mtu_active ? std::min(a->mtu_active, b->mtu_active)
                                             : std::max(a->mtu_active, b->mtu_active);
      f.below_capability = (f.width > 0 && f.could_width > f.width) ||
                           (f.speed != Speed::Unknown && f.could_speed > f.speed);
      facts.push_back(std::move(f));
    }
  }
  std::map<std::string, std::map<int, int>> widths;
  std::map<std::string, std::map<Speed, int>> speeds;
  for (const auto& f : facts) {
    if (f.width > 0) ++widths[f.tier][f.width];
    if (f.speed != Speed::Unknown) ++speeds[f.tier][f.speed];
  }
  for (auto& f : facts) {
    if (widths.count(f.tier)) f.tier_width = usual(widths[f.tier]);
    if (speeds.count(f.tier)) f.tier_speed = usual(speeds[f.tier]);
    f.below_tier = (f.width > 0 && f.width < f.tier_width) || (f.speed != Speed::Unknown && f.speed < f.tier_speed);
  }
  return facts;
}

json to_json(const LinkFact& f) {
  return json{{"name", f.name},
              {"node", f.node},
              {"port", f.port},
              {"peer", f.peer},
              {"peer_port", f.peer_port},
              {"tier", f.tier},
              {"width", f.width},
              {"speed", to_string(f.speed)},
              {"could_width", f.could_width},
              {"could_speed", to_string(f.could_speed)},
              {"tier_width", f.tier_width},
              {"tier_speed", to_string(f.tier_speed)},
              {"mtu", f.mtu},
              {"below_capability", f.below_capability},
              {"below_tier", f.below_tier}};
}

std::vector<Finding> judge(const Subnet& now, const JudgeOptions& opt) {
  Out out;
  const auto facts = link_facts(now);
  const auto level = levels(now);
  Subnet linked = now;  // links from the ports, whatever now.links says
  linked.rebuild_links();
  judge_sms(now, out);
  judge_duplicates(now, out);
  if (opt.expected) judge_topology(now, *opt.expected, out);
  if (opt.plan)
    for (auto& f : judge_plan(now, *opt.plan)) out.findings.push_back(std::move(f));
  judge_links(now, facts, out);
  judge_port_states(linked, level, out);
  judge_mtu(now, facts, out);
  if (opt.before && opt.interval_s > 0)
    judge_growth(now, level, *opt.before, opt.interval_s, opt, out);
  else
    judge_totals(now, level, opt.thresholds, out);
  judge_saturated(now, level, out);
  judge_firmware(now, out);
  judge_not_answered(now, out);
  if (has_routes(now)) {  // the forwarding tables were read: judge the routes they make
    std::optional<RouteCheck> computed;
    const RouteCheck& rc = opt.routes ? *opt.routes : computed.emplace(check_routes(now));
    for (auto& f : route_findings(now, rc)) out.findings.push_back(std::move(f));
  }
  // Both ends of one cable: one finding for the link, the evidence of each end joined.
  std::vector<Finding> merged;
  std::map<std::pair<std::string, std::string>, std::size_t> at;  // (id, subject) -> index in merged
  for (auto& f : out.findings) {
    const bool per_link = f.id == "fabric.error_counters" || f.id == "fabric.errors_growing" ||
                          f.id == "fabric.counter_saturated" || f.id == "fabric.counter_reset" ||
                          f.id == "fabric.xmit_discards_growing";
    if (per_link) {
      auto [it, fresh] = at.emplace(std::pair(f.id, f.subject), merged.size());
      if (!fresh) {
        merged[it->second].evidence += "; " + f.evidence;
        continue;
      }
    }
    merged.push_back(std::move(f));
  }
  out.findings = std::move(merged);
  // Most severe first; within a severity, registry order, then the order met.
  const auto& reg = fabric_checks();
  std::stable_sort(out.findings.begin(), out.findings.end(), [&](const Finding& a, const Finding& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    return finding_rank(reg, a.id) < finding_rank(reg, b.id);
  });
  return out.findings;
}

}  // namespace fabscope::fabric
