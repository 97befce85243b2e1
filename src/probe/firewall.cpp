#include "probe/firewall.hpp"

#include <map>

#include "core/error.hpp"
#include "probe/read_util.hpp"
#include "probe/run_tool.hpp"

namespace fabscope::probe {

namespace {

constexpr std::size_t kMaxRules = 100000;

const std::map<std::string, std::uint32_t>& protocol_numbers() {
  static const std::map<std::string, std::uint32_t> m = {{"icmp", 1},  {"igmp", 2}, {"tcp", 6},   {"udp", 17},
                                                        {"dccp", 33}, {"gre", 47}, {"esp", 50}, {"ah", 51},
                                                        {"ipv6-icmp", 58}, {"icmpv6", 58}, {"sctp", 132},
                                                        {"udplite", 136}};
  return m;
}

std::string value_text(const json& v) {
  if (v.is_number_unsigned() || v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("range") && v["range"].is_array() && v["range"].size() == 2)
    return value_text(v["range"][0]) + "-" + value_text(v["range"][1]);
  if (v.is_object() && v.contains("prefix") && v["prefix"].is_object())
    return value_text(v["prefix"].value("addr", json())) + "/" + value_text(v["prefix"].value("len", json()));
  if (v.is_object() && v.contains("set") && v["set"].is_array()) {
    std::string s;
    for (const auto& e : v["set"]) s += (s.empty() ? "" : ", ") + value_text(e);
    return "{ " + s + " }";
  }
  if (v.is_array()) {  // concatenations, ct state lists
    std::string s;
    for (const auto& e : v) s += (s.empty() ? "" : ", ") + value_text(e);
    return s;
  }
  return v.dump();
}

std::string left_text(const json& l) {
  if (l.is_object() && l.contains("payload") && l["payload"].is_object()) {
    const auto& p = l["payload"];
    if (p.contains("protocol")) return p.value("protocol", "?") + " " + p.value("field", "?");
    return "@" + p.value("base", "?") + "," + value_text(p.value("offset", json())) + "," + value_text(p.value("len", json()));
  }
  if (l.is_object() && l.contains("meta") && l["meta"].is_object()) return "meta " + l["meta"].value("key", "?");
  if (l.is_object() && l.contains("ct") && l["ct"].is_object()) return "ct " + l["ct"].value("key", "?");
  if (l.is_object() && !l.empty()) return l.begin().key();
  return value_text(l);
}

// Adds v (a port or protocol value) to ranges; false when it is not a number or a range of them.
bool add_values(const json& v, bool protocols, std::vector<PortRange>& out) {
  auto one = [&](const json& x, std::uint32_t& n) {
    if (x.is_number_unsigned() || (x.is_number_integer() && x.get<long long>() >= 0)) {
      auto u = x.get<long long>();
      if (u > 65535) return false;
      n = static_cast<std::uint32_t>(u);
      return true;
    }
    if (protocols && x.is_string()) {
      auto it = protocol_numbers().find(x.get<std::string>());
      if (it == protocol_numbers().end()) return false;
      n = it->second;
      return true;
    }
    return false;
  };
  std::uint32_t lo = 0, hi = 0;
  if (one(v, lo)) {
    out.push_back({lo, lo});
    return true;
  }
  if (v.is_object() && v.contains("range") && v["range"].is_array() && v["range"].size() == 2 &&
      one(v["range"][0], lo) && one(v["range"][1], hi) && lo <= hi) {
    out.push_back({lo, hi});
    return true;
  }
  if (v.is_object() && v.contains("set") && v["set"].is_array()) {
    for (const auto& e : v["set"])
      if (!add_values(e, protocols, out)) return false;
    return true;
  }
  return false;
}

FirewallMatch parse_match(const json& m) {
  FirewallMatch fm;
  const json& left = m.value("left", json());
  const json& right = m.value("right", json());
  std::string op = m.value("op", "==");
  fm.text = left_text(left) + (op == "==" || op == "in" ? " " : " " + op + " ") + value_text(right);
  const std::string l = left_text(left);
  bool ports = false, protocols = false;
  if (l == "udp dport" || l == "tcp dport" || l == "th dport") {
    fm.field = l;
    ports = true;
  } else if (l == "meta l4proto" || l == "ip protocol" || l == "ip6 nexthdr") {
    fm.field = "l4proto";
    protocols = true;
  } else if (l.ends_with(" dport") || l.ends_with(" sport") || l.ends_with(" flags")) {
    // sctp/dccp ports, udp/tcp source ports, tcp flags: the protocol is implied by the field.
    auto proto = l.substr(0, l.find(' '));
    fm.field = proto == "udp" || proto == "tcp" ? proto + " other" : "proto " + proto;
  } else {
    fm.field = "other";
  }
  if (op == "in") op = "==";
  fm.op = op;
  if (ports || protocols) {
    std::vector<PortRange> vals;
    bool ok = add_values(right, protocols, vals);
    if (ok && (op == "==" || op == "!=")) {
      fm.values = std::move(vals);
    } else if (ok && vals.size() == 1 && vals[0].lo == vals[0].hi && ports) {
      // tcp dport > 1024 and friends: a range, so "==" with it.
      const std::uint32_t v = vals[0].lo;
      fm.op = "==";
      if (op == "<") fm.values = {{0, v == 0 ? 0 : v - 1}};
      else if (op == "<=") fm.values = {{0, v}};
      else if (op == ">") fm.values = {{v + 1 > 65535 ? 65535 : v + 1, 65535}};
      else if (op == ">=") fm.values = {{v, 65535}};
      else fm.opaque = true;
      if (op == "<" && v == 0) fm.opaque = true;
    } else {
      fm.opaque = true;  // a named set (@name), a map, or an expression not understood
    }
  }
  return fm;
}

FirewallRule parse_rule(const json& r) {
  FirewallRule fr;
  if (r.contains("handle") && r["handle"].is_number_unsigned()) fr.handle = r["handle"].get<std::uint64_t>();
  std::string text;
  const json& exprs = r.value("expr", json::array());
  if (!exprs.is_array()) throw Error("rule " + std::to_string(fr.handle) + ": 'expr' is not a list");
  for (const auto& e : exprs) {
    if (!e.is_object() || e.empty()) continue;
    const std::string key = e.begin().key();
    const json& val = e.begin().value();
    std::string piece;
    if (key == "match" && val.is_object()) {
      fr.matches.push_back(parse_match(val));
      piece = fr.matches.back().text;
    } else if (key == "accept" || key == "drop" || key == "reject" || key == "return" || key == "continue" ||
               key == "queue") {
      fr.verdict = key;
      piece = key;
      if (key == "reject" && val.is_object() && val.contains("expr")) piece += " with " + value_text(val["expr"]);
    } else if ((key == "jump" || key == "goto") && val.is_object()) {
      fr.verdict = key;
      fr.target = val.value("target", "");
      piece = key + " " + fr.target;
    } else {
      piece = key;  // counter, log, limit, ct, ...: no effect on the verdict
    }
    text += (text.empty() ? "" : " ") + piece;
  }
  fr.text = is_valid_utf8(text) ? text : "(rule text not UTF-8)";
  return fr;
}

}  // namespace

Firewall parse_nft_json(std::string_view text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("nftables") || !j["nftables"].is_array())
    throw Error("not nft JSON: expected an object with an 'nftables' list");
  Firewall fw;
  fw.source = "nft";
  std::size_t rules = 0;
  auto find_chain = [&](const std::string& family, const std::string& table, const std::string& name) {
    for (auto& c : fw.chains)
      if (c.family == family && c.table == table && c.name == name) return &c;
    fw.chains.push_back(FirewallChain{});
    auto& c = fw.chains.back();
    c.family = family;
    c.table = table;
    c.name = name;
    return &c;
  };
  for (const auto& item : j["nftables"]) {
    if (!item.is_object()) continue;
    try {
      if (item.contains("chain") && item["chain"].is_object()) {
        const auto& c = item["chain"];
        auto* chain = find_chain(c.value("family", ""), c.value("table", ""), c.value("name", ""));
        chain->hook = c.value("hook", "");
        chain->type = c.value("type", "");
        chain->policy = c.value("policy", "");
        if (c.contains("prio") && c["prio"].is_number_integer()) chain->priority = c["prio"].get<int>();
      } else if (item.contains("rule") && item["rule"].is_object()) {
        if (++rules > kMaxRules) throw Error("more than 100000 rules");
        const auto& r = item["rule"];
        auto* chain = find_chain(r.value("family", ""), r.value("table", ""), r.value("chain", ""));
        chain->rules.push_back(parse_rule(r));
      }
    } catch (const json::exception& e) {
      throw Error(std::string("nft JSON element not understood: ") + e.what());
    }
  }
  return fw;
}

