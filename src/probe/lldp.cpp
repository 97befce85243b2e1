#include "probe/lldp.hpp"

#include <cstdlib>
#include <map>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "probe/read_util.hpp"

namespace fabscope::probe {

namespace {

constexpr std::size_t kMaxNeighbors = 4096;
constexpr std::size_t kMaxOutputBytes = 8u << 20;  // 4096 neighbours in json0 take about 7 MiB
constexpr std::size_t kMaxText = 1024;             // LLDP strings are at most 255 bytes
constexpr std::size_t kMaxSocketPath = 107;        // sun_path holds 108 bytes with the NUL

// The members of an element: a list's members, or the element itself (the "json" shape writes a
// list of one as the member alone).
std::vector<const json*> members(const json& j) {
  std::vector<const json*> out;
  if (j.is_array()) {
    for (const auto& m : j) out.push_back(&m);
  } else if (!j.is_null()) {
    out.push_back(&j);
  }
  return out;
}

// The member of an element lldpcli writes once (port, chassis, id); nullptr when absent.
const json* single(const json& parent, const char* key) {
  if (!parent.is_object() || !parent.contains(key)) return nullptr;
  auto m = members(parent[key]);
  return m.empty() ? nullptr : m.front();
}

// Control characters would break the text tables; LLDP strings are free text from the switch.
std::string printable(std::string s) {
  for (auto& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return s;
}

// A text value: "x", {"value": "x"} or [{"value": "x"}]; "" when absent. where names the field
// in errors.
std::string text(const json* j, const std::string& where) {
  if (!j || j->is_null()) return "";
  if (j->is_array()) {
    auto m = members(*j);
    return m.empty() ? "" : text(m.front(), where);
  }
  if (j->is_object()) return j->contains("value") ? text(&(*j)["value"], where) : "";
  if (j->is_boolean()) return j->get<bool>() ? "yes" : "no";
  if (!j->is_string()) throw Error(where + " is " + j->dump() + ", not text");
  const auto& s = j->get_ref<const std::string&>();
  if (s.size() > kMaxText)
    throw Error(where + " is " + std::to_string(s.size()) + " bytes long (LLDP strings take at most 255)");
  return printable(s);
}

std::string text_at(const json* parent, const char* key, const std::string& where) {
  if (!parent || !parent->is_object() || !parent->contains(key)) return "";
  return text(&(*parent)[key], where);
}

// A decimal number written as text ("9216"), within [0, max].
std::optional<int> number(const std::string& s, int max, const std::string& where, const char* what) {
  if (s.empty()) return std::nullopt;
  long long v = 0;
  bool ok = s.size() <= 6;
  for (char c : s) ok = ok && c >= '0' && c <= '9';
  if (ok) v = std::stoll(s);
  if (!ok || v > max)
    throw Error(where + " is " + quote(s) + ", not " + what + " (0 to " + std::to_string(max) + ")");
  return static_cast<int>(v);
}

bool truthy(const json& j) {
  if (j.is_boolean()) return j.get<bool>();
  if (j.is_string()) return j.get<std::string>() == "yes" || j.get<std::string>() == "on";
  auto m = members(j);
  return j.is_array() && !m.empty() && truthy(*m.front());
}

// A chassis ID or port ID element: {"type": "mac", "value": "..."} (json0: lists around both).
void read_id(const json* id, std::string& value, std::string& type, const std::string& where) {
  if (!id) return;
  if (id->is_object()) {
    type = text_at(id, "type", where + " type");
    value = text_at(id, "value", where);
  } else {
    value = text(id, where);
  }
}

// An object that is a chassis ID rather than a chassis named "id".
bool is_id(const json& j) {
  if (j.is_array() || j.is_string()) return true;
  return j.is_object() && (j.contains("type") || j.contains("value"));
}

LldpNeighbor read_neighbor(const json& body, const std::string& ifname) {
  const std::string at = "interface '" + ifname + "': ";
  LldpNeighbor n;
  n.protocol = text_at(&body, "via", at + "'via'");
  if (const json* ch = single(body, "chassis")) {
    const json* chassis = ch;
    if (!ch->is_object()) throw Error(at + "'chassis' is " + ch->dump().substr(0, 40) + ", not an object");
    // json: {"leaf1": {"id": ...}} with a system name, {"id": ...} without; json0: {"id": [...],
    // "name": [{"value": "leaf1"}]}.
    const bool named = ch->size() == 1 && ch->begin().value().is_object() &&
                       !(ch->begin().key() == "id" && is_id(ch->begin().value()));
    if (named) {
      n.chassis_name = printable(ch->begin().key());
      if (n.chassis_name.size() > kMaxText) throw Error(at + "chassis name longer than 255 bytes");
      chassis = &ch->begin().value();
    } else {
      n.chassis_name = text_at(ch, "name", at + "chassis 'name'");
    }
    read_id(single(*chassis, "id"), n.chassis_id, n.chassis_id_type, at + "chassis 'id'");
    if (chassis->contains("mgmt-ip"))
      for (const json* m : members((*chassis)["mgmt-ip"]))
        if (auto a = text(m, at + "chassis 'mgmt-ip'"); !a.empty()) n.mgmt_addresses.push_back(a);
  }
  const json* port = single(body, "port");
  if (port && !port->is_object()) throw Error(at + "'port' is " + port->dump().substr(0, 40) + ", not an object");
  if (port) {
    read_id(single(*port, "id"), n.port_id, n.port_id_type, at + "port 'id'");
    n.port_descr = text_at(port, "descr", at + "port 'descr'");
    n.mfs_bytes = number(text_at(port, "mfs", at + "port 'mfs'"), 65535, at + "port 'mfs'", "a frame size");
  }
  // Interface level in lldpd 0.9 and 1.0; inside the port in some older writers.
  const json* vlans = body.contains("vlan")                   ? &body["vlan"]
                      : port && port->contains("vlan") ? &(*port)["vlan"]
                                                       : nullptr;
  if (vlans) {
    for (const json* v : members(*vlans)) {
      if (!v->is_object()) continue;
      auto id = number(text_at(v, "vlan-id", at + "'vlan-id'"), 4095, at + "'vlan-id'", "a VLAN id");
      if (!id) continue;
      n.vlan_ids.push_back(*id);
      if (v->contains("pvid") && truthy((*v)["pvid"])) n.pvid = *id;
    }
  }
  return n;
}

std::string type_of(const json& j) { return j.type_name(); }

}  // namespace

std::vector<LldpEntry> parse_lldpcli_json(std::string_view text_in) {
  if (core::trim(text_in).empty()) throw Error("empty output, not lldpcli JSON");
  json j = json::parse(text_in, nullptr, false);
  if (j.is_discarded()) throw Error("not JSON (lldpcli -f json prints a JSON object)");
  if (!j.is_object() || !j.contains("lldp"))
    throw Error("not lldpcli JSON: expected an object with an 'lldp' member, got " + type_of(j));
  std::vector<LldpEntry> out;
  try {
    for (const json* l : members(j["lldp"])) {
      if (!l->is_object()) throw Error("'lldp' holds " + type_of(*l) + ", not an object");
      if (!l->contains("interface")) continue;  // no neighbours: {"lldp": {}} or {"lldp": [{}]}
      for (const json* iface : members((*l)["interface"])) {
        if (!iface->is_object()) throw Error("an 'interface' member is " + type_of(*iface) + ", not an object");
        std::string name;
        const json* body = nullptr;
        if (iface->contains("name") && (*iface)["name"].is_string()) {  // json0
          name = (*iface)["name"].get<std::string>();
          body = iface;
        } else if (iface->size() == 1 && iface->begin().value().is_object()) {  // json
          name = iface->begin().key();
          body = &iface->begin().value();
        } else {
          throw Error("an 'interface' member has neither a 'name' nor one interface key");
        }
        if (name.empty() || name.size() > 15 || !is_valid_utf8(name) || name.find('/') != std::string::npos)
          throw Error("interface name " + quote(name) + " is not a network interface name");
        if (out.size() >= kMaxNeighbors) throw Error("more than 4096 neighbours");
        out.push_back({name, read_neighbor(*body, name)});
      }
    }
  } catch (const json::exception& e) {
    throw Error(std::string("lldpcli JSON element not understood: ") + e.what());
  }
  return out;
}

std::vector<std::string> lldpcli_argv(const char* socket_env, std::string& error) {
  std::vector<std::string> argv = {"lldpcli"};
  if (socket_env && *socket_env) {
    const std::string s = socket_env;
    if (s.front() != '/' || s.size() > kMaxSocketPath || !is_valid_utf8(s)) {
      error = std::string(kLldpSocketEnv) + "=" + quote(s) + " is not an absolute socket path of at most 107 bytes";
      return {};
    }
    argv.insert(argv.end(), {"-u", s});
  }
  argv.insert(argv.end(), {"-f", "json", "show", "neighbors", "details"});
  return argv;
}

LldpState apply_lldpcli_result(const ToolResult& r, std::vector<Netdev>& netdevs, std::vector<std::string>& notes) {
  LldpState st;
  if (r.status == ToolResult::Status::NotFound) {
    st.note = "lldpcli not found (lldpd not installed): LLDP neighbours unknown";
    return st;
  }
  if (r.status != ToolResult::Status::Ran) {
    // Debian and Ubuntu install lldpcli setuid _lldpd, executable by root and group adm only.
    st.note = r.error + (r.error.find("not executable") != std::string::npos
                             ? " (Debian and Ubuntu let root and group adm run it)"
                             : "");
    notes.push_back("lldp: " + st.note);
    return st;
  }
  if (r.exit_code != 0) {
    std::string err{core::trim(r.err.substr(0, r.err.find('\n')))};
    if (!is_valid_utf8(err)) err = "exit " + std::to_string(r.exit_code);
    // lldpcli logs "<time> [WARN/control] unable to connect to socket PATH: <strerror>".
    if (auto p = err.find("unable to connect"); p != std::string::npos) err = err.substr(p);
    if (err.find("Permission denied") != std::string::npos) {
      st.note = "lldpd's socket is not readable as this user (root or the _lldpd group) (lldpcli: " + err + ")";
      notes.push_back("lldp: " + st.note);
    } else if (err.find("unable to connect") != std::string::npos) {
      st.note = "lldpd not running (lldpcli: " + err + "): LLDP neighbours unknown";
    } else {
      st.note = "lldpcli failed (lldpcli: " + (err.empty() ? "exit " + std::to_string(r.exit_code) : err) + ")";
      notes.push_back("lldp: " + st.note);
    }
    return st;
  }
  std::vector<LldpEntry> entries;
  try {
    if (r.out.size() >= kMaxOutputBytes) throw Error("output of 8 MiB or more, not read");
    entries = parse_lldpcli_json(r.out);
  } catch (const Error& e) {
    st.note = std::string("lldpcli -f json show neighbors details: ") + e.what();
    notes.push_back("lldp: " + st.note);
    return st;
  }
  st.source = "lldpcli";
  std::string elsewhere;
  for (auto& e : entries) {
    Netdev* nd = nullptr;
    for (auto& n : netdevs)
      if (n.name == e.netdev) nd = &n;
    if (nd) {
      nd->lldp_neighbors.push_back(std::move(e.neighbor));
    } else if (elsewhere.find(" " + e.netdev + ",") == std::string::npos) {
      elsewhere += " " + e.netdev + ",";
    }
  }
  if (!elsewhere.empty()) {
    elsewhere.pop_back();
    notes.push_back("lldp: neighbours on interfaces not in sys/class/net left out:" + elsewhere);
  }
  return st;
}

LldpState collect_lldp(bool live, std::vector<Netdev>& netdevs, std::vector<std::string>& notes, int timeout_ms,
                       const ToolRunner& run) {
  LldpState st;
  if (!live) {
    st.note = "LLDP neighbours are read on a live node only (lldpcli)";
    return st;
  }
  std::string error;
  auto argv = lldpcli_argv(std::getenv(kLldpSocketEnv), error);
  if (argv.empty()) {
    st.note = error;
    notes.push_back("lldp: " + error);
    return st;
  }
  return apply_lldpcli_result(run ? run(argv, timeout_ms, kMaxOutputBytes) : run_tool(argv, timeout_ms, kMaxOutputBytes),
                              netdevs, notes);
}

}  // namespace fabscope::probe
