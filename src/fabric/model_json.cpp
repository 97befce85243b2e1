// The "fabscope.fabric" schema, version 1 (docs/formats.md): a Subnet to JSON and back. The
// reader trusts nothing: a saved sweep may be hand-edited, truncated or from another tool, and
// the judgements index nodes and ports by what it says, so every index is checked against the
// nodes read and every link against its other end.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <ostream>
#include <set>
#include <utility>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json_stream.hpp"
#include "fabric/model.hpp"

namespace fabscope::fabric {

namespace {

constexpr std::size_t kMaxText = 4096;          // a description, a note, a path
constexpr std::size_t kMaxNodes = 1u << 20;      // far beyond any subnet (48K LIDs)
constexpr std::size_t kMaxNotes = 1u << 20;
constexpr std::size_t kMaxLftEntries = 0xc000;   // LIDs 0..0xbfff: every unicast LID

// --- writing -------------------------------------------------------------------------------

json speeds_json(SpeedMask m) {
  json a = json::array();
  for (int s = static_cast<int>(Speed::SDR); s <= static_cast<int>(Speed::XDR); ++s)
    if (m & speed_bit(static_cast<Speed>(s))) a.push_back(to_string(static_cast<Speed>(s)));
  return a;
}

json widths_json(WidthMask m) {
  json a = json::array();
  for (int lanes : {1, 2, 4, 8, 12})
    if (m & width_bit(lanes)) a.push_back(lanes);
  return a;
}

json info_json(const PortInfo& i) {
  return json{{"state", to_string(i.state)},
              {"phys_state", to_string(i.phys_state)},
              {"width_active", i.width_active},
              {"width_enabled", widths_json(i.width_enabled)},
              {"width_supported", widths_json(i.width_supported)},
              {"speed_active", to_string(i.speed_active)},
              {"speed_enabled", speeds_json(i.speed_enabled)},
              {"speed_supported", speeds_json(i.speed_supported)},
              {"mtu_active", i.mtu_active},
              {"mtu_max", i.mtu_max},
              {"lid", i.lid},
              {"lmc", i.lmc},
              {"sm_lid", i.sm_lid},
              {"capability_mask", i.capability_mask},
              {"link_down_default", i.link_down_default}};
}

json port_json(const Port& p) {
  json j{{"number", p.number}, {"guid", guid_hex(p.guid)}};
  j["info"] = p.info ? info_json(*p.info) : json(nullptr);
  if (p.counters) {
    json c = json::object();
    for (int k = 0; k < kCounterCount; ++k) {
      const auto& v = p.counters->value[static_cast<std::size_t>(k)];
      if (v) c[counter_name(static_cast<Counter>(k))] = *v;
    }
    j["counters"] = std::move(c);
    j["counters_extended"] = p.counters->extended;
  } else {
    j["counters"] = nullptr;
    j["counters_extended"] = false;
  }
  j["remote_node"] = p.remote_node;
  j["remote_port"] = p.remote_port;
  j["note"] = p.note;
  return j;
}

// The LFT as two lowercase hex digits per LID, LID 0 first: 98 KiB for a full 48K-LID table
// where a JSON array of numbers would take about three times that.
std::string lft_hex(const std::vector<std::uint8_t>& lft) {
  static const char digits[] = "0123456789abcdef";
  std::string h(lft.size() * 2, '0');
  for (std::size_t i = 0; i < lft.size(); ++i) {
    h[2 * i] = digits[lft[i] >> 4];
    h[2 * i + 1] = digits[lft[i] & 15];
  }
  return h;
}

json node_json(const Node& n) {
  json ports = json::array();
  for (const auto& p : n.ports) ports.push_back(port_json(p));
  json j{{"type", to_string(n.type)},       {"guid", guid_hex(n.guid)},
         {"system_guid", guid_hex(n.system_guid)}, {"description", n.description},
         {"vendor_id", n.vendor_id},         {"device_id", n.device_id},
         {"revision", n.revision},           {"firmware", n.firmware},
         {"num_ports", n.num_ports},         {"dr_path", n.dr_path},
         {"note", n.note},                   {"ports", std::move(ports)}};
  if (!n.lft.empty()) j["lft"] = lft_hex(n.lft);
  return j;
}

// --- reading -------------------------------------------------------------------------------

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  throw Error("field '" + where + "' " + what);
}

std::string shown(const json& v) { return v.dump(-1, ' ', false, json::error_handler_t::replace).substr(0, 40); }

const json& member(const json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end()) bad(where.empty() ? key : where + "." + key, "is missing");
  return *it;
}

