// link.*: port state, physical state, rate against the node's best port, error counters.
#include <map>

#include "checks/families.hpp"

namespace fabscope::checks {

namespace {

// ACTIVE_DEFER (code 5) is an ACTIVE port holding back a state change; it carries traffic.
bool is_active(const RdmaPort& p) { return p.state == "ACTIVE" || p.state == "ACTIVE_DEFER"; }

std::string state_evidence(const RdmaPort& p) {
  std::string e = "state=" + (p.state.empty() ? std::string("unknown") : p.state);
  e += " phys_state=" + (p.phys_state.empty() ? std::string("unknown") : p.phys_state);
  if (!p.rate.empty()) e += " rate=\"" + p.rate + "\"";
  return e;
}

void port_state(const RdmaDevice& d, const RdmaPort& p, std::vector<Finding>& out) {
  const std::string name = port_name(d, p);
  if (!p.state.empty() && !is_active(p)) {
    std::string why;
    if (p.state == "INIT" && p.link_layer == "InfiniBand")
      why = ": the link is up but no subnet manager has configured it (INIT)";
    else if (p.state == "ARMED")
      why = ": configured by the subnet manager but not yet activated (ARMED)";
    else if (p.phys_state == "Disabled")
      why = ": the port is administratively disabled";
    else if (p.phys_state == "Polling")
      why = ": no link partner (cable, transceiver or switch port)";
    std::string remedy =
        p.link_layer == "Ethernet"
            ? "bring the netdev up (ip link set " + (p.netdev.empty() ? std::string("DEV") : p.netdev) +
                  " up), then check cable, transceiver and switch port; ibv_devinfo -d " + d.name
            : "check cable, transceiver and switch port (ibstat " + d.name + " " + std::to_string(p.port) +
                  "); a port stuck in INIT needs a running subnet manager (opensm or the fabric's UFM)";
    out.push_back(make_finding("link.port_down", Severity::Fail, name,
                               name + " is " + p.state + ", not ACTIVE" + why + "; NCCL cannot use it",
                               state_evidence(p), remedy));
    return;  // a port that is down has no meaningful physical state or rate to judge
  }
  if (!p.phys_state.empty() && p.phys_state != "LinkUp") {
    // ACTIVE with the physical link elsewhere is a link that is retraining (LinkErrorRecovery)
    // or a driver reporting two moments; with the logical state unknown, the link is down.
    const bool active = !p.state.empty();
    out.push_back(make_finding(
        "link.phys_state", active ? Severity::Warn : Severity::Fail, name,
        name + " physical link is " + p.phys_state + ", not LinkUp" +
            (active ? " (while the port reports ACTIVE: the link is retraining or flapping)" : ""),
        state_evidence(p),
        "check cable and transceiver (mlxlink -d " + d.name + " -p " + std::to_string(p.port) +
            " shows the physical layer); watch link_downed and link_error_recovery counters"));
  }
}

struct CounterCheck {
  const char* counter;  // counters/<name>
  const char* id;
  const char* what;
  const char* remedy;
};

// IBA port counters (counters/*), cumulative since the driver loaded or were last reset.
const CounterCheck kCounterChecks[] = {
    {"symbol_error", "link.symbol_errors", "symbol errors (bad bits on the wire)",
     "reseat or replace the cable or transceiver if the count grows (fabscope exporter or "
     "perfquery show it over time); clear with perfquery -x -R to see new errors"},
    {"link_downed", "link.link_downed", "times the link went down",
     "find when it dropped (dmesg, switch logs); replace a cable or transceiver that keeps "
     "dropping; a job running over this port lost its connections"},
    {"link_error_recovery", "link.link_error_recovery", "link error recoveries (retrains)",
     "a marginal link: check cable and transceiver (mlxlink -d DEV -p PORT -c for BER), replace if "
     "the count grows"},
    {"port_rcv_errors", "link.port_rcv_errors", "packets received with errors",
     "check the cable and the sending switch port; growing receive errors mean corrupted packets "
     "and retransmissions"},
};

void counters(const RdmaDevice& d, const RdmaPort& p, std::vector<Finding>& out) {
  const std::string name = port_name(d, p);
  for (const auto& c : kCounterChecks) {
    auto it = p.counters.find(c.counter);
    if (it == p.counters.end() || it->second == 0) continue;
    std::string remedy = c.remedy;
    if (auto pos = remedy.find("-d DEV -p PORT"); pos != std::string::npos)
      remedy.replace(pos, 14, "-d " + d.name + " -p " + std::to_string(p.port));
    out.push_back(make_finding(c.id, Severity::Warn, name,
                               name + ": " + std::to_string(it->second) + " " + c.what +
                                   " since the counters were last cleared",
                               std::string("counters/") + c.counter + "=" + std::to_string(it->second),
                               remedy));
  }
}

}  // namespace

std::vector<Finding> check_link(const NodeInfo& node) {
  std::vector<Finding> out;
  // Best ACTIVE rate per link layer: one slow port slows every collective that uses it, so
  // an HCA that trained at a lower speed or width (or an older generation in the mix) shows here.
  std::map<std::string, std::pair<double, std::string>> best;  // link layer -> rate, port
  for (const auto& d : node.rdma_devices)
    for (const auto& p : d.ports) {
      if (!is_active(p) || !p.rate_gbps || p.link_layer.empty()) continue;
      auto& b = best[p.link_layer];
      if (*p.rate_gbps > b.first) b = {*p.rate_gbps, port_name(d, p) + " \"" + p.rate + "\""};
    }
  for (const auto& d : node.rdma_devices)
    for (const auto& p : d.ports) {
      port_state(d, p, out);
      if (is_active(p) && p.rate_gbps && !p.link_layer.empty()) {
        const auto& b = best[p.link_layer];
        if (*p.rate_gbps < b.first) {
          const std::string name = port_name(d, p);
          out.push_back(make_finding(
              "link.rate_degraded", Severity::Warn, name,
              name + " runs at " + format_number(*p.rate_gbps) + " Gb/s, below the fastest " + p.link_layer +
                  " port of this node (" + format_number(b.first) + " Gb/s): collectives over it run at its pace",
              "rate=\"" + p.rate + "\" fastest=" + b.second,
              "check the cable and the switch port for a lane or speed down-shift (ibstat " + d.name + " " +
                  std::to_string(p.port) + ", mlxlink -d " + d.name +
                  "); if the HCA is of an older generation, keep it out of NCCL_IB_HCA"));
        }
      }
      counters(d, p, out);
    }
  return out;
}

}  // namespace fabscope::checks
