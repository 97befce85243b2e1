#include "exporter/fabric_families.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "fabric/judge.hpp"

namespace fabscope::exporter {

using fabric::Counter;
using fabric::Subnet;

namespace {

struct CounterMetric {
  Counter counter;
  const char* metric;
  const char* help;
};

// The error counters of PortCounters (IBA 16.1.3.5), named like node_exporter's InfiniBand ones.
const CounterMetric kErrorCounters[] = {
    {Counter::SymbolErrorCounter, "fabscope_fabric_port_symbol_errors_total",
     "Minor link errors detected on the physical lanes (SymbolErrorCounter, 16 bits)."},
    {Counter::LinkErrorRecoveryCounter, "fabscope_fabric_port_link_error_recoveries_total",
     "Times the link error recovery process completed (LinkErrorRecoveryCounter, 8 bits)."},
    {Counter::LinkDownedCounter, "fabscope_fabric_port_link_downed_total",
     "Times the link went down after failing error recovery (LinkDownedCounter, 8 bits)."},
    {Counter::PortRcvErrors, "fabscope_fabric_port_receive_errors_total",
     "Packets received with an error (PortRcvErrors, 16 bits)."},
    {Counter::PortRcvRemotePhysicalErrors, "fabscope_fabric_port_receive_remote_physical_errors_total",
     "Packets received marked bad by an upstream switch (PortRcvRemotePhysicalErrors, 16 bits)."},
    {Counter::PortRcvSwitchRelayErrors, "fabscope_fabric_port_receive_switch_relay_errors_total",
     "Packets a switch could not forward (PortRcvSwitchRelayErrors, 16 bits)."},
    {Counter::PortXmitDiscards, "fabscope_fabric_port_transmit_discards_total",
     "Outbound packets discarded: port down or congestion timeout (PortXmitDiscards, 16 bits)."},
    {Counter::PortXmitConstraintErrors, "fabscope_fabric_port_transmit_constraint_errors_total",
     "Packets not sent because of partition or rate constraints (PortXmitConstraintErrors, 8 bits)."},
    {Counter::PortRcvConstraintErrors, "fabscope_fabric_port_receive_constraint_errors_total",
     "Packets dropped because of partition or rate constraints (PortRcvConstraintErrors, 8 bits)."},
    {Counter::LocalLinkIntegrityErrors, "fabscope_fabric_port_local_link_integrity_errors_total",
     "Times the local physical errors exceeded their threshold (LocalLinkIntegrityErrors, 4 bits)."},
    {Counter::ExcessiveBufferOverrunErrors, "fabscope_fabric_port_excessive_buffer_overrun_errors_total",
     "Consecutive flow-control update periods with a buffer overrun (ExcessiveBufferOverrunErrors, 4 bits)."},
    {Counter::VL15Dropped, "fabscope_fabric_port_vl15_dropped_total",
     "Subnet management packets dropped for lack of buffers (VL15Dropped, 16 bits)."},
};

Labels port_labels(const Subnet& s, int n, int port) {
  return {{"node_guid", fabric::guid_hex(s.nodes[n].guid)}, {"node_name", s.name(n)}, {"port", std::to_string(port)}};
}

Labels link_labels(const LinkKey& k) {
  return {{"node_guid", fabric::guid_hex(k.a.node_guid)}, {"node_name", k.a.node_name},
          {"port", std::to_string(k.a.port)},         {"remote_node_guid", fabric::guid_hex(k.b.node_guid)},
          {"remote_node_name", k.b.node_name},        {"remote_port", std::to_string(k.b.port)}};
}

LinkEnd end_of(const Subnet& s, int n, int port) { return {s.nodes[n].guid, port, s.name(n)}; }

const fabric::PortInfo* info_of(const Subnet& s, std::uint64_t guid, int port) {
  const int n = s.find_guid(guid);
  if (n < 0) return nullptr;
  const auto* p = s.nodes[n].port(port);
  return p && p->info ? &*p->info : nullptr;
}

// The worse end's state: Down before Init before Armed before Active; unknown (0) when an end
// was not read.
int link_state(const fabric::PortInfo* a, const fabric::PortInfo* b) {
  if (!a || !b) return 0;
  if (a->state == fabric::PortState::Unknown || b->state == fabric::PortState::Unknown) return 0;
  return std::min(static_cast<int>(a->state), static_cast<int>(b->state));
}
// LinkUp when both ends are; otherwise the end that is not.
int link_phys_state(const fabric::PortInfo* a, const fabric::PortInfo* b) {
  if (!a || !b) return 0;
  if (a->phys_state != fabric::PhysState::LinkUp) return static_cast<int>(a->phys_state);
  return static_cast<int>(b->phys_state);
}

MetricFamily gauge(std::string name, std::string help) {
  return {std::move(name), MetricType::Gauge, std::move(help), {}};
}
MetricFamily counter(std::string name, std::string help) {
  return {std::move(name), MetricType::Counter, std::move(help), {}};
}

void port_families(const Subnet& s, std::vector<MetricFamily>& out) {
  auto xmit_bytes = counter("fabscope_fabric_port_data_transmitted_bytes_total",
                            "Data octets sent by the port (PortXmitData, 4-byte words times 4; 64-bit "
                            "PortCountersExtended where the port has them, else 32 bits).");
  auto rcv_bytes = counter("fabscope_fabric_port_data_received_bytes_total",
                           "Data octets received by the port (PortRcvData, 4-byte words times 4; 64-bit "
                           "where the port has extended counters, else 32 bits).");
  auto xmit_pkts = counter("fabscope_fabric_port_packets_transmitted_total",
                           "Packets sent by the port (PortXmitPkts; 64-bit where extended).");
  auto rcv_pkts = counter("fabscope_fabric_port_packets_received_total",
                          "Packets received by the port (PortRcvPkts; 64-bit where extended).");
  auto wait = counter("fabscope_fabric_port_transmit_wait_ticks_total",
                      "Ticks the port had data to send but no flow-control credit (PortXmitWait, 32 bits): "
                      "congestion. The tick is device-specific (fabscope_fabric_transmit_wait_tick_seconds).");
  std::vector<MetricFamily> errors;
  for (const auto& c : kErrorCounters) errors.push_back(counter(c.metric, c.help));
  auto saturated = gauge("fabscope_fabric_port_counter_saturated",
                         "1 for each counter of the port stuck at its maximum (2^bits - 1): it no longer "
                         "counts, so its rate reads 0. Only saturated counters have a series.");
  auto extended = gauge("fabscope_fabric_port_counters_extended",
                        "1 when the port's data and packet counters are the 64-bit extended ones, 0 when "
                        "32-bit (they saturate within seconds at line rate).");
  auto state = gauge("fabscope_fabric_port_state",
                     "PortInfo.PortState of every port read: 1 Down, 2 Init, 3 Armed, 4 Active, 0 unknown.");
  for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n) {
    for (const auto& p : s.nodes[n].ports) {
      if (p.number == 0 && s.nodes[n].type == fabric::NodeType::Switch) continue;  // management port
      const Labels labels = port_labels(s, n, p.number);
      if (p.info) state.samples.push_back(Sample::of(labels, static_cast<int>(p.info->state)));
      if (!p.counters) continue;
      const auto& c = *p.counters;
      extended.samples.push_back(Sample::of(labels, c.extended ? 1 : 0));
      auto put = [&](MetricFamily& f, Counter k, std::uint64_t scale) {
        if (c[k]) f.samples.push_back(Sample::of_u64(labels, *c[k] * scale));
      };
      put(xmit_bytes, Counter::PortXmitData, 4);
      put(rcv_bytes, Counter::PortRcvData, 4);
      put(xmit_pkts, Counter::PortXmitPkts, 1);
      put(rcv_pkts, Counter::PortRcvPkts, 1);
      put(wait, Counter::PortXmitWait, 1);
      for (std::size_t i = 0; i < std::size(kErrorCounters); ++i) put(errors[i], kErrorCounters[i].counter, 1);
      for (int k = 0; k < fabric::kCounterCount; ++k) {
        const auto which = static_cast<Counter>(k);
        if (!c.saturated(which)) continue;
        Labels l = labels;
        l.emplace_back("counter", fabric::counter_name(which));
        saturated.samples.push_back(Sample::of(std::move(l), 1));
      }
    }
  }
  for (auto* f : {&xmit_bytes, &rcv_bytes, &xmit_pkts, &rcv_pkts, &wait}) out.push_back(std::move(*f));
  for (auto& f : errors) out.push_back(std::move(f));
  out.push_back(std::move(saturated));
  out.push_back(std::move(extended));
  out.push_back(std::move(state));
}

void link_families(const FabricView& v, std::vector<MetricFamily>& out) {
  const Subnet& s = *v.subnet;
  auto up = gauge("fabscope_fabric_link_up",
                  "1 when both ends of the cable are Active and LinkUp, else 0. A link seen by an earlier "
                  "discovery and gone now stays here at 0 until the exporter restarts.");
  auto state = gauge("fabscope_fabric_link_state",
                     "PortState of the worse end: 1 Down, 2 Init, 3 Armed, 4 Active; 0 unknown (an end "
                     "not read, or gone from the fabric).");
  auto phys = gauge("fabscope_fabric_link_physical_state",
                    "PortPhysicalState of the end that is not LinkUp (else LinkUp): 1 Sleep, 2 Polling, "
                    "3 Disabled, 4 Training, 5 LinkUp, 6 ErrorRecovery, 7 PhyTest; 0 unknown.");
  auto width = gauge("fabscope_fabric_link_width_lanes", "Active width of an Active link: lanes of the narrower end.");
  // Data rates as the kernel's rate file and ibstat give them (HDR 50 Gb/s a lane, not its 53.125
  // signalling rate), in bytes per second: the node's fabscope_port_rate_bytes_per_second of an
  // HCA's port equals its link's here, and utilisation is rate(data bytes) divided by either.
  auto speed = gauge("fabscope_fabric_link_lane_rate_bytes_per_second",
                     "Data rate of one lane of an Active link (the slower end's), in bytes per second: "
                     "SDR 2.5 ... HDR 50, NDR 100 Gb/s times 10^9 / 8.");
  auto rate = gauge("fabscope_fabric_link_rate_bytes_per_second",
                    "Data rate of an Active link, width times lane rate, in bytes per second.");
  auto below_cap = gauge("fabscope_fabric_link_below_capability",
                         "1 when an Active link runs narrower or slower than both its ends support, else 0.");
  auto below_tier = gauge("fabscope_fabric_link_below_tier",
                          "1 when an Active link runs narrower or slower than most links of its tier (HCA<->leaf, "
                          "leaf<->spine, ...), else 0.");
  std::map<std::pair<std::uint64_t, int>, const fabric::LinkFact*> fact_at;
  const auto facts = fabric::link_facts(s);
  for (const auto& f : facts) {
    fact_at[{s.nodes[f.node].guid, f.port}] = &f;
    fact_at[{s.nodes[f.peer].guid, f.peer_port}] = &f;
  }
  auto add = [&](const LinkKey& k, bool present) {
    const Labels labels = link_labels(k);
    const auto* a = info_of(s, k.a.node_guid, k.a.port);
    const auto* b = info_of(s, k.b.node_guid, k.b.port);
    const int st = present ? link_state(a, b) : (a || b ? static_cast<int>(fabric::PortState::Down) : 0);
    const int ph = present ? link_phys_state(a, b) : a ? static_cast<int>(a->phys_state) : b ? static_cast<int>(b->phys_state) : 0;
    const bool is_up = present && st == static_cast<int>(fabric::PortState::Active) &&
                       ph == static_cast<int>(fabric::PhysState::LinkUp);
    up.samples.push_back(Sample::of(labels, is_up ? 1 : 0));
    state.samples.push_back(Sample::of(labels, st));
    phys.samples.push_back(Sample::of(labels, ph));
    if (!present) return;
    auto it = fact_at.find({k.a.node_guid, k.a.port});
    if (it == fact_at.end()) return;
    const auto& f = *it->second;
    if (f.width > 0) width.samples.push_back(Sample::of(labels, f.width));
    if (f.speed != fabric::Speed::Unknown) {
      const double lane = fabric::lane_data_gbps(f.speed) * 1e9 / 8;
      speed.samples.push_back(Sample::of(labels, lane));
      if (f.width > 0) rate.samples.push_back(Sample::of(labels, f.width * lane));
    }
    below_cap.samples.push_back(Sample::of(labels, f.below_capability ? 1 : 0));
    below_tier.samples.push_back(Sample::of(labels, f.below_tier ? 1 : 0));
  };
  for (const auto& k : link_keys(s)) add(k, true);
  for (const auto& k : v.missing_links) add(k, false);
  for (auto* f : {&up, &state, &phys, &width, &speed, &rate, &below_cap, &below_tier}) out.push_back(std::move(*f));
}

void sm_families(const Subnet& s, std::vector<MetricFamily>& out) {
  auto state = gauge("fabscope_fabric_sm_state",
                     "State of each subnet manager found (SMInfo): 0 NOTACTIVE, 1 DISCOVERING, 2 STANDBY, 3 MASTER.");
  auto priority = gauge("fabscope_fabric_sm_priority", "SMInfo priority of each subnet manager (0-15; the highest wins).");
  std::map<std::string, int> by_state{{"MASTER", 0}, {"STANDBY", 0}, {"DISCOVERING", 0}, {"NOTACTIVE", 0}};
  for (const auto& sm : s.sms) {
    const std::string name = sm.node >= 0 && sm.node < static_cast<int>(s.nodes.size()) ? s.name(sm.node) : "";
    Labels labels{{"sm_guid", fabric::guid_hex(sm.guid)}, {"sm_lid", std::to_string(sm.lid)}, {"node_name", name}};
    state.samples.push_back(Sample::of(labels, static_cast<int>(sm.state)));
    priority.samples.push_back(Sample::of(labels, sm.priority));
    ++by_state[fabric::to_string(sm.state)];
  }
  auto count = gauge("fabscope_fabric_sms", "Subnet managers found, by state; MASTER should be exactly 1.");
  for (const auto& [st, n] : by_state) count.samples.push_back(Sample::of({{"state", st}}, n));
  out.push_back(std::move(state));
  out.push_back(std::move(priority));
  out.push_back(std::move(count));
}

void count_families(const FabricView& v, std::vector<MetricFamily>& out) {
  const Subnet& s = *v.subnet;
  std::map<std::string, int> nodes{{"switch", 0}, {"hca", 0}, {"router", 0}};
  for (const auto& n : s.nodes)
    if (n.type != fabric::NodeType::Unknown) ++nodes[fabric::to_string(n.type)];
  auto fam = gauge("fabscope_fabric_nodes", "Nodes found by the last discovery, by type (switch, hca, router).");
  for (const auto& [t, n] : nodes) fam.samples.push_back(Sample::of({{"type", t}}, n));
  out.push_back(std::move(fam));
  out.push_back({"fabscope_fabric_links", MetricType::Gauge,
                 "Cables found by the last discovery (both ends answered).",
                 {Sample::of({}, static_cast<double>(s.links.size()))}});
  out.push_back({"fabscope_fabric_links_missing", MetricType::Gauge,
                 "Cables an earlier discovery found that the last one did not (pulled, or an end gone).",
                 {Sample::of({}, static_cast<double>(v.missing_links.size()))}});
  int without = 0;
  // Each node with a port the last collection could not read, named (its own timeout: the rest
  // of the sweep went on); only such nodes have a series, so a healthy fabric has none.
  auto unanswered = gauge("fabscope_fabric_node_unanswered",
                          "Ports of this node whose counters the last collection could not read (no answer within "
                          "its timeout and retries); absent when every port was read.");
  for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n) {
    const auto& node = s.nodes[static_cast<std::size_t>(n)];
    int missing = 0;
    for (const auto& p : node.ports)
      if (!(p.number == 0 && node.type == fabric::NodeType::Switch) && !p.counters) ++missing;
    if (missing)
      unanswered.samples.push_back(
          Sample::of({{"node_guid", fabric::guid_hex(node.guid)}, {"node_name", s.name(n)}}, missing));
    without += missing;
  }
  out.push_back(std::move(unanswered));
  out.push_back({"fabscope_fabric_ports_without_counters", MetricType::Gauge,
                 "Ports whose counters the last collection could not read (no answer within the retries, "
                 "or PortInfo missing).",
                 {Sample::of({}, without)}});
  out.push_back({"fabscope_fabric_notes", MetricType::Gauge,
                 "Notes of the last collection: nodes that did not answer, parts not read (see `fabscope "
                 "fabric` for their text).",
                 {Sample::of({}, static_cast<double>(s.notes.size()))}});
}

