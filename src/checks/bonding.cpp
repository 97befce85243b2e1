// bond.*: Linux bonds (proc/net/bonding). A bond with a slave down keeps working on the others,
// so nothing fails: the storage or bootstrap path just runs at half width, silently.
#include <set>

#include "checks/families.hpp"

namespace fabscope::checks {

namespace {

std::string slaves_text(const Bond& b) {
  std::string s;
  for (const auto& sl : b.slaves) {
    s += (s.empty() ? "" : " ") + sl.name + ":" + (sl.mii_status.empty() ? "?" : sl.mii_status);
    if (sl.speed_mbps) s += "/" + std::to_string(*sl.speed_mbps) + "Mb";
    if (sl.link_failure_count) s += "/failures=" + std::to_string(*sl.link_failure_count);
  }
  return "mode=\"" + b.mode + "\" mii=" + b.mii_status + (b.active_slave.empty() ? "" : " active=" + b.active_slave) +
         " slaves: " + (s.empty() ? "none" : s);
}

void judge(const Bond& b, std::vector<Finding>& out) {
  std::vector<std::string> down;
  for (const auto& s : b.slaves)
    if (s.mii_status != "up") down.push_back(s.name);
  if (b.mii_status == "down" || (!b.slaves.empty() && down.size() == b.slaves.size()) || b.slaves.empty()) {
    out.push_back(make_finding(
        "bond.down", Severity::Fail, b.name,
        b.name + " is down" + std::string(b.slaves.empty() ? ": it has no slaves" : ": no slave is up") +
            ", so everything routed over it (bootstrap, storage, sockets) is cut off",
        slaves_text(b),
        "bring the slaves' links up (cables, switch ports: ip link show; ethtool IF), or enslave "
        "interfaces: ip link set IF master " + b.name));
    return;
  }
  if (!down.empty()) {
    std::string names;
    for (const auto& n : down) names += (names.empty() ? "" : ", ") + n;
    out.push_back(make_finding(
        "bond.slave_down", Severity::Warn, b.name,
        b.name + " runs on " + std::to_string(b.slaves.size() - down.size()) + " of " +
            std::to_string(b.slaves.size()) + " slaves (" + names + " down): its bandwidth is reduced "
            "and one more failure takes it down",
        slaves_text(b),
        "find why " + names + " lost its link (ip -s link show; ethtool; the switch port and cable) and "
        "bring it back: ip link set DEV up"));
  }
  // Slaves of different speeds: balance modes hash flows onto the slow link as often as onto the
  // fast one, and active-backup changes the bond's speed on failover.
  std::set<std::int64_t> speeds;
  for (const auto& s : b.slaves)
    if (s.mii_status == "up" && s.speed_mbps) speeds.insert(*s.speed_mbps);
  if (speeds.size() > 1) {
    out.push_back(make_finding(
        "bond.speed_mismatch", Severity::Warn, b.name,
        b.name + "'s slaves run at different speeds (" + std::to_string(*speeds.begin()) + " and " +
            std::to_string(*speeds.rbegin()) + " Mb/s): flows hashed to the slow slave, or a failover to it, "
            "get the slow speed; NCCL's bootstrap and socket traffic over " + b.name + " sees either",
        slaves_text(b),
        "use slaves of one speed (check the negotiated speed: ethtool DEV; a slave that trained at a "
        "lower speed has a cable or transceiver problem)"));
  }
}

}  // namespace

std::vector<Finding> check_bonds(const NodeInfo& node) {
  std::vector<Finding> out;
  for (const auto& b : node.bonds) judge(b, out);
  return out;
}

std::vector<Finding> check_bond_rates(const NodeInfo& before, const NodeInfo& after, double seconds) {
  std::vector<Finding> out;
  for (const auto& b : after.bonds) {
    const Bond* old = nullptr;
    for (const auto& o : before.bonds)
      if (o.name == b.name) old = &o;
    if (!old) continue;
    for (const auto& s : b.slaves)
      for (const auto& os : old->slaves) {
        if (os.name != s.name || !os.link_failure_count || !s.link_failure_count) continue;
        if (*s.link_failure_count <= *os.link_failure_count) continue;
        const auto grew = *s.link_failure_count - *os.link_failure_count;
        out.push_back(make_finding(
            "bond.link_failures", Severity::Warn, b.name + ":" + s.name,
            s.name + " of " + b.name + " lost its link " + std::to_string(grew) + " time(s) in " +
                format_number(seconds) + " s: a flapping link (each failure moves traffic and may drop packets)",
            "Link Failure Count " + std::to_string(*os.link_failure_count) + " -> " +
                std::to_string(*s.link_failure_count) + " over " + format_number(seconds) + " s",
            "check the cable, transceiver and switch port of " + s.name +
                " (ethtool -S " + s.name + ", the switch's interface counters); replace what flaps"));
      }
  }
  return out;
}

}  // namespace fabscope::checks