std::string path_of(const std::string& where, const char* key) { return where.empty() ? key : where + "." + key; }

template <typename T>
T integer(const json& obj, const char* key, const std::string& where) {
  const std::string at = path_of(where, key);
  const json& v = member(obj, key, where);
  try {
    return int_value<T>(v, at);
  } catch (const Error&) {
    bad(at, "is " + shown(v) + ", not an integer from " + std::to_string(std::numeric_limits<T>::min()) + " to " +
                std::to_string(std::numeric_limits<T>::max()));
  }
}

int bounded(const json& obj, const char* key, const std::string& where, int lo, int hi) {
  const std::string at = path_of(where, key);
  const json& v = member(obj, key, where);
  bool ok = false;
  if (v.is_number_unsigned())
    ok = v.get<std::uint64_t>() <= static_cast<std::uint64_t>(hi) && static_cast<std::int64_t>(v.get<std::uint64_t>()) >= lo;
  else if (v.is_number_integer()) ok = v.get<std::int64_t>() >= lo && v.get<std::int64_t>() <= hi;
  if (!ok) bad(at, "is " + shown(v) + ", not an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
  return static_cast<int>(v.get<std::int64_t>());
}

std::uint64_t u64(const json& v, const std::string& at) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0) return static_cast<std::uint64_t>(v.get<std::int64_t>());
  bad(at, "is " + shown(v) + ", not an integer from 0 to 18446744073709551615");
}

std::string text(const json& obj, const char* key, const std::string& where) {
  const json& v = member(obj, key, where);
  if (!v.is_string()) bad(path_of(where, key), "is " + shown(v) + ", not a string");
  const auto& s = v.get_ref<const std::string&>();
  if (s.size() > kMaxText) bad(path_of(where, key), "is longer than " + std::to_string(kMaxText) + " bytes");
  return s;
}

bool boolean(const json& obj, const char* key, const std::string& where) {
  const json& v = member(obj, key, where);
  if (!v.is_boolean()) bad(path_of(where, key), "is " + shown(v) + ", not true or false");
  return v.get<bool>();
}

const json& array(const json& obj, const char* key, const std::string& where) {
  const json& v = member(obj, key, where);
  if (!v.is_array()) bad(path_of(where, key), "is " + shown(v) + ", not an array");
  return v;
}

std::uint64_t guid(const json& obj, const char* key, const std::string& where) {
  const std::string s = text(obj, key, where);
  bool ok = s.size() > 2 && s.size() <= 18 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  for (std::size_t i = 2; ok && i < s.size(); ++i) ok = std::isxdigit(static_cast<unsigned char>(s[i])) != 0;
  if (!ok) bad(path_of(where, key), "is \"" + s.substr(0, 40) + "\", not a GUID (0x and up to 16 hex digits)");
  return std::stoull(s.substr(2), nullptr, 16);
}

// An enum from the text its to_string writes.
template <typename E>
E enum_text(const json& obj, const char* key, const std::string& where, int first, int last) {
  const std::string s = text(obj, key, where);
  std::string known;
  for (int v = first; v <= last; ++v) {
    const char* name = to_string(static_cast<E>(v));
    if (s == name) return static_cast<E>(v);
    known += std::string(known.empty() ? "" : ", ") + name;
  }
  bad(path_of(where, key), "is \"" + s.substr(0, 40) + "\", not one of " + known);
}

