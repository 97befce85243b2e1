#include "fabric/model.hpp"

#include <algorithm>
#include <cstdio>

namespace fabscope::fabric {

const char* to_string(NodeType t) {
  switch (t) {
    case NodeType::Hca: return "hca";
    case NodeType::Switch: return "switch";
    case NodeType::Router: return "router";
    default: return "unknown";
  }
}

const char* to_string(PortState s) {
  switch (s) {
    case PortState::Down: return "Down";
    case PortState::Init: return "Init";
    case PortState::Armed: return "Armed";
    case PortState::Active: return "Active";
    default: return "?";
  }
}

const char* to_string(PhysState s) {
  switch (s) {
    case PhysState::Sleep: return "Sleep";
    case PhysState::Polling: return "Polling";
    case PhysState::Disabled: return "Disabled";
    case PhysState::Training: return "PortConfigurationTraining";
    case PhysState::LinkUp: return "LinkUp";
    case PhysState::ErrorRecovery: return "LinkErrorRecovery";
    case PhysState::PhyTest: return "PhyTest";
    default: return "?";
  }
}

const char* to_string(Speed s) {
  switch (s) {
    case Speed::SDR: return "SDR";
    case Speed::DDR: return "DDR";
    case Speed::QDR: return "QDR";
    case Speed::FDR10: return "FDR10";
    case Speed::FDR: return "FDR";
    case Speed::EDR: return "EDR";
    case Speed::HDR: return "HDR";
    case Speed::NDR: return "NDR";
    case Speed::XDR: return "XDR";
    default: return "?";
  }
}

double lane_gbps(Speed s) {
  switch (s) {
    case Speed::SDR: return 2.5;
    case Speed::DDR: return 5.0;
    case Speed::QDR: return 10.0;
    case Speed::FDR10: return 10.3125;
    case Speed::FDR: return 14.0625;
    case Speed::EDR: return 25.78125;
    case Speed::HDR: return 53.125;
    case Speed::NDR: return 106.25;
    case Speed::XDR: return 212.5;
    default: return 0;
  }
}

// The kernel's rate_show (drivers/infiniband/core/sysfs.c) and ibstat's "Rate": FDR 14, EDR 25,
// HDR 50 a lane, what "200 Gb/sec (4X HDR)" says; the encoding and FEC overhead is not in it.
double lane_data_gbps(Speed s) {
  switch (s) {
    case Speed::SDR: return 2.5;
    case Speed::DDR: return 5.0;
    case Speed::QDR: return 10.0;
    case Speed::FDR10: return 10.0;
    case Speed::FDR: return 14.0;
    case Speed::EDR: return 25.0;
    case Speed::HDR: return 50.0;
    case Speed::NDR: return 100.0;
    case Speed::XDR: return 200.0;
    default: return 0;
  }
}

Speed fastest(SpeedMask m) {
  for (int s = static_cast<int>(Speed::XDR); s > 0; --s)
    if (m & speed_bit(static_cast<Speed>(s))) return static_cast<Speed>(s);
  return Speed::Unknown;
}

int widest(WidthMask m) {
  for (int lanes : {12, 8, 4, 2, 1})
    if (m & width_bit(lanes)) return lanes;
  return 0;
}

const char* to_string(SmState s) {
  switch (s) {
    case SmState::Discovering: return "DISCOVERING";
    case SmState::Standby: return "STANDBY";
    case SmState::Master: return "MASTER";
    default: return "NOTACTIVE";
  }
}

namespace {
struct CounterDef {
  Counter c;
  const char* name;
  int bits;          // in PortCounters
  int extended_bits; // as read when the extended counters are used
  bool error;
};
constexpr CounterDef kCounters[] = {
    {Counter::SymbolErrorCounter, "SymbolErrorCounter", 16, 16, true},
    {Counter::LinkErrorRecoveryCounter, "LinkErrorRecoveryCounter", 8, 8, true},
    {Counter::LinkDownedCounter, "LinkDownedCounter", 8, 8, true},
    {Counter::PortRcvErrors, "PortRcvErrors", 16, 16, true},
    {Counter::PortRcvRemotePhysicalErrors, "PortRcvRemotePhysicalErrors", 16, 16, true},
    {Counter::PortRcvSwitchRelayErrors, "PortRcvSwitchRelayErrors", 16, 16, true},
    {Counter::PortXmitDiscards, "PortXmitDiscards", 16, 16, true},
    {Counter::PortXmitConstraintErrors, "PortXmitConstraintErrors", 8, 8, true},
    {Counter::PortRcvConstraintErrors, "PortRcvConstraintErrors", 8, 8, true},
    {Counter::LocalLinkIntegrityErrors, "LocalLinkIntegrityErrors", 4, 4, true},
    {Counter::ExcessiveBufferOverrunErrors, "ExcessiveBufferOverrunErrors", 4, 4, true},
    {Counter::VL15Dropped, "VL15Dropped", 16, 16, true},
    {Counter::PortXmitWait, "PortXmitWait", 32, 32, false},
    {Counter::PortXmitData, "PortXmitData", 32, 64, false},
    {Counter::PortRcvData, "PortRcvData", 32, 64, false},
    {Counter::PortXmitPkts, "PortXmitPkts", 32, 64, false},
    {Counter::PortRcvPkts, "PortRcvPkts", 32, 64, false},
};
static_assert(std::size(kCounters) == static_cast<std::size_t>(kCounterCount));
const CounterDef& def(Counter c) { return kCounters[static_cast<std::size_t>(c)]; }
}  // namespace

const char* counter_name(Counter c) { return def(c).name; }
std::optional<Counter> counter_from_name(const std::string& name) {
  for (const auto& d : kCounters)
    if (name == d.name) return d.c;
  return std::nullopt;
}
int counter_bits(Counter c, bool extended) { return extended ? def(c).extended_bits : def(c).bits; }
bool is_error_counter(Counter c) { return def(c).error; }

bool Counters::saturated(Counter c) const {
  const auto& v = (*this)[c];
  if (!v) return false;
  int bits = counter_bits(c, extended);
  std::uint64_t max = bits >= 64 ? ~0ull : (1ull << bits) - 1;
  return *v == max;
}

const Port* Node::port(int number) const {
  for (const auto& p : ports)
    if (p.number == number) return &p;
  return nullptr;
}
Port* Node::port(int number) {
  for (auto& p : ports)
    if (p.number == number) return &p;
  return nullptr;
}

std::uint16_t Node::lid() const {
  for (const auto& p : ports) {
    if (type == NodeType::Switch && p.number != 0) continue;
    if (p.info && p.info->lid != 0) return p.info->lid;
  }
  return 0;
}

void Subnet::rebuild_links() {
  links.clear();
  for (int n = 0; n < static_cast<int>(nodes.size()); ++n) {
    for (const auto& p : nodes[n].ports) {
      if (p.remote_node < 0) continue;
      if (std::pair(n, p.number) < std::pair(p.remote_node, p.remote_port))
        links.push_back({n, p.number, p.remote_node, p.remote_port});
    }
  }
}

int Subnet::find_guid(std::uint64_t node_guid) const {
  for (int n = 0; n < static_cast<int>(nodes.size()); ++n)
    if (nodes[n].guid == node_guid) return n;
  return -1;
}

int Subnet::find_lid(std::uint16_t lid) const {
  if (lid == 0) return -1;
  for (int n = 0; n < static_cast<int>(nodes.size()); ++n) {
    for (const auto& p : nodes[n].ports) {
      if (!p.info || p.info->lid == 0) continue;
      if (nodes[n].type == NodeType::Switch && p.number != 0) continue;
      unsigned span = 1u << std::min(p.info->lmc, 7);
      if (lid >= p.info->lid && lid < p.info->lid + span) return n;
    }
  }
  return -1;
}

std::string Subnet::name(int node) const {
  if (node < 0 || node >= static_cast<int>(nodes.size())) return "?";
  const auto& n = nodes[node];
  return n.description.empty() ? guid_hex(n.guid) : n.description;
}

std::string guid_hex(std::uint64_t guid) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(guid));
  return buf;
}

std::uint64_t parse_guid(std::string text) {
  if (text.rfind("0x", 0) == 0 || text.rfind("0X", 0) == 0) text = text.substr(2);
  std::string hex;
  for (char c : text)
    if (c != ':') hex += c;
  if (hex.empty() || hex.size() > 16) return 0;
  std::uint64_t v = 0;
  for (char c : hex) {
    int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
    if (d < 0) return 0;
    v = v << 4 | static_cast<std::uint64_t>(d);
  }
  return v;
}

}  // namespace fabscope::fabric