void collector_families(const FabricView& v, std::vector<MetricFamily>& out) {
  auto interval = gauge("fabscope_fabric_collection_interval_seconds",
                        "Configured interval of each kind of collection (discovery: the full sweep; counters: "
                        "every port's counters).");
  auto runs = counter("fabscope_fabric_collections_total", "Collections attempted, by kind.");
  auto errors = counter("fabscope_fabric_collection_errors_total",
                        "Collections that produced nothing (the fabric not reachable, the sweep failed), by kind; "
                        "the last complete collection is still served.");
  auto duration = gauge("fabscope_fabric_collection_duration_seconds", "Time the last collection took, by kind.");
  auto last = gauge("fabscope_fabric_last_success_timestamp_seconds",
                    "Unix time at which the last collection of each kind completed; 0 never.");
  auto mads = counter("fabscope_fabric_mads_sent_total",
                      "MADs sent by completed collections of each kind (discovery, SMInfo, counters, forwarding "
                      "tables; retries included).");
  auto timeouts = counter("fabscope_fabric_mad_timeouts_total",
                          "MAD requests of completed collections left unanswered after every retry, by kind.");
  for (const auto& [kind, st] : {std::pair{"discovery", &v.discovery}, std::pair{"counters", &v.counters}}) {
    Labels l{{"kind", kind}};
    mads.samples.push_back(Sample::of_u64(l, st->mads_sent_total));
    timeouts.samples.push_back(Sample::of_u64(l, st->mad_timeouts_total));
    interval.samples.push_back(Sample::of(l, st->interval_seconds));
    runs.samples.push_back(Sample::of_u64(l, st->runs_total));
    errors.samples.push_back(Sample::of_u64(l, st->errors_total));
    duration.samples.push_back(Sample::of(l, st->last_duration_seconds));
    last.samples.push_back(Sample::of(l, st->last_success_timestamp_seconds));
  }
  for (auto* f : {&interval, &runs, &errors, &duration, &last, &mads, &timeouts}) out.push_back(std::move(*f));
  if (v.xmit_wait_tick_ns > 0)
    out.push_back({"fabscope_fabric_transmit_wait_tick_seconds", MetricType::Gauge,
                   "Length of one PortXmitWait tick as configured (--fabric-xmit-wait-tick-ns), in seconds.",
                   {Sample::of({}, v.xmit_wait_tick_ns * 1e-9)}});
}

}  // namespace

std::vector<LinkKey> link_keys(const Subnet& s) {
  std::vector<LinkKey> keys;
  keys.reserve(s.links.size());
  for (const auto& l : s.links) {
    if (l.a_node < 0 || l.b_node < 0 || l.a_node >= static_cast<int>(s.nodes.size()) ||
        l.b_node >= static_cast<int>(s.nodes.size()))
      continue;
    LinkKey k{end_of(s, l.a_node, l.a_port), end_of(s, l.b_node, l.b_port)};
    if (k.b < k.a) std::swap(k.a, k.b);
    keys.push_back(std::move(k));
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::vector<MetricFamily> fabric_families(const FabricView& v) {
  std::vector<MetricFamily> out;
  if (v.subnet) {
    port_families(*v.subnet, out);
    link_families(v, out);
    sm_families(*v.subnet, out);
    count_families(v, out);
  }
  collector_families(v, out);
  return out;
}

}  // namespace fabscope::exporter