SpeedMask speeds(const json& obj, const char* key, const std::string& where) {
  const json& a = array(obj, key, where);
  SpeedMask m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string at = path_of(where, key) + "[" + std::to_string(i) + "]";
    bool found = false;
    for (int s = static_cast<int>(Speed::SDR); s <= static_cast<int>(Speed::XDR) && !found; ++s)
      if (a[i].is_string() && a[i].get_ref<const std::string&>() == to_string(static_cast<Speed>(s))) {
        m |= speed_bit(static_cast<Speed>(s));
        found = true;
      }
    if (!found) bad(at, "is " + shown(a[i]) + ", not a speed (SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR, XDR)");
  }
  return m;
}

WidthMask widths(const json& obj, const char* key, const std::string& where) {
  const json& a = array(obj, key, where);
  WidthMask m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string at = path_of(where, key) + "[" + std::to_string(i) + "]";
    int lanes = 0;
    if (a[i].is_number_integer() && !a[i].is_number_float()) {
      auto v = a[i].is_number_unsigned() ? static_cast<std::int64_t>(std::min<std::uint64_t>(a[i].get<std::uint64_t>(), 99))
                                         : a[i].get<std::int64_t>();
      if (v >= 0 && v <= 12) lanes = static_cast<int>(v);
    }
    if (lanes != 1 && lanes != 2 && lanes != 4 && lanes != 8 && lanes != 12)
      bad(at, "is " + shown(a[i]) + ", not a width (1, 2, 4, 8 or 12 lanes)");
    m |= width_bit(lanes);
  }
  return m;
}

int mtu(const json& obj, const char* key, const std::string& where) {
  int v = bounded(obj, key, where, 0, 4096);
  if (v != 0 && v != 256 && v != 512 && v != 1024 && v != 2048 && v != 4096)
    bad(path_of(where, key), "is " + std::to_string(v) + ", not an MTU (0 unknown, 256, 512, 1024, 2048, 4096)");
  return v;
}

PortInfo info_from(const json& j, const std::string& w) {
  if (!j.is_object()) bad(w, "is " + shown(j) + ", not an object or null");
  PortInfo i;
  i.state = enum_text<PortState>(j, "state", w, 0, 4);
  i.phys_state = enum_text<PhysState>(j, "phys_state", w, 0, 7);
  i.width_active = bounded(j, "width_active", w, 0, 12);
  if (i.width_active != 0 && !(width_bit(i.width_active) & (width_bit(1) | width_bit(2) | width_bit(4) |
                                                             width_bit(8) | width_bit(12))))
    bad(w + ".width_active", "is " + std::to_string(i.width_active) + ", not a width (0, 1, 2, 4, 8 or 12 lanes)");
  i.width_enabled = widths(j, "width_enabled", w);
  i.width_supported = widths(j, "width_supported", w);
  i.speed_active = enum_text<Speed>(j, "speed_active", w, 0, static_cast<int>(Speed::XDR));
  i.speed_enabled = speeds(j, "speed_enabled", w);
  i.speed_supported = speeds(j, "speed_supported", w);
  i.mtu_active = mtu(j, "mtu_active", w);
  i.mtu_max = mtu(j, "mtu_max", w);
  i.lid = integer<std::uint16_t>(j, "lid", w);
  i.lmc = bounded(j, "lmc", w, 0, 7);
  i.sm_lid = integer<std::uint16_t>(j, "sm_lid", w);
  i.capability_mask = integer<std::uint32_t>(j, "capability_mask", w);
  i.link_down_default = bounded(j, "link_down_default", w, 0, 15);
  return i;
}

Counters counters_from(const json& j, bool extended, const std::string& w) {
  if (!j.is_object()) bad(w, "is " + shown(j) + ", not an object or null");
  Counters c;
  c.extended = extended;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string at = w + "." + it.key().substr(0, 64);
    auto k = counter_from_name(it.key());
    if (!k) bad(at, "is no counter this schema knows (SymbolErrorCounter, ..., PortRcvPkts)");
    const std::uint64_t v = u64(*it, at);
    const int bits = counter_bits(*k, extended);
    const std::uint64_t max = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    if (v > max)
      bad(at, "is " + std::to_string(v) + ", beyond the counter's " + std::to_string(bits) + " bits (" +
                  std::to_string(max) + ")");
    c[*k] = v;
  }
  return c;
}

