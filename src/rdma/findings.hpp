#pragma once
// Every failure `fabscope rdma` explains, as a Finding with evidence and remedy. Ids are
// documented in docs/rdma.md under "Findings" (anchor = id with '.' replaced by '-').
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/finding.hpp"
#include "core/finding_registry.hpp"
#include "rdma/types.hpp"

namespace fabscope::rdma {

// Every id the functions below report (family "rdma"), in the order docs/rdma.md lists them.
const std::vector<FindingInfo>& finding_infos();

// Where in a session something happened: "client", "server".
struct Where {
  std::string side;
  std::string step;  // "rdma_resolve_route", "write bw 65536 B"
};

// A work completion with a status other than IBV_WC_SUCCESS. Cause and remedy come from the
// log analyzer's ibv_wc_status catalog (nccllog/signatures), the one table of them.
Finding completion_error(const Where& w, int wc_status, int opcode, unsigned vendor_err,
                         const Endpoint& local);
// An RDMA CM event other than the one expected (ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR,
// UNREACHABLE, REJECTED, ...). event is librdmacm's enum value; status its status field.
Finding cm_event(const Where& w, int event, const std::string& event_name, int status,
                 const std::string& peer_address, const Endpoint& local);
// A librdmacm or libibverbs call that failed with errno (rdma_bind_addr, ibv_modify_qp, ...).
Finding verbs_call(const Where& w, const std::string& call, int err, const Endpoint& local);
// The TCP control connection: refused (no server), timed out (firewall), no route.
Finding tcp_connect(const std::string& host, int port, int err);
Finding tcp_resolve(const std::string& host, const std::string& gai_error);
// The peer closed or broke the control connection, or sent something unreadable.
Finding control_lost(const Where& w, const std::string& detail);
// The watchdog: no progress for timeout_s.
Finding timeout(const Where& w, double timeout_s, const std::string& progress);
// Registering the buffers needs more locked memory than RLIMIT_MEMLOCK allows.
Finding memlock(const Where& w, std::uint64_t need_bytes, std::uint64_t limit_bytes, int err);
// The GID index given with -x cannot carry RoCE v2 traffic to an IPv4 peer.
Finding gid_index(const Endpoint& local, int index, const std::string& gid, const std::string& type,
                  const std::string& better);
// The chosen port is not ACTIVE.
Finding port_not_active(const Endpoint& local, const std::string& state, const std::string& phys_state);
// No usable RDMA device/port: none at all, the one named by -d is missing, or libraries absent.
Finding no_device(const std::string& why, const std::string& remedy);
// The two ends report different active MTUs.
Finding mtu_mismatch(const Endpoint& local, const Endpoint& remote);
// Bandwidth below 80% of the port's rate.
Finding low_bandwidth(const Result& r, double best_gbps);
// What the peer reported, as our finding about it: rdma.peer_failed (the peer ended the
// session: fail) or rdma.peer_note (a warning it sent in its welcome: at most warn). The peer's
// text is quoted as "the server said: ..." (bounded), never taken as a finding of ours: its id,
// docs link and remedy are not used.
Finding from_peer(const Finding& f, const std::string& peer_side);
Finding peer_note(const Finding& f, const std::string& peer_side);
// The server refused this client's hello (its token differs or is missing).
Finding auth_refused(const Where& w);

}  // namespace fabscope::rdma

namespace fabscope::rdma {

// Thrown inside a session when a step fails; the session turns it into the Result's finding.
class Failure : public Error {
 public:
  explicit Failure(Finding f) : Error(f.message), finding(std::move(f)) {}
  Finding finding;
};

// A failure the peer reported over the control connection (not echoed back to it).
class PeerFailure : public Failure {
 public:
  explicit PeerFailure(Finding f) : Failure(std::move(f)) {}
};

}  // namespace fabscope::rdma
