// lossless.*: PFC and ECN (DCQCN) on the netdevs that carry RoCE ports. RoCE's transport
// recovers from a lost packet by go-back-N: every drop under load costs a retransmission of a
// whole window, so RoCE fabrics run lossless (PFC on the RoCE priority) with ECN marking so the
// senders slow down before PFC pauses spread.
#include <algorithm>

#include "checks/families.hpp"

namespace fabscope::checks {

namespace {

std::string prio_list(const std::vector<int>& v) {
  if (v.empty()) return "none";
  std::string s;
  for (int p : v) s += (s.empty() ? "" : ",") + std::to_string(p);
  return s;
}

std::string join_ports(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& p : v) s += (s.empty() ? "" : " ") + p;
  return s;
}

// Priorities where DCQCN runs: the notification point (receiver) and the reaction point (sender)
// both on. A node is both for its own flows, so one side off disables it for that direction.
std::optional<std::vector<int>> ecn_priorities(const LosslessState& s) {
  if (!s.ecn_np_priorities && !s.ecn_rp_priorities) return std::nullopt;
  if (!s.ecn_np_priorities) return s.ecn_rp_priorities;
  if (!s.ecn_rp_priorities) return s.ecn_np_priorities;
  std::vector<int> both;
  for (int p : *s.ecn_np_priorities)
    if (std::find(s.ecn_rp_priorities->begin(), s.ecn_rp_priorities->end(), p) != s.ecn_rp_priorities->end())
      both.push_back(p);
  return both;
}

std::string evidence(const LosslessState& s) {
  std::string e = "pfc=" + (s.pfc_priorities ? prio_list(*s.pfc_priorities) : std::string("unknown"));
  if (!s.trust.empty()) e += " trust=" + s.trust;
  e += " ecn roce_np=" + (s.ecn_np_priorities ? prio_list(*s.ecn_np_priorities) : std::string("unknown"));
  e += " roce_rp=" + (s.ecn_rp_priorities ? prio_list(*s.ecn_rp_priorities) : std::string("unknown"));
  return e;
}

void judge(const LosslessState& s, std::vector<Finding>& out) {
  const std::string subject = s.netdev;
  const std::string ports = join_ports(s.rdma_ports);
  const auto ecn = ecn_priorities(s);
  if (!s.pfc_priorities && !ecn) {
    std::string why = s.dcb_note.empty() ? std::string("DCB unknown") : "DCB: " + s.dcb_note;
    why += "; " + (s.ecn_note.empty() ? std::string("ECN unknown") : "ECN: " + s.ecn_note);
    out.push_back(make_finding(
        "lossless.unknown", Severity::Info, subject,
        s.netdev + " carries RoCE (" + ports + ") but exposes neither PFC nor ECN state here, so "
        "whether it is lossless is unknown, not ok",
        why,
        "read it where the NIC exposes it: run fabscope on the host itself (not a fixture), or "
        "dcb pfc show dev " + s.netdev + " / mlnx_qos -i " + s.netdev + "; software RoCE (rxe) has none"));
    return;
  }
  const std::string ev = evidence(s);
  if (s.pfc_priorities && s.pfc_priorities->empty()) {
    out.push_back(make_finding(
        "lossless.no_pfc", Severity::Warn, subject,
        "PFC is off on every priority of " + s.netdev + " (RoCE " + ports + "): under load the switch "
        "drops RoCE packets and each drop costs a go-back-N retransmission",
        ev,
        "enable PFC on the RoCE priority (commonly 3), the same on the switches: dcb pfc set dev " +
            s.netdev + " prio-pfc 3:on, or mlnx_qos -i " + s.netdev + " --pfc 0,0,0,1,0,0,0,0; unless "
            "the fabric is deliberately lossy with a congestion control that tolerates drops"));
  }
  if (!ecn) return;
  if (s.pfc_priorities && !s.pfc_priorities->empty() && !ecn->empty()) {
    bool overlap = std::any_of(ecn->begin(), ecn->end(), [&](int p) {
      return std::find(s.pfc_priorities->begin(), s.pfc_priorities->end(), p) != s.pfc_priorities->end();
    });
    if (!overlap) {
      out.push_back(make_finding(
          "lossless.pfc_ecn_split", Severity::Warn, subject,
          "PFC protects priority " + prio_list(*s.pfc_priorities) + " but ECN (DCQCN) runs on " + prio_list(*ecn) +
              ": RoCE traffic gets either no drops or congestion control, never both",
          ev,
          "put PFC and ECN on the same priority, the one NCCL's traffic class maps to: echo 1 > "
          "/sys/class/net/" + s.netdev + "/ecn/roce_np/enable/P and .../roce_rp/enable/P for the PFC priority P"));
      return;
    }
  }
  std::vector<int> off;
  if (s.pfc_priorities) {
    for (int p : *s.pfc_priorities)
      if (std::find(ecn->begin(), ecn->end(), p) == ecn->end()) off.push_back(p);
  }
  const bool all_off = ecn->empty();
  if (off.empty() && !all_off) return;
  const std::string which = !off.empty() ? "priority " + prio_list(off) + ", which PFC protects"
                                         : std::string("every priority");
  out.push_back(make_finding(
      "lossless.ecn_off", Severity::Warn, subject,
      "ECN (DCQCN) is off on " + which + " of " + s.netdev +
          ": without congestion notification the senders never slow down, so PFC pauses spread "
          "through the fabric (head-of-line blocking, congestion trees)",
      ev,
      "enable both ends of DCQCN on the RoCE priority P: echo 1 > /sys/class/net/" + s.netdev +
          "/ecn/roce_np/enable/P and echo 1 > /sys/class/net/" + s.netdev + "/ecn/roce_rp/enable/P, "
          "and ECN marking on the switches' lossless queue"));
}

}  // namespace

std::vector<Finding> check_lossless(const NodeInfo& node) {
  std::vector<Finding> out;
  for (const auto& s : node.lossless) judge(s, out);
  return out;
}

}  // namespace fabscope::checks
