// firewall.*: nftables rules (the kernel's ruleset, iptables-nft rules included) that would drop
// RoCE v2 (UDP 4791, also RDMA CM's path on RoCE) or the TCP ports NCCL's bootstrap and socket
// transport use. The ruleset is walked the way the kernel does for one kind of packet, following
// jumps; a match on anything else than protocol and destination port (addresses, interfaces,
// connection state) may or may not hold, so a drop behind one is reported as conditional.
#include <algorithm>

#include "checks/families.hpp"
#include "core/root.hpp"

namespace fabscope::checks {

namespace {

enum class Tri { No, Yes, Maybe };

struct Probe {
  std::uint32_t proto;  // 6 tcp, 17 udp
  PortRange ports;
};

Tri compare(const FirewallMatch& m, const PortRange& want) {
  if (m.opaque) return Tri::Maybe;
  bool covered = false, disjoint = true;
  // covered: every port of want is in one of the values (values are ranges; want is one range
  // and the values are small lists, so checking each endpoint against one range suffices in
  // the common case; a want split over several values counts as partly covered).
  for (const auto& v : m.values) {
    if (v.lo <= want.lo && want.hi <= v.hi) covered = true;
    if (!(v.hi < want.lo || want.hi < v.lo)) disjoint = false;
  }
  const bool eq = m.op != "!=";
  if (covered) return eq ? Tri::Yes : Tri::No;
  if (disjoint) return eq ? Tri::No : Tri::Yes;
  return Tri::Maybe;
}

Tri match(const FirewallMatch& m, const Probe& p) {
  const std::string proto = p.proto == 6 ? "tcp" : "udp";
  if (m.field == "udp dport" || m.field == "tcp dport") {
    if (m.field.compare(0, 3, proto) != 0) return Tri::No;
    return compare(m, p.ports);
  }
  if (m.field == "th dport") return compare(m, p.ports);
  if (m.field == "l4proto") return compare(m, PortRange{p.proto, p.proto});
  if (m.field == "udp other" || m.field == "tcp other") return m.field.compare(0, 3, proto) == 0 ? Tri::Maybe : Tri::No;
  if (m.field.rfind("proto ", 0) == 0) return Tri::No;
  // Traffic between nodes never enters or leaves through the loopback interface.
  for (const char* lo : {"meta iif lo", "meta iifname lo", "meta oif lo", "meta oifname lo"})
    if (m.text == lo) return Tri::No;
  return Tri::Maybe;
}

Tri match(const FirewallRule& r, const Probe& p) {
  Tri out = Tri::Yes;
  for (const auto& m : r.matches) {
    Tri t = match(m, p);
    if (t == Tri::No) return Tri::No;
    if (t == Tri::Maybe) out = Tri::Maybe;
  }
  return out;
}

struct Drop {
  const FirewallChain* chain = nullptr;
  const FirewallRule* rule = nullptr;  // null: the chain's policy
  bool definite = false;
  std::string conditions;  // the matches that may or may not hold
};

enum class Outcome { Accept, Drop, Continue };

struct Walker {
  const Firewall& fw;
  const Probe& probe;
  std::vector<Drop> drops;
  std::vector<std::string> accepted_if;  // conditions of accepts that may have let it through

  std::string join_conditions() const {
    std::string s;
    for (const auto& c : accepted_if) s += (s.empty() ? "" : "; ") + c;
    return s;
  }

  const FirewallChain* find(const FirewallChain& from, const std::string& name) const {
    for (const auto& c : fw.chains)
      if (c.family == from.family && c.table == from.table && c.name == name) return &c;
    return nullptr;
  }