Port port_from(const json& j, const std::string& w) {
  if (!j.is_object()) bad(w, "is " + shown(j) + ", not an object");
  Port p;
  p.number = bounded(j, "number", w, 0, 255);
  p.guid = guid(j, "guid", w);
  const json& info = member(j, "info", w);
  if (!info.is_null()) p.info = info_from(info, w + ".info");
  const json& counters = member(j, "counters", w);
  const bool extended = boolean(j, "counters_extended", w);
  if (!counters.is_null()) p.counters = counters_from(counters, extended, w + ".counters");
  p.remote_node = integer<int>(j, "remote_node", w);
  p.remote_port = bounded(j, "remote_port", w, 0, 255);
  p.note = text(j, "note", w);
  return p;
}

// "lft": absent (not read; files saved before it existed) or two hex digits per LID from LID 0.
std::vector<std::uint8_t> lft_from(const json& v, const std::string& w, NodeType type) {
  if (!v.is_string()) bad(w, "is " + shown(v) + ", not a string of hex digits");
  const auto& h = v.get_ref<const std::string&>();
  if (type != NodeType::Switch && !h.empty())
    bad(w, "is set on a node of type " + std::string(to_string(type)) + "; only switches forward");
  if (h.size() % 2) bad(w, "has " + std::to_string(h.size()) + " hex digits, not two per LID");
  if (h.size() / 2 > kMaxLftEntries)
    bad(w, "has " + std::to_string(h.size() / 2) + " entries, more than the " + std::to_string(kMaxLftEntries) +
               " unicast LIDs");
  auto nibble = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
  };
  std::vector<std::uint8_t> lft(h.size() / 2);
  for (std::size_t i = 0; i < lft.size(); ++i) {
    const int hi = nibble(h[2 * i]), lo = nibble(h[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      std::string pair;
      for (char c : {h[2 * i], h[2 * i + 1]}) {
        char b[8];
        if (c >= 0x20 && c < 0x7f) {
          pair += c;
        } else {
          std::snprintf(b, sizeof b, "\\x%02x", static_cast<unsigned char>(c));
          pair += b;
        }
      }
      bad(w, "has \"" + pair + "\" at LID " + std::to_string(i) + " (characters " + std::to_string(2 * i) + "-" +
                 std::to_string(2 * i + 1) + "), not two hex digits");
    }
    lft[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return lft;
}

Node node_from(const json& j, const std::string& w) {
  if (!j.is_object()) bad(w, "is " + shown(j) + ", not an object");
  Node n;
  n.type = enum_text<NodeType>(j, "type", w, 0, 3);
  n.guid = guid(j, "guid", w);
  n.system_guid = guid(j, "system_guid", w);
  n.description = text(j, "description", w);
  n.vendor_id = integer<std::uint32_t>(j, "vendor_id", w);
  if (n.vendor_id > 0xffffff) bad(w + ".vendor_id", "is " + std::to_string(n.vendor_id) + ", beyond 24 bits");
  n.device_id = integer<std::uint16_t>(j, "device_id", w);
  n.revision = integer<std::uint32_t>(j, "revision", w);
  n.firmware = text(j, "firmware", w);
  n.num_ports = bounded(j, "num_ports", w, 0, 254);
  n.dr_path = text(j, "dr_path", w);
  n.note = text(j, "note", w);
  const json& ports = array(j, "ports", w);
  // Switches list ports 0..num_ports at their number; the others 1..num_ports at number - 1.
  const bool sw = n.type == NodeType::Switch;
  const std::size_t expected = static_cast<std::size_t>(n.num_ports) + (sw ? 1 : 0);
  if (ports.size() != expected)
    bad(w + ".ports", "has " + std::to_string(ports.size()) + " entries; a " + to_string(n.type) + " with num_ports " +
                          std::to_string(n.num_ports) + " has " + std::to_string(expected) +
                          (sw ? " (ports 0.." : " (ports 1..") + std::to_string(n.num_ports) + ")");
  for (std::size_t i = 0; i < ports.size(); ++i) {
    const std::string pw = w + ".ports[" + std::to_string(i) + "]";
    Port p = port_from(ports[i], pw);
    const int want = static_cast<int>(i) + (sw ? 0 : 1);
    if (p.number != want)
      bad(pw + ".number", "is " + std::to_string(p.number) + "; this entry is port " + std::to_string(want));
    n.ports.push_back(std::move(p));
  }
  if (auto it = j.find("lft"); it != j.end()) n.lft = lft_from(*it, w + ".lft", n.type);
  return n;
}

SmInfo sm_from(const json& j, const std::string& w, std::size_t nodes) {
  if (!j.is_object()) bad(w, "is " + shown(j) + ", not an object");
  SmInfo s;
  s.guid = guid(j, "guid", w);
  s.lid = integer<std::uint16_t>(j, "lid", w);
  s.priority = bounded(j, "priority", w, 0, 15);
  s.state = enum_text<SmState>(j, "state", w, 0, 3);
  s.act_count = integer<std::uint32_t>(j, "act_count", w);
  s.node = integer<int>(j, "node", w);
  if (s.node < -1 || s.node >= static_cast<int>(nodes))
    bad(w + ".node", "is " + std::to_string(s.node) + ", not -1 or a node index below " + std::to_string(nodes));
  return s;
}

// Every link seen from both ends: the remote end exists and points back.
void check_links(const Subnet& s) {
  const int count = static_cast<int>(s.nodes.size());
  for (int pass = 0; pass < 2; ++pass) {
    for (int n = 0; n < count; ++n) {
      for (std::size_t i = 0; i < s.nodes[n].ports.size(); ++i) {
        const Port& p = s.nodes[n].ports[i];
        const std::string w = "nodes[" + std::to_string(n) + "].ports[" + std::to_string(i) + "]";
        if (p.remote_node == -1) {
          if (p.remote_port != 0) bad(w + ".remote_port", "is " + std::to_string(p.remote_port) + " with no remote_node");
          continue;
        }
        if (!pass) {  // first every index, so an error names the port that holds the bad one
          if (p.remote_node < 0 || p.remote_node >= count)
            bad(w + ".remote_node", "is " + std::to_string(p.remote_node) + ", not -1 or a node index below " +
                                        std::to_string(count));
          if (p.number == 0 && s.nodes[n].type == NodeType::Switch)
            bad(w + ".remote_node", "is set on a switch's management port 0, which has no cable");
          if (!s.nodes[p.remote_node].port(p.remote_port))
            bad(w + ".remote_port", "is " + std::to_string(p.remote_port) + ", a port node " +
                                        std::to_string(p.remote_node) + " does not have");
          continue;
        }
        const Port* r = s.nodes[p.remote_node].port(p.remote_port);
        if (r->remote_node != n || r->remote_port != p.number)
          bad(w, "says it is linked to node " + std::to_string(p.remote_node) + " port " + std::to_string(p.remote_port) +
                     ", which says it is linked to node " + std::to_string(r->remote_node) + " port " +
                     std::to_string(r->remote_port));
        if (p.remote_node == n && p.remote_port == p.number) bad(w, "is linked to itself");
      }
    }
  }
}

}  // namespace

json to_json(const Subnet& s) {
  json j = to_json_without_nodes(s);
  json nodes = json::array();
  for (const auto& n : s.nodes) nodes.push_back(node_json(n));
  j["nodes"] = std::move(nodes);
  return j;
}

void write_json(std::ostream& out, const Subnet& s, const json& doc) {
  write_json_streaming_array(out, doc, "nodes", s.nodes.size(), [&s](std::size_t i) { return node_json(s.nodes[i]); });
}

json to_json_without_nodes(const Subnet& s) {
  // The links as the ports give them (s.links may be stale in a Subnet built by hand).
  json links = json::array();
  for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n)
    for (const auto& p : s.nodes[n].ports)
      if (p.remote_node >= 0 && std::pair(n, p.number) < std::pair(p.remote_node, p.remote_port)) {
        const Link l{n, p.number, p.remote_node, p.remote_port};
        links.push_back({{"a_node", l.a_node}, {"a_port", l.a_port}, {"b_node", l.b_node}, {"b_port", l.b_port}});
      }
  json sms = json::array();
  for (const auto& m : s.sms)
    sms.push_back({{"guid", guid_hex(m.guid)}, {"lid", m.lid}, {"priority", m.priority},
                   {"state", to_string(m.state)}, {"act_count", m.act_count}, {"node", m.node}});
  return json{{"schema", "fabscope.fabric"}, {"schema_version", kFabricSchemaVersion},
              {"source", s.source},          {"swept_at", s.swept_at},
              {"sweep_s", s.sweep_s},        {"links", std::move(links)},
              {"sms", std::move(sms)},
              {"notes", s.notes}};
}

