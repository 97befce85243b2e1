#include "rdma/render.hpp"

#include <sstream>

#include "checks/render.hpp"
#include "core/strings.hpp"
#include "core/table.hpp"

namespace fabscope::rdma {

namespace {

std::string endpoint_text(const Endpoint& e) {
  std::string s = e.device.empty() ? "?" : e.device + ":" + std::to_string(e.port);
  if (!e.address.empty()) s += " " + e.address;
  if (e.gid_index) s += " gid " + std::to_string(*e.gid_index);
  if (e.lid && *e.lid) s += " lid " + std::to_string(*e.lid);
  if (e.active_mtu) s += " mtu " + std::to_string(*e.active_mtu);
  if (e.rate_gbps) s += " " + core::format_double(*e.rate_gbps, 0) + " Gb/s" + (e.software ? " (software)" : "");
  if (!e.host.empty()) s += " on " + e.host;
  return s;
}

std::string fixed(double v, int p) { return core::format_double(v, p); }

}  // namespace

std::string listening_line(const std::string& address, int port) {
  return "fabscope rdma: server listening on " + (address.empty() ? std::string("0.0.0.0") : address) + ":" +
         std::to_string(port) + " (TCP control, RDMA CM port " + std::to_string(port) + ")";
}

std::string render_text(const Result& r, std::size_t width) {
  std::ostringstream os;
  const auto& o = r.options;
  os << "fabscope rdma " << r.role << ": " << to_string(o.op) << " " << to_string(o.test)
     << (o.bidirectional ? " bidirectional" : "") << ", " << o.qps << " QP" << (o.qps > 1 ? "s" : "")
     << ", tx depth " << o.tx_depth << ", "
     << (o.duration_s ? fixed(*o.duration_s, 1) + " s per size" : std::to_string(o.iterations) + " iterations")
     << ", connected by " << (o.oob == Oob::Cm ? "RDMA CM" : "TCP exchange") << "\n";
  os << "  local:  " << endpoint_text(r.local) << "\n";
  os << "  remote: " << endpoint_text(r.remote) << "\n";
  if (r.path_mtu) os << "  path MTU: " << *r.path_mtu << " B\n";
  if (!r.choices.empty()) {
    os << "\nChoices:\n";
    core::Table t({"CHOICE", "VALUE", "REASON"});
    for (const auto& c : r.choices) t.add({c.what, c.value, c.reason});
    os << t.render(width);
  }
  if (!r.sizes.empty()) {
    os << "\n";
    if (o.test == Test::Bw) {
      core::Table t({"#bytes", "#iterations", "BW Gb/s", "BW MiB/s", "MsgRate Mpps", "peer bytes", "data"});
      for (std::size_t c = 0; c < 6; ++c) t.align_right(c);
      for (const auto& s : r.sizes)
        t.add({std::to_string(s.bytes), std::to_string(s.iterations), fixed(s.gbps, 2), fixed(s.mib_per_s, 2),
               fixed(s.msg_rate_mpps, 6), s.peer_total_bytes ? std::to_string(*s.peer_total_bytes) : "-",
               s.data_verified ? (*s.data_verified ? "verified" : "WRONG") : "-"});
      os << t.render(width);
      os << "  BW Gb/s = 1e9 bit/s; BW MiB/s = 2^20 B/s (perftest's \"MB/sec\")"
         << (o.bidirectional ? "; both directions summed" : "") << "\n";
    } else {
      core::Table t({"#bytes", "#iterations", "t_min us", "t_median us", "t_p99 us", "t_max us", "t_avg us"});
      for (std::size_t c = 0; c < 7; ++c) t.align_right(c);
      for (const auto& s : r.sizes) {
        LatencyStats l = s.latency.value_or(LatencyStats{});
        t.add({std::to_string(s.bytes), std::to_string(s.iterations), fixed(l.min_us, 2), fixed(l.median_us, 2),
               fixed(l.p99_us, 2), fixed(l.max_us, 2), fixed(l.mean_us, 2)});
      }
      os << t.render(width);
      os << (o.op == Op::Read ? "  READ: one round trip per message (as ib_read_lat)\n"
                              : "  one-way latency: round trip / 2 (as ib_write_lat, ib_send_lat)\n");
    }
  }
  os << "\nVerdict: " << r.verdict << "\n";
  if (r.efficiency) os << "  efficiency: " << fixed(*r.efficiency * 100, 1) << "% of the port's rate\n";
  if (!r.findings.empty()) os << "\n" << checks::render_findings(r.findings, width);
  // The remote end's names and addresses, and whatever a peer said, come from another machine.
  return core::printable_lines(os.str());
}

}  // namespace fabscope::rdma