  Outcome walk(const FirewallChain& c, int depth) {
    if (depth > 16) return Outcome::Continue;  // nft itself rejects deeper jump chains
    for (const auto& r : c.rules) {
      Tri m = match(r, probe);
      if (m == Tri::No) continue;
      const bool yes = m == Tri::Yes;
      std::string cond;  // the matches that may or may not hold for this kind of packet
      bool only_ct = true;
      for (const auto& x : r.matches)
        if (match(x, probe) == Tri::Maybe) {
          cond += (cond.empty() ? "" : " ") + x.text;
          only_ct = only_ct && x.text.rfind("ct state", 0) == 0;
        }
      if (r.verdict == "accept") {
        if (yes) return Outcome::Accept;
        // An accept of established connections does not let the first packet of one in.
        if (!only_ct) accepted_if.push_back(cond);
      } else if (r.verdict == "drop" || r.verdict == "reject") {
        if (!accepted_if.empty())
          cond = "not accepted earlier (" + join_conditions() + ")" + (cond.empty() ? "" : " and matching " + cond);
        else if (!cond.empty())
          cond = "matching " + cond;
        drops.push_back({&c, &r, yes && accepted_if.empty(), cond});
        if (yes) return Outcome::Drop;
      } else if (r.verdict == "jump" || r.verdict == "goto") {
        if (const FirewallChain* t = find(c, r.target)) {
          Outcome o = walk(*t, depth + 1);
          if (yes && o != Outcome::Continue) return o;
        }
      } else if (r.verdict == "return") {
        if (yes) return Outcome::Continue;
      }
    }
    return Outcome::Continue;
  }
};

bool relevant_hook(const FirewallChain& c) {
  return c.hook == "input" || c.hook == "output" || c.hook == "prerouting" || c.hook == "ingress";
}

std::string where(const Drop& d) {
  return d.chain->family + " " + d.chain->table + " " + d.chain->name + " (hook " + d.chain->hook + ")";
}

std::string quoted(const Drop& d) {
  if (!d.rule) return "policy drop";
  return "'" + d.rule->text + "' (handle " + std::to_string(d.rule->handle) + ")";
}

void judge(const NodeInfo& node, const Probe& probe, const std::string& id, const std::string& what,
           const std::string& consequence, Severity definite_severity, std::vector<Finding>& out) {
  for (const auto& c : node.firewall.chains) {
    if (!relevant_hook(c)) continue;
    Walker w{node.firewall, probe, {}, {}};
    Outcome o = w.walk(c, 0);
    if (o == Outcome::Continue && c.policy == "drop")
      w.drops.push_back({&c, nullptr, w.accepted_if.empty(),
                         w.accepted_if.empty() ? "" : "not accepted earlier (" + w.join_conditions() + ")"});
    if (w.drops.empty()) continue;
    // The first drop is the one that decides; a conditional one before a definite one is named too.
    const Drop& d = w.drops.back().definite ? w.drops.back() : w.drops.front();
    const bool definite = d.definite;
    std::string ev = where(d) + ": " + quoted(d);
    if (w.drops.size() > 1) ev += "; " + std::to_string(w.drops.size()) + " rules on the path drop it";
    out.push_back(make_finding(
        id, definite ? definite_severity : Severity::Info, c.family + " " + c.table + " " + c.name,
        std::string(definite ? "the firewall drops " : "the firewall drops some ") + what + " " +
            (d.rule ? "with rule " + quoted(d) : std::string("by the chain's policy (no rule accepts it)")) +
            " in " + where(d) + (definite ? "" : ", for packets " + d.conditions) + ": " + consequence,
        ev,
        "accept it before the drop, e.g. nft insert rule " + c.family + " " + c.table + " " + c.name + " " +
            (probe.proto == 17 ? std::string("udp dport 4791 accept")
                               : "tcp dport " + std::to_string(probe.ports.lo) +
                                     (probe.ports.hi != probe.ports.lo ? "-" + std::to_string(probe.ports.hi) : "") +
                                     " ip saddr CLUSTER_SUBNET accept") +
            " (and persist it in /etc/nftables.conf or the firewall manager); fabscope never changes rules"));
  }
}

}  // namespace

std::vector<Finding> check_firewall(const NodeInfo& node) {
  std::vector<Finding> out;
  if (node.firewall.source.empty()) return out;  // unknown: nft absent or not readable
  // Hardware RoCE (mlx5, bnxt_re, irdma) is steered by the NIC and never crosses netfilter;
  // software RoCE (rxe) sends and receives through the kernel's UDP stack, so the rules apply.
  bool soft_roce = false;
  for (const auto& d : node.rdma_devices)
    for (const auto& p : d.ports) soft_roce = soft_roce || (p.link_layer == "Ethernet" && d.pci_address.empty());
  judge(node, Probe{17, {4791, 4791}}, "firewall.roce_v2_blocked", "RoCE v2 (UDP 4791)",
        soft_roce ? "software RoCE (rxe) traffic and its RDMA CM connection setup never arrive"
                  : "hardware RoCE bypasses netfilter, but software RoCE (rxe) and any host-stack path "
                    "would fail with RDMA_CM_EVENT_CONNECT_ERROR or time out",
        soft_roce ? Severity::Warn : Severity::Info, out);
  PortRange eph{32768, 60999};
  if (auto it = node.kernel.sysctls.find("net.ipv4.ip_local_port_range"); it != node.kernel.sysctls.end()) {
    auto w = core::split_ws(it->second);
    if (w.size() == 2) {
      auto lo = core::parse_u64(w[0]), hi = core::parse_u64(w[1]);
      if (lo && hi && *lo <= *hi && *hi <= 65535) eph = {static_cast<std::uint32_t>(*lo), static_cast<std::uint32_t>(*hi)};
    }
  }
  judge(node, Probe{6, eph}, "firewall.nccl_tcp_blocked",
        "TCP to the ephemeral ports " + std::to_string(eph.lo) + "-" + std::to_string(eph.hi) +
            " (NCCL's bootstrap and socket transport listen there)",
        "NCCL hangs at init or fails with 'Connection refused'/'timed out' in bootstrap",
        Severity::Warn, out);
  judge(node, Probe{6, {29500, 29500}}, "firewall.nccl_tcp_blocked", "TCP 29500 (torchrun's default MASTER_PORT)",
        "the rendezvous of torchrun/torch.distributed cannot be reached", Severity::Warn, out);
  return out;
}

}  // namespace fabscope::checks
