// congestion.*: loss and congestion counters judged as rates between two probes of the node
// (`fabscope check --interval SEC`). Counters are cumulative since the driver loaded, so one
// reading cannot tell last year's drops from this minute's; two readings can. Thresholds: loss
// (discards, out-of-sequence packets) above 0.01% of the packets in the interval warns, the
// figure RoCE operators' runbooks use for a healthy lossless fabric.
#include <cstdio>

#include "core/strings.hpp"

#include "checks/families.hpp"

namespace fabscope::checks {

namespace {

constexpr double kLossRatio = 1e-4;  // 0.01%

struct Delta {
  std::optional<std::uint64_t> v;
};

// The growth of a counter between the two probes; nullopt when either value is missing or it
// went backwards (counters cleared, driver reloaded).
std::optional<std::uint64_t> grew(const std::map<std::string, std::uint64_t>& a,
                                  const std::map<std::string, std::uint64_t>& b, std::initializer_list<const char*> names,
                                  std::string* which = nullptr) {
  for (const char* n : names) {
    auto ia = a.find(n), ib = b.find(n);
    if (ia == a.end() || ib == b.end()) continue;
    if (ib->second < ia->second) return std::nullopt;
    if (which) *which = n;
    return ib->second - ia->second;
  }
  return std::nullopt;
}

std::string rate(double count, double seconds) {
  return core::format_double("%.3g/s", seconds > 0 ? count / seconds : 0.0);
}

std::string pct(double part, double whole) {
  return core::format_double("%.4f%%", whole > 0 ? 100.0 * part / whole : 0.0);
}

void port_rates(const RdmaDevice& d, const RdmaPort& a, const RdmaPort& b, double s, std::vector<Finding>& out) {
  const std::string name = port_name(d, b);
  const std::string over = " over " + format_number(s) + " s";
  // Packet totals: the IB counters (also kept by mlx5 on RoCE ports), else rxe's hw counters.
  auto xmit = grew(a.counters, b.counters, {"port_xmit_packets"});
  if (!xmit) xmit = grew(a.hw_counters, b.hw_counters, {"sent_pkts"});
  auto rcv = grew(a.counters, b.counters, {"port_rcv_packets"});
  if (!rcv) rcv = grew(a.hw_counters, b.hw_counters, {"rcvd_pkts"});

  if (auto disc = grew(a.counters, b.counters, {"port_xmit_discards"}); disc && *disc > 0) {
    const bool over_limit = !xmit || *xmit == 0 || static_cast<double>(*disc) > kLossRatio * static_cast<double>(*xmit);
    if (over_limit)
      out.push_back(make_finding(
          "congestion.xmit_discards", Severity::Warn, name,
          name + " discarded " + std::to_string(*disc) + " outbound packets" + over +
              (xmit ? " (" + pct(*disc, *xmit) + " of " + std::to_string(*xmit) + " sent, above 0.01%)" : "") +
              ": the port could not send them (link down, congestion without PFC, or head-of-line timeout)",
          "port_xmit_discards +" + std::to_string(*disc) + " (" + rate(*disc, s) + ")" +
              (xmit ? ", port_xmit_packets +" + std::to_string(*xmit) : ""),
          "look for congestion on this port's switch link (PFC on the RoCE priority, ECN marking) and "
          "for a flapping link (link_downed); perfquery -x / the switch's counters show the other end"));
  }
  if (auto ovr = grew(a.counters, b.counters, {"excessive_buffer_overrun_errors"}); ovr && *ovr > 0)
    out.push_back(make_finding(
        "congestion.buffer_overrun", Severity::Warn, name,
        name + " had " + std::to_string(*ovr) + " excessive buffer overruns" + over +
            ": the receive buffer overflowed, so the link partner ignored flow control or credits",
        "excessive_buffer_overrun_errors +" + std::to_string(*ovr) + " (" + rate(*ovr, s) + ")",
        "check flow control on both ends (PFC/pause on RoCE, VL credits on InfiniBand) and the link partner's "
        "configuration; persistent overruns point at the switch port"));
  if (auto wait = grew(a.counters, b.counters, {"port_xmit_wait"}); wait && *wait > 0)
    out.push_back(make_finding(
        "congestion.xmit_wait", Severity::Info, name,
        name + " waited to send for " + std::to_string(*wait) + " ticks" + over + " (" + rate(*wait, s) +
            "): the link partner was out of credits or paused it, i.e. congestion downstream",
        "port_xmit_wait +" + std::to_string(*wait),
        "normal in bursts under all-to-all traffic; if it grows with throughput below the link rate, look "
        "for the congested switch port (its xmit_wait) and for PFC storms"));
  std::string which;
  if (auto oos = grew(a.hw_counters, b.hw_counters, {"out_of_sequence", "out_of_seq_request"}, &which); oos && *oos > 0) {
    const bool over_limit = !rcv || *rcv == 0 || static_cast<double>(*oos) > kLossRatio * static_cast<double>(*rcv);
    if (over_limit)
      out.push_back(make_finding(
          "congestion.out_of_sequence", Severity::Warn, name,
          name + " received " + std::to_string(*oos) + " packets out of sequence" + over +
              (rcv ? " (" + pct(*oos, *rcv) + " of " + std::to_string(*rcv) + " received, above 0.01%)" : "") +
              ": packets were lost on the way, and each loss makes the sender go back and resend",
          which + " +" + std::to_string(*oos) + " (" + rate(*oos, s) + ")" + (rcv ? ", received +" + std::to_string(*rcv) : ""),
          "the fabric drops RoCE packets: enable PFC on the RoCE priority end to end (lossless.* checks) "
          "and look for discards on the switch ports"));
  }
  if (auto seq = grew(a.hw_counters, b.hw_counters, {"packet_seq_err", "rcvd_seq_err"}, &which); seq && *seq > 0)
    out.push_back(make_finding(
        "congestion.packet_seq_err", Severity::Warn, name,
        name + " got " + std::to_string(*seq) + " sequence-error NAKs" + over +
            ": the receiver saw a gap, i.e. a packet this port sent was lost",
        which + " +" + std::to_string(*seq) + " (" + rate(*seq, s) + ")",
        "find where RoCE packets drop (switch discards, PFC off on the priority NCCL_IB_TC maps to)"));
  if (auto rnr = grew(a.hw_counters, b.hw_counters, {"rnr_nak_retry_err", "retry_rnr_exceeded_err"}, &which);
      rnr && *rnr > 0)
    out.push_back(make_finding(
        "congestion.rnr_retry_exceeded", Severity::Warn, name,
        name + ": " + std::to_string(*rnr) + " queue pairs gave up after receiver-not-ready retries" + over +
            "; the job sees a completion error (IBV_WC_RNR_RETRY_EXC_ERR) and aborts",
        which + " +" + std::to_string(*rnr),
        "the receiving side posted receives too slowly (application or NCCL_IB_* tuning); raise the RNR "
        "retry count and timer, look at the receiver's CPU load"));
  auto np = grew(a.hw_counters, b.hw_counters, {"np_cnp_sent"});
  auto rp = grew(a.hw_counters, b.hw_counters, {"rp_cnp_handled"});
  if ((np && *np > 0) || (rp && *rp > 0))
    out.push_back(make_finding(
        "congestion.cnp", Severity::Info, name,
        name + " exchanged congestion notifications" + over + ": ECN marks arrived and DCQCN is slowing senders, "
               "so the path is congested (expected in bursts, suspicious when steady)",
        "np_cnp_sent +" + std::to_string(np.value_or(0)) + " (" + rate(np.value_or(0), s) + "), rp_cnp_handled +" +
            std::to_string(rp.value_or(0)) + " (" + rate(rp.value_or(0), s) + ")",
        "steady CNPs with low throughput: look for an oversubscribed switch link or an incast pattern; "
        "none at all under load on a congested fabric means ECN marking is off on the switches"));
}

}  // namespace

std::vector<Finding> check_counter_rates(const NodeInfo& before, const NodeInfo& after, double seconds) {
  std::vector<Finding> out;
  for (const auto& d : after.rdma_devices) {
    const RdmaDevice* od = before.find_rdma(d.name);
    if (!od) continue;
    for (const auto& p : d.ports)
      for (const auto& op : od->ports)
        if (op.port == p.port) port_rates(d, op, p, seconds, out);
  }
  return out;
}

}  // namespace fabscope::checks