std::vector<std::string> nft_argv() { return {"nft", "-j", "list", "ruleset"}; }

Firewall collect_firewall(bool live, std::vector<std::string>& notes, const ToolRunner& run) {
  Firewall fw;
  if (!live) {
    fw.note = "the ruleset is read on a live node only (nft -j list ruleset)";
    return fw;
  }
  constexpr std::size_t kMaxOutputBytes = 16u << 20;
  ToolResult r = run ? run(nft_argv(), 5000, kMaxOutputBytes) : run_tool(nft_argv(), 5000, kMaxOutputBytes);
  if (r.status == ToolResult::Status::NotFound) {
    fw.note = "nft not found (nftables not installed): firewall unknown";
    return fw;
  }
  if (r.status != ToolResult::Status::Ran) {
    fw.note = "nft -j list ruleset: " + r.error;
    notes.push_back(fw.note);
    return fw;
  }
  if (r.exit_code != 0) {
    std::string err{core::trim(r.err.substr(0, r.err.find('\n')))};
    fw.note = (err.find("Operation not permitted") != std::string::npos ? "not readable as this user"
                                                                        : "nft -j list ruleset failed") +
              std::string(" (nft: ") + (is_valid_utf8(err) ? err : "exit " + std::to_string(r.exit_code)) + ")";
    notes.push_back("firewall: " + fw.note);
    return fw;
  }
  try {
    fw = parse_nft_json(r.out);
  } catch (const Error& e) {
    fw = Firewall{};
    fw.note = std::string("nft -j list ruleset: ") + e.what();
    notes.push_back(fw.note);
  }
  return fw;
}

}  // namespace fabscope::probe