Subnet subnet_from_json(const json& j) {
  if (!j.is_object()) throw Error("not a JSON object (expected the output of fabscope fabric --json or --save)");
  const std::string schema = text(j, "schema", "");
  if (schema != "fabscope.fabric") bad("schema", "is \"" + schema.substr(0, 40) + "\", not \"fabscope.fabric\"");
  const int version = bounded(j, "schema_version", "", 0, 1 << 30);
  if (version != kFabricSchemaVersion)
    bad("schema_version", "is " + std::to_string(version) + "; this fabscope reads version " +
                              std::to_string(kFabricSchemaVersion));
  Subnet s;
  s.source = text(j, "source", "");
  s.swept_at = text(j, "swept_at", "");
  const json& t = member(j, "sweep_s", "");
  if (!t.is_number() || !(t.get<double>() >= 0) || t.get<double>() > 1e9)
    bad("sweep_s", "is " + shown(t) + ", not a number of seconds from 0 to 1e9");
  s.sweep_s = t.get<double>();
  const json& nodes = array(j, "nodes", "");
  if (nodes.size() > kMaxNodes) bad("nodes", "has more than " + std::to_string(kMaxNodes) + " entries");
  for (std::size_t i = 0; i < nodes.size(); ++i) s.nodes.push_back(node_from(nodes[i], "nodes[" + std::to_string(i) + "]"));
  check_links(s);
  s.rebuild_links();
  // "links" is derived from the ports; a list that disagrees with them is a broken file.
  const json& links = array(j, "links", "");
  bool same = links.size() == s.links.size();
  for (std::size_t i = 0; same && i < links.size(); ++i) {
    const json& l = links[i];
    same = l.is_object() && l.value("a_node", json()) == s.links[i].a_node && l.value("a_port", json()) == s.links[i].a_port &&
           l.value("b_node", json()) == s.links[i].b_node && l.value("b_port", json()) == s.links[i].b_port;
  }
  if (!same)
    bad("links", "does not list the links the ports' remote ends give (" + std::to_string(s.links.size()) +
                     " links, each once, lower (node, port) end first)");
  const json& sms = array(j, "sms", "");
  for (std::size_t i = 0; i < sms.size(); ++i)
    s.sms.push_back(sm_from(sms[i], "sms[" + std::to_string(i) + "]", s.nodes.size()));
  const json& notes = array(j, "notes", "");
  if (notes.size() > kMaxNotes) bad("notes", "has more than " + std::to_string(kMaxNotes) + " entries");
  for (std::size_t i = 0; i < notes.size(); ++i) {
    const std::string w = "notes[" + std::to_string(i) + "]";
    if (!notes[i].is_string()) bad(w, "is " + shown(notes[i]) + ", not a string");
    if (notes[i].get_ref<const std::string&>().size() > kMaxText)
      bad(w, "is longer than " + std::to_string(kMaxText) + " bytes");
    s.notes.push_back(notes[i].get<std::string>());
  }
  return s;
}

Subnet load_subnet(const std::string& path) {
  constexpr std::size_t kMaxBytes = 256u << 20;
  const std::string body = core::read_input(path, kMaxBytes);
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) throw Error(path + ": not JSON (expected the output of fabscope fabric --json or --save)");
  try {
    return subnet_from_json(j);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

}  // namespace fabscope::fabric
