#include "rdma/findings.hpp"

#include <cerrno>
#include <cstring>

#include "core/table.hpp"
#include "core/wc_status.hpp"
#include "nccllog/signatures.hpp"

namespace fabscope::rdma {

namespace {

constexpr const char* kDocs = "docs/rdma.md";

std::string subject_of(const Endpoint& e) {
  if (e.device.empty()) return e.host.empty() ? "node" : e.host;
  return e.device + ":" + std::to_string(e.port);
}

std::string errno_text(int err) {
  return std::string(strerrorname_np(err) ? strerrorname_np(err) : "E?") + " (" + std::strerror(err) + ")";
}

std::string at(const Where& w) { return w.side + ", step " + w.step; }

}  // namespace

const std::vector<FindingInfo>& finding_infos() {
  static const std::vector<FindingInfo> r = finding_table(kDocs, {
      {"rdma.completion_error", "rdma", Severity::Fail, "a work request completed with an error status"},
      {"rdma.cm_addr_error", "rdma", Severity::Fail, "RDMA CM: no RDMA device owns the route to the peer"},
      {"rdma.cm_route_error", "rdma", Severity::Fail, "RDMA CM: no path to the peer"},
      {"rdma.cm_unreachable", "rdma", Severity::Fail, "RDMA CM: the peer did not answer the connection in time"},
      {"rdma.cm_rejected", "rdma", Severity::Fail, "RDMA CM: nothing listens at the peer, or it rejected"},
      {"rdma.cm_connect_error", "rdma", Severity::Fail, "RDMA CM: the queue pairs could not be connected"},
      {"rdma.cm_event", "rdma", Severity::Fail, "RDMA CM: another unexpected event during setup"},
      {"rdma.verbs_call", "rdma", Severity::Fail, "a libibverbs or librdmacm call failed"},
      {"rdma.no_server", "rdma", Severity::Fail, "the control connection was refused: no server"},
      {"rdma.tcp_timeout", "rdma", Severity::Fail, "the control connection timed out"},
      {"rdma.tcp_unreachable", "rdma", Severity::Fail, "the host does not resolve or has no route"},
      {"rdma.control_lost", "rdma", Severity::Fail, "the control connection closed or carried no fabscope peer"},
      {"rdma.auth_refused", "rdma", Severity::Fail, "the server refused this client's token"},
      {"rdma.peer_failed", "rdma", Severity::Fail, "the peer ended the session with an error"},
      {"rdma.peer_note", "rdma", Severity::Warn, "a warning the server sent in its welcome"},
      {"rdma.timeout", "rdma", Severity::Fail, "nothing moved for --timeout seconds"},
      {"rdma.memlock", "rdma", Severity::Fail, "the buffers need more locked memory than allowed"},
      {"rdma.gid_index", "rdma", Severity::Fail, "the GID index cannot carry RoCE v2 traffic to the peer"},
      {"rdma.port_down", "rdma", Severity::Fail, "the chosen port is not ACTIVE"},
      {"rdma.no_device", "rdma", Severity::Fail, "no usable RDMA device"},
      {"rdma.mtu_mismatch", "rdma", Severity::Warn, "the two ends' active MTUs differ"},
      {"rdma.low_bandwidth", "rdma", Severity::Warn, "bandwidth below 80% of the port's rate"},
  });
  return r;
}

Finding completion_error(const Where& w, int wc_status, int opcode, unsigned vendor_err,
                         const Endpoint& local) {
  const auto* sig = nccllog::completion_signature(wc_status);
  std::string name = core::wc_status_name(wc_status);
  std::string title = sig ? sig->title : "completion error";
  std::string cause = sig ? sig->cause : "";
  std::string remedy = sig ? sig->remedy : "Check both ports and the peer's output.";
  // The catalog speaks NCCL's language for remedies; the GID index here is -x.
  return make_finding(
      "rdma.completion_error", Severity::Fail, subject_of(local),
      "work completion " + name + " (" + std::to_string(wc_status) + ") on the " + at(w) + ": " + title,
      "status=" + std::to_string(wc_status) + " " + name + " opcode=" + std::to_string(opcode) +
          " vendor_err=0x" +
          [&] {
            char b[16];
            std::snprintf(b, sizeof b, "%x", vendor_err);
            return std::string(b);
          }() +
          (cause.empty() ? "" : "; usual cause: " + cause),
      remedy + " With fabscope rdma, -x selects the GID index and -d the device.", kDocs);
}

Finding cm_event(const Where& w, int /*event*/, const std::string& name, int status,
                 const std::string& peer, const Endpoint& local) {
  std::string ev = "event=" + name + " status=" + std::to_string(status) +
                   (status < 0 ? " (" + std::string(std::strerror(-status)) + ")" : "") + " peer=" + peer +
                   " local=" + local.address;
  std::string msg = "RDMA CM " + name + " on the " + at(w);
  if (name == "RDMA_CM_EVENT_ADDR_ERROR")
    return make_finding("rdma.cm_addr_error", Severity::Fail, subject_of(local),
                        msg + ": no RDMA device owns a route to the peer's address", ev,
                        "The peer address must be reachable through an RDMA-capable netdev (RoCE) or an "
                        "IPoIB interface: check `ip route get " +
                            peer +
                            "`, that the route's netdev has an RDMA "
                            "device (`rdma link`), or use --oob tcp on InfiniBand without IPoIB.",
                        kDocs);
  if (name == "RDMA_CM_EVENT_ROUTE_ERROR")
    return make_finding(
        "rdma.cm_route_error", Severity::Fail, subject_of(local),
        msg + ": no path to the peer (RoCE: neighbour/ARP; InfiniBand: SA path query)", ev,
        "RoCE: check that the two RDMA netdevs can ping each other (`ping -I <netdev> " + peer +
            "`) and share a VLAN; InfiniBand: check the subnet manager (`sminfo`) and that both "
            "ports are ACTIVE.",
        kDocs);
  if (name == "RDMA_CM_EVENT_REJECTED") {
    // status 28 is IB_CM_REJ_INVALID_SERVICE_ID: nothing listens on that RDMA CM port.
    bool no_listener = status == 28 || status == 8;
    return make_finding(
        "rdma.cm_rejected", Severity::Fail, subject_of(local),
        msg + (no_listener ? ": nothing listens on this RDMA CM port at the peer"
                           : ": the peer rejected the connection"),
        ev,
        "Start `fabscope rdma --server` on the peer with the same --port; check that both sides "
        "run the same fabscope version (the server's output says why it rejected).",
        kDocs);
  }
  if (name == "RDMA_CM_EVENT_UNREACHABLE")
    return make_finding(
        "rdma.cm_unreachable", Severity::Fail, subject_of(local),
        msg + ": the peer's RDMA CM did not answer (REQ or REP timed out)", ev,
        "RoCE: UDP port 4791 must pass between the two netdevs (firewall, ACLs), and the GID/IP "
        "pair must route across the fabric (wrong netdev or VLAN); InfiniBand: the peer port "
        "must be ACTIVE and reachable in the same partition (P_Key).",
        kDocs);
  if (name == "RDMA_CM_EVENT_CONNECT_ERROR")
    return make_finding(
        "rdma.cm_connect_error", Severity::Fail, subject_of(local),
        msg + ": the queue pairs could not be connected", ev,
        "Usually a QP attribute the path rejects: a GID without a route, an MTU above the "
        "path's, or a port that went down; check both ports (`fabscope check`) and retry with "
        "--oob tcp to see which ibv_modify_qp step fails.",
        kDocs);
  return make_finding("rdma.cm_event", Severity::Fail, subject_of(local), msg + ": unexpected event", ev,
                      "Check both ports (`fabscope check`) and the peer's output.", kDocs);
}

Finding verbs_call(const Where& w, const std::string& call, int err, const Endpoint& local) {
  std::string ev = call + " returned " + errno_text(err);
  std::string remedy = "Check the port (`fabscope check`, `ibv_devinfo -v`) and the peer's output.";
  if (call.rfind("ibv_modify_qp", 0) == 0) {
    if (err == EINVAL)
      remedy = "A QP attribute the device rejects: the GID index (-x) must name a populated RoCE v2 "
               "entry, the MTU must not exceed the port's; see `fabscope probe` for the GID table.";
    else if (err == ENETUNREACH || err == EHOSTUNREACH)
      remedy = "No route from the selected GID's address to the peer's: pick the RoCE v2 GID of the "
               "netdev that routes to the peer (-x), or fix the route (`ip route get <peer>`).";
    else if (err == ETIMEDOUT || err == ENODATA)
      remedy = "The peer's MAC could not be resolved for the selected GID (ARP/neighbour): check that "
               "the two RDMA netdevs can ping each other, and the GID index (-x).";
  } else if (call.rfind("ibv_open_device", 0) == 0 || call.rfind("rdma_create_event_channel", 0) == 0) {
    remedy = "Load ib_uverbs and rdma_ucm (`modprobe rdma_ucm`) and make /dev/infiniband readable "
             "(in a container: pass /dev/infiniband).";
  } else if (call.rfind("rdma_bind_addr", 0) == 0) {
    remedy = err == EADDRINUSE ? "Another process holds this RDMA CM port: pick another --port."
                               : "The address must belong to an RDMA netdev: check -d and `rdma link`.";
  }
  return make_finding("rdma.verbs_call", Severity::Fail, subject_of(local), call + " failed on the " + at(w),
                      ev, remedy, kDocs);
}

Finding tcp_connect(const std::string& host, int port, int err) {
  std::string hp = host + ":" + std::to_string(port);
  std::string ev = "connect(" + hp + ") " + errno_text(err);
  if (err == ECONNREFUSED)
    return make_finding("rdma.no_server", Severity::Fail, hp,
                        "no fabscope rdma server listens on " + hp + " (connection refused)", ev,
                        "Start `fabscope rdma --server --port " + std::to_string(port) + "` on " + host +
                            " first, or give the port it listens on with --port.",
                        kDocs);
  if (err == ETIMEDOUT || err == EAGAIN || err == EINPROGRESS)
    return make_finding("rdma.tcp_timeout", Severity::Fail, hp,
                        "the control connection to " + hp + " timed out", ev,
                        "A firewall drops TCP port " + std::to_string(port) +
                            " (open it on the server, e.g. `nft add rule inet filter input tcp dport " +
                            std::to_string(port) + " accept`), or the host is down.",
                        kDocs);
  return make_finding("rdma.tcp_unreachable", Severity::Fail, hp, "cannot reach " + hp, ev,
                      "Check the address and the route to it (`ip route get " + host +
                          "`); for RoCE use an "
                          "address on the RDMA network.",
                      kDocs);
}

Finding tcp_resolve(const std::string& host, const std::string& gai_error) {
  return make_finding("rdma.tcp_unreachable", Severity::Fail, host, "cannot resolve host '" + host + "'",
                      "getaddrinfo: " + gai_error, "Give an IPv4 address or a name the resolver knows.",
                      kDocs);
}

Finding control_lost(const Where& w, const std::string& detail) {
  return make_finding("rdma.control_lost", Severity::Fail, w.side,
                      "the control connection failed on the " + at(w), detail,
                      "The peer process ended or its host closed the connection: read the peer's output "
                      "(it reports its own failure).",
                      kDocs);
}

Finding timeout(const Where& w, double timeout_s, const std::string& progress) {
  return make_finding(
      "rdma.timeout", Severity::Fail, w.side,
      "no progress for " + core::format_double(timeout_s, 1) + " s on the " + at(w) + ": aborted", progress,
      "A port went down, the peer stalled or a firewall drops the traffic: check both ports "
      "(`fabscope check`), the peer's output and UDP 4791 (RoCE); raise --timeout only for "
      "very long iterations.",
      kDocs);
}

Finding memlock(const Where& w, std::uint64_t need, std::uint64_t limit, int err) {
  std::string lim = limit == UINT64_MAX ? "unlimited" : core::format_bytes(static_cast<double>(limit));
  return make_finding(
      "rdma.memlock", Severity::Fail, w.side,
      "cannot lock " + core::format_bytes(static_cast<double>(need)) + " of buffers: RLIMIT_MEMLOCK is " +
          lim,
      "need=" + std::to_string(need) +
          " B memlock_soft=" + (limit == UINT64_MAX ? std::string("unlimited") : std::to_string(limit)) +
          (err ? " error=" + errno_text(err) : std::string()),
      "Raise the locked-memory limit: `ulimit -l unlimited` in the shell, LimitMEMLOCK=infinity "
      "for systemd units, `* - memlock unlimited` in /etc/security/limits.conf, --ulimit "
      "memlock=-1 for docker; or use smaller sizes/fewer QPs.",
      kDocs);
}

Finding gid_index(const Endpoint& local, int index, const std::string& gid, const std::string& type,
                  const std::string& better) {
  return make_finding("rdma.gid_index", Severity::Fail, subject_of(local),
                      "GID index " + std::to_string(index) + " on " + subject_of(local) +
                          " cannot carry RoCE v2 traffic to an IPv4 peer",
                      "gid[" + std::to_string(index) + "]=" + (gid.empty() ? "(empty)" : gid) +
                          " type=" + (type.empty() ? "?" : type),
                      better.empty()
                          ? "Give -x a RoCE v2 entry holding the netdev's IPv4 address (`fabscope probe`)."
                          : "Use -x " + better + " (RoCE v2, IPv4) or leave -x out to let fabscope choose.",
                      kDocs);
}

Finding port_not_active(const Endpoint& local, const std::string& state, const std::string& phys) {
  return make_finding("rdma.port_down", Severity::Fail, subject_of(local),
                      "port " + subject_of(local) + " is " + (state.empty() ? "not ACTIVE" : state),
                      "state=" + state + " phys_state=" + phys,
                      "Bring the link up (cable, switch port, `ip link set " +
                          (local.netdev.empty() ? std::string("<netdev>") : local.netdev) +
                          " up` for RoCE; the subnet manager for InfiniBand), or pick another port with -d.",
                      kDocs);
}

Finding no_device(const std::string& why, const std::string& remedy) {
  return make_finding("rdma.no_device", Severity::Fail, "node", why, why, remedy, kDocs);
}

Finding mtu_mismatch(const Endpoint& l, const Endpoint& r) {
  return make_finding("rdma.mtu_mismatch", Severity::Warn, subject_of(l),
                      "active MTU differs: " + std::to_string(*l.active_mtu) + " B here, " +
                          std::to_string(*r.active_mtu) + " B at " + r.host + " (" + subject_of(r) + ")",
                      "local active_mtu=" + std::to_string(*l.active_mtu) +
                          " remote active_mtu=" + std::to_string(*r.active_mtu),
                      "Traffic runs at the smaller MTU. Set the same MTU on both netdevs (RoCE: `ip link set "
                      "<netdev> mtu 9000` gives 4096) or on the subnet manager's partition (InfiniBand).",
                      kDocs);
}

Finding low_bandwidth(const Result& r, double best) {
  double rate = r.local.rate_gbps.value_or(0);
  if (r.remote.rate_gbps && *r.remote.rate_gbps < rate) rate = *r.remote.rate_gbps;
  return make_finding("rdma.low_bandwidth", Severity::Warn, subject_of(r.local),
                      "bandwidth " + core::format_double(best, 2) + " Gb/s is " +
                          core::format_double(r.efficiency.value_or(0) * 100, 0) + "% of the port's rate",
                      "best=" + core::format_double(best, 2) + " Gb/s rate=" + core::format_double(rate, 0) +
                          " Gb/s" + (r.options.bidirectional ? " (bidirectional: 2x rate)" : ""),
                      "Check the PCIe link of both NICs (`fabscope check`, pcie.* findings), NUMA placement, "
                      "congestion counters (PFC/ECN) and whether other traffic shares the link; try -q 4 "
                      "and larger sizes (-a) to see where the rate saturates.",
                      kDocs);
}

namespace {

// The peer's words, bounded: its id and message, at most 300 bytes.
std::string peer_said(const Finding& f, const std::string& side) {
  std::string said = (f.id.empty() ? "" : f.id + ": ") + f.message;
  if (said.size() > 300) said = said.substr(0, 300) + "...";
  return "the " + side + " said: " + said;
}

}  // namespace

Finding from_peer(const Finding& f, const std::string& peer_side) {
  return make_finding("rdma.peer_failed", Severity::Fail, peer_side, "the " + peer_side + " ended the session; " +
                          peer_said(f, peer_side),
                      f.evidence.substr(0, 300),
                      "Read the " + peer_side + "'s own output: it explains its failure there. The text above is "
                      "what the " + peer_side + " sent, not checked here.",
                      kDocs);
}

Finding peer_note(const Finding& f, const std::string& peer_side) {
  return make_finding("rdma.peer_note", f.severity <= Severity::Info ? Severity::Info : Severity::Warn, peer_side,
                      peer_said(f, peer_side), f.evidence.substr(0, 300),
                      "Read the " + peer_side + "'s own output for its remedy (the text above is what it sent).",
                      kDocs);
}

Finding auth_refused(const Where& w) {
  return make_finding("rdma.auth_refused", Severity::Fail, w.side,
                      "the server refused this client on the " + at(w) + ": its token differs or is missing", "",
                      "Set FABSCOPE_RDMA_TOKEN to the same secret on both sides (docs/rdma.md, Authentication).",
                      kDocs);
}

}  // namespace fabscope::rdma
