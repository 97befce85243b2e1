#include "nccllog/rules.hpp"

#include <algorithm>
#include <cstring>

#include "core/strings.hpp"
#include "nccllog/signatures.hpp"

namespace fabscope::nccllog {

namespace {

using sv = std::string_view;


// Order matters only for the rule id reported: the first entry that matches wins.
const ConsequenceRule kConsequences[] = {
    {"peer_closed", "socket_closed_by_peer", "", "a peer that exited or failed first"},
    {"peer_reset", "socket_connection_reset", "", "a peer that died or dropped its connections first"},
    {"recv_failed", "socket_recv_failed", "", "a peer that closed its socket first"},
    {"socket_progress_error", "", "socketProgress", "a peer that closed its socket first"},
    {"proxy_op_failed", "proxy_op_failed", "", "a peer whose proxy could not serve a request"},
    {"proxy_progress_error", "proxy_progress_error", "", "a peer that failed first"},
    {"remote_error", "nccl_remote_error", "", "a peer process that exited or a network failure"},
    {"remote_error_warn", "", "remote process exited", "a peer process that exited or a network failure"},
    {"aborted_by_rank", "comm_aborted", "", "the failure that made a rank abort the communicator"},
    {"qp_flushed", "ib_wc_flush", "", "an earlier error that moved the QP to the error state"},
    {"peer_not_ready", "ib_wc_rnr_retry_exceeded", "", "a peer that stopped posting receives (it failed first)"},
    {"peer_rejected_access", "ib_wc_remote_access", "", "a peer whose buffers were freed after its own failure"},
    {"peer_remote_op", "ib_wc_remote_op", "", "a peer whose QP failed first"},
    {"peer_invalid_request", "ib_wc_remote_invalid_request", "", "a peer whose QP failed first"},
    {"proxy_call_failed", "proxy_call_failed", "", "a peer whose proxy failed first"},
    {"proxy_receive_failed", "", "Could not receive type from localRank", "a local rank that failed first"},
    {"alloc_after_cuda_failure", "", "Failed to CUDA calloc", "the CUDA failure just before it"},
    {"framework_system_error", "nccl_system_error", "", "the NCCL WARN that this framework line quotes"},
    {"framework_internal_error", "nccl_internal_error", "", "the NCCL WARN that this framework line quotes"},
    {"framework_cuda_error", "nccl_unhandled_cuda_error", "", "the NCCL WARN that this framework line quotes"},
    {"framework_invalid_usage", "nccl_invalid_usage", "", "the NCCL WARN that this framework line quotes"},
    {"watchdog_timeout", "collective_timeout", "", "a rank that hung or failed before the collective"},
};

bool prefix(sv s, sv p) { return s.substr(0, p.size()) == p; }

const ProcessInfo* proc(const CauseContext& c) { return c.process; }

// The first interface of any process's socket list that is neither suspicious nor IPoIB: what to
// pin (an Ethernet interface is what the nodes most surely share).
std::string good_interface(const LogSummary& s) {
  for (const auto& p : s.processes)
    for (const auto& n : p.socket_ifs)
      if (!suspicious_interface(n.name) && !prefix(n.name, "ib")) return interface_name(n.name);
  for (const auto& p : s.processes)
    if (p.bootstrap_if && !suspicious_interface(*p.bootstrap_if) && !prefix(*p.bootstrap_if, "ib"))
      return interface_name(*p.bootstrap_if);
  return "";
}

std::string pin_socket_ifname(const LogSummary& s) {
  std::string g = good_interface(s);
  return g.empty() ? "Set NCCL_SOCKET_IFNAME to the interface the nodes reach each other on (ip -br addr)."
                   : "Set NCCL_SOCKET_IFNAME=" + g + " (listed by NCCL on these nodes) or the interface the nodes "
                     "reach each other on.";
}

bool socketish(const Failure& f) {
  return prefix(f.id, "socket_") || f.id == "unknown_warning" || f.id == "nccl_system_error" ||
         f.id == "ib_no_ip_interface";
}

// --- bootstrap over a named interface: the TCP rendezvous failed, RDMA is not involved
bool boot_applies(const CauseContext& c) {
  return c.failure.phase == Phase::Bootstrap && socketish(c.failure) && proc(c) && proc(c)->bootstrap_if;
}
std::string boot_note(const CauseContext& c) {
  std::string n = "bootstrap interface " + *proc(c)->bootstrap_if;
  if (auto why = suspicious_interface(*proc(c)->bootstrap_if)) n += " (" + *why + ")";
  return n;
}
std::string boot_remedy(const CauseContext& c) {
  return "The TCP rendezvous ran over " + interface_name(*proc(c)->bootstrap_if) + ". " +
         pin_socket_ifname(c.summary) + " Open TCP between the nodes on that interface.";
}

// --- IPoIB chosen for bootstrap: often on another subnet per node, or down
bool ipoib_applies(const CauseContext& c) {
  return boot_applies(c) && prefix(*proc(c)->bootstrap_if, "ib");
}
std::string ipoib_note(const CauseContext& c) {
  std::vector<std::string> nets;
  for (const auto& p : c.summary.processes) {
    if (!p.bootstrap_if || !prefix(*p.bootstrap_if, "ib")) continue;
    std::string a = p.bootstrap_if->substr(p.bootstrap_if->find(':') + 1);
    std::size_t dot = a.rfind('.');
    std::string net = dot == std::string::npos ? a : a.substr(0, dot);
    if (std::find(nets.begin(), nets.end(), net) == nets.end()) nets.push_back(net);
  }
  return nets.size() > 1 ? "IPoIB used for bootstrap across " + std::to_string(nets.size()) + " subnets"
                         : "IPoIB used for bootstrap";
}
std::string ipoib_remedy(const CauseContext& c) {
  std::string g = good_interface(c.summary);
  return "Bootstrap picked an IPoIB interface (" + interface_name(*proc(c)->bootstrap_if) +
         "), which may be down or on a different subnet on each node: pin NCCL_SOCKET_IFNAME" +
         (g.empty() ? " to an Ethernet interface shared by all nodes." : "=" + g + ".");
}

// --- a socket connection over a suspicious interface (veth, bridge, link-local)
const Nic* used_socket_if(const ProcessInfo& p) {
  for (std::size_t i = 0; i < p.socket_dev_channels.size() && i < p.socket_ifs.size(); ++i)
    if (p.socket_dev_channels[i] > 0 && suspicious_interface(p.socket_ifs[i].name)) return &p.socket_ifs[i];
  return nullptr;
}
bool sockif_applies(const CauseContext& c) {
  return socketish(c.failure) && proc(c) && used_socket_if(*proc(c)) != nullptr;
}
std::string sockif_note(const CauseContext& c) {
  const Nic* n = used_socket_if(*proc(c));
  return "NET/Socket ran over " + n->name + " (" + *suspicious_interface(n->name) + ")";
}
std::string sockif_remedy(const CauseContext& c) {
  return "NET/Socket connected over " + interface_name(used_socket_if(*proc(c))->name) + ". " +
         pin_socket_ifname(c.summary);
}

// --- no interface / no address, with NCCL_SOCKET_IFNAME set: the filter names what is not there
const char* const kNoInterface[] = {"socket_no_interface", "socket_no_interface_net", "socket_address_unset"};
// "NCCL_SOCKET_IFNAME=eth2 on twshared1016:1958" from the first process that echoed it.
std::string ifname_setting(const LogSummary& s) {
  for (const auto& p : s.processes) {
    auto it = p.env.find("NCCL_SOCKET_IFNAME");
    if (it != p.env.end()) return "NCCL_SOCKET_IFNAME=" + it->second + " on " + host_pid(p.host, p.pid);
  }
  return "";
}
bool ifname_applies(const CauseContext& c) {
  return std::find(std::begin(kNoInterface), std::end(kNoInterface), c.failure.id) != std::end(kNoInterface) &&
         !ifname_setting(c.summary).empty();
}
std::string ifname_note(const CauseContext& c) {
  return ifname_setting(c.summary) + " is set: NCCL looks only at the interfaces it names";
}
std::string ifname_remedy(const CauseContext& c) {
  return "The job sets " + ifname_setting(c.summary) +
         ": compare it with `ip -br addr` on every node (names differ between node types and "
         "container network namespaces), or unset it.";
}

// --- ibv_modify_qp timed out moving to RTR with several NICs per node: a rail-optimised fabric
bool rail_applies(const CauseContext& c) {
  // Without the process's NIC list (an excerpt), the hint still fits; with one NIC it cannot.
  return c.failure.id == "ib_modify_qp_timeout" && c.failure.line.find("RTR") != std::string::npos &&
         (!proc(c) || proc(c)->ib_nics.size() != 1);
}
std::string rail_note(const CauseContext& c) {
  std::string n = proc(c) && !proc(c)->ib_nics.empty() ? std::to_string(proc(c)->ib_nics.size()) + " NICs per node, " : "";
  return "QP timed out moving to RTR: " + n + "a rail-optimised fabric?";
}
std::string rail_remedy(const CauseContext&) {
  return "On a rail-optimised fabric NICs of different rails cannot reach each other: set NCCL_CROSS_NIC=0 "
         "so that each ring uses the same NIC index on every node.";
}

// --- CUDA out of memory while setting up transports: the buffers of the peers
bool oom_applies(const CauseContext& c) {
  return c.failure.id == "cuda_oom" && (c.failure.phase == Phase::Connect || c.failure.phase == Phase::Topology);
}
std::string oom_note(const CauseContext&) { return "while allocating transport buffers"; }
std::string oom_remedy(const CauseContext&) {
  return "The rank ran out of GPU memory while connecting its peers; its peers' socket errors follow from it.";
}

// --- the QP state transition a modify_qp failure names (NCCL 2.2x: "curr state INIT, next state RTR")
std::string qp_state(const std::string& line, const char* key) {
  std::size_t p = line.find(key);
  if (p == std::string::npos) return "";
  std::size_t b = p + std::strlen(key), e = b;
  while (e < line.size() && line[e] >= 'A' && line[e] <= 'Z') ++e;
  return line.substr(b, e - b);
}
bool qp_applies(const CauseContext& c) {
  return prefix(c.failure.id, "ib_modify_qp") && !qp_state(c.failure.line, "next state ").empty();
}
std::string qp_note(const CauseContext& c) {
  std::string from = qp_state(c.failure.line, "curr state ");
  return "QP " + (from.empty() ? std::string("?") : from) + " -> " + qp_state(c.failure.line, "next state ");
}
std::string qp_remedy(const CauseContext& c) {
  std::string to = qp_state(c.failure.line, "next state ");
  if (to == "RTR" && c.failure.id == "ib_modify_qp_invalid")
    return "INIT -> RTR rejected the path attributes: an MTU above the port's active MTU, or a GID of the "
           "wrong type (RoCE v1 vs v2); check NCCL_IB_GID_INDEX / NCCL_IB_ROCE_VERSION_NUM and the MTU.";
  if (to == "RTR") return "RTR needs the peer's address: the two NICs must reach each other (route, VLAN, GID).";
  if (to == "RTS") return "RTR -> RTS sets timeouts and retries: check NCCL_IB_TIMEOUT / NCCL_IB_RETRY_CNT values.";
  return "The QP failed on its way to " + to + ".";
}

// --- a failure in NVLS setup: transport/nvls.cc is NVLink SHARP, which the NVSwitches and their
// Fabric Manager provide. Before NCCL 2.27 a multicast setup the fabric refuses is a bare "Cuda
// failure" (invalid argument, unknown error, 401) from that file; the answers in nccl#976, nccl#1488 and
// nccl-tests#276 point at a Fabric Manager restarted without a GPU reset.
bool nvls_applies(const CauseContext& c) {
  return c.failure.id == "nvls_bind_failed" || prefix(c.failure.source, "transport/nvls.cc");
}
std::string nvls_note(const CauseContext& c) {
  std::string n = "in NVLS (NVLink SHARP) setup: CUDA refused the multicast object NCCL asked for (the NVSwitch "
                  "fabric, run by the Fabric Manager, or a container without the multicast devices)";
  // CUDA error 2 from the bind: the fabric's multicast resources, not the GPU's memory.
  if (core::contains(c.failure.line, "CUDA error 2")) n += "; CUDA error 2 there: multicast resources used up, not GPU memory";
  return n;
}
std::string nvls_remedy(const CauseContext&) {
  return "NVLS multicast needs a healthy NVSwitch fabric: check nvidia-smi -q (Fabric State Completed, Status "
         "Success) and the Fabric Manager service; after a Fabric Manager restart reset the GPUs or reboot. "
         "In a container, check that the host's /dev/nvidia-caps devices are exposed to it: without them "
         "CUDA can refuse the multicast object (invalid argument). "
         "NCCL_NVLS_ENABLE=0 runs without NVLS meanwhile.";
}

// --- a completion error on a host whose RoCE GID table changed earlier in the job (nccl#394): the
// address behind the GID index the QPs use changed under them.
const Failure* gid_change_before(const CauseContext& c) {
  for (const auto& f : c.summary.failures)
    if (f.id == "ib_gid_table_changed" && f.host == c.failure.host && f.seq < c.failure.seq) return &f;
  return nullptr;
}
bool gid_applies(const CauseContext& c) {
  return !c.failure.host.empty() && (prefix(c.failure.id, "ib_wc_") || c.failure.id == "ib_completion_error") &&
         gid_change_before(c) != nullptr;
}
std::string gid_note(const CauseContext& c) {
  return "after a GID table change on " + c.failure.host + " (" + gid_change_before(c)->input +
         "): the RoCE address behind the GID index changed under the running job";
}
std::string gid_remedy(const CauseContext&) {
  return "Keep the RoCE interfaces' addresses static while jobs run (NetworkManager, DHCP renewals, cloud "
         "agents), and pin the GID with NCCL_IB_GID_INDEX or NCCL_IB_ADDR_FAMILY/NCCL_IB_ADDR_RANGE.";
}

const CauseRule kCauseRules[] = {
    {"bootstrap_ipoib", ipoib_applies, ipoib_note, ipoib_remedy},
    {"bootstrap_interface", boot_applies, boot_note, boot_remedy},
    {"socket_interface", sockif_applies, sockif_note, sockif_remedy},
    {"socket_ifname_set", ifname_applies, ifname_note, ifname_remedy},
    {"rail_cross_nic", rail_applies, rail_note, rail_remedy},
    {"qp_transition", qp_applies, qp_note, qp_remedy},
    {"oom_transport_buffers", oom_applies, oom_note, oom_remedy},
    {"nvls_fabric", nvls_applies, nvls_note, nvls_remedy},
    {"gid_changed", gid_applies, gid_note, gid_remedy},
};

// NCCL 2.18-2.19 (and later) give up CollNet when a rank of a node cannot connect it: the check
// returns ncclSystemError ("init.cc:670 -> 2"), ranks whose own connect failed print
// "transport.cc:291 -> 2", and the caller drops CollNet and goes on (nccl#1050).
const FallbackRule kFallbacks[] = {
    {"collnet_to_p2p", "collnet_fallback", 2, "transport.cc init.cc",
     "CollNet could not be set up: NCCL fell back to the point-to-point network (a note, not a failure)"},
    {"collnet_algo_ignored", "collnet_algo_ignored", -1, "",
     "CollNet is not available: NCCL_ALGO=COLLNET was ignored (a note, not a failure)"},
};

bool has_hit(const LogSummary& s, const char* id) {
  return std::any_of(s.hits.begin(), s.hits.end(), [&](const SignatureHit& h) { return h.id == id; });
}

// "transport.cc:291" is one of "transport.cc init.cc".
bool trace_in(const std::string& trace, sv files) {
  sv file = sv(trace).substr(0, trace.find(':'));
  while (!files.empty()) {
    std::size_t sp = files.find(' ');
    if (files.substr(0, sp) == file) return true;
    files = sp == sv::npos ? sv{} : files.substr(sp + 1);
  }
  return false;
}

const PhaseInfo kPhases[] = {
    {Phase::Unknown, "an unknown phase (the log shows none)", ""},
    {Phase::Bootstrap, "bootstrap (TCP rendezvous)",
     "Bootstrap is plain TCP over NCCL_SOCKET_IFNAME's interface; RDMA is not used yet. Check that every "
     "rank started, the root address is reachable and the interface is the one the nodes share."},
    {Phase::Topology, "init (devices, topology and graph search)",
     "The ranks met but setup failed before any connection: read the WARN for topology, memory or "
     "configuration errors (NCCL_TOPO_FILE, NCCL_P2P_LEVEL, GPU visibility)."},
    {Phase::Connect, "transport connect (communicator init)",
     "Connections between ranks (P2P, SHM, NET) failed: the first cause names the transport."},
    {Phase::Running, "collectives (after Init COMPLETE)",
     "The communicator was set up; a failure now is a peer failing, a network error or an application "
     "mismatch during collectives."},
};

struct PhaseHint {
  const char* id_prefix;  // catalog ids starting with this ("" = any)
  const char* source;     // NCCL source file the WARN was printed from, as a prefix ("" = any)
  Phase phase;
};
const PhaseHint kPhaseHints[] = {
    {"ib_modify_qp", "", Phase::Connect},  {"ib_reg_mr", "", Phase::Connect},
    {"ib_create_qp", "", Phase::Connect},  {"shm_", "", Phase::Connect},
    // Work requests complete, and sizes are compared, only once data moves: collectives.
    {"ib_wc_", "", Phase::Running},        {"ib_completion", "", Phase::Running},
    {"ib_collective_mismatch", "", Phase::Running}, {"collective_mismatch", "", Phase::Running},
    {"message_truncated", "", Phase::Running},
    {"collective_timeout", "", Phase::Running},  // the framework's watchdog times collectives
    {"proxy_", "", Phase::Connect},        {"socket_recv_failed", "", Phase::Connect},
    {"gpu_duplicate", "", Phase::Topology}, {"gpu_shared_by_ranks", "", Phase::Topology},
    {"topo_no_path", "", Phase::Topology},
    {"nvls_bind_failed", "", Phase::Connect},
    {"ib_async_local_access", "", Phase::Running},  // work requests were posted: data was moving  // NVLS setup follows the ring and tree connects
    {"", "enqueue.cc", Phase::Running},    {"", "transport", Phase::Connect},
    // Where NCCL prints from says the phase when nothing else does (a WARN's file:line, or the
    // first "file:line -> N" trace after it): device, topology and channel setup is init; the
    // proxy thread serves connections (and, later, collectives: the process's lines say which).
    {"", "init.cc", Phase::Topology},      {"", "channel.cc", Phase::Topology},
    {"", "graph/", Phase::Topology},       {"", "misc/cudawrap.cc", Phase::Topology},
    {"", "misc/nvmlwrap.cc", Phase::Topology}, {"", "proxy.cc", Phase::Connect},
};

}  // namespace

std::optional<Phase> phase_hint(std::string_view id, std::string_view source) {
  std::optional<Phase> best;
  for (const auto& h : kPhaseHints) {
    if (h.id_prefix[0] != '\0' && !prefix(id, h.id_prefix)) continue;
    if (h.source[0] != '\0' && !prefix(source, h.source)) continue;
    if (!best || *best < h.phase) best = h.phase;
  }
  return best;
}

std::span<const ConsequenceRule> consequence_rules() { return kConsequences; }

const ConsequenceRule* match_consequence(const Failure& f) {
  for (const auto& r : kConsequences) {
    if (r.signature[0] != '\0' && f.id != r.signature) continue;
    if (!core::contains(f.line, r.contains)) continue;
    return &r;
  }
  return nullptr;
}

std::span<const CauseRule> cause_rules() { return kCauseRules; }

std::span<const FallbackRule> fallback_rules() { return kFallbacks; }

std::vector<const FallbackRule*> fallbacks_in(const LogSummary& s) {
  std::vector<const FallbackRule*> out;
  for (const auto& r : kFallbacks)
    if (has_hit(s, r.signature)) out.push_back(&r);
  return out;
}

const FallbackRule* trace_fallback(const LogSummary& s, const ProcessInfo& p) {
  if (!p.first_error_code || !p.first_error_trace) return nullptr;
  for (const auto& r : kFallbacks)
    if (r.result >= 0 && *p.first_error_code == r.result && trace_in(*p.first_error_trace, r.trace_files) &&
        has_hit(s, r.signature))
      return &r;
  return nullptr;
}

namespace {
// Catalog ids of usage errors (signatures.cpp): the job's launch or its calls, not the network.
constexpr std::string_view kUsageErrors[] = {"rank_out_of_range",     "gpu_duplicate",  "gpu_shared_by_ranks",
                                             "collective_mismatch",   "version_mismatch", "nccl_invalid_usage",
                                             "ib_collective_mismatch"};
}  // namespace

bool phase_remedy_applies(std::string_view id) {
  for (sv u : kUsageErrors)
    if (id == u) return false;
  return true;
}

const PhaseInfo& phase_info(Phase p) {
  for (const auto& i : kPhases)
    if (i.phase == p) return i;
  return kPhases[0];
}

std::string interface_name(std::string_view token) {
  token = token.substr(0, token.find(':'));
  return std::string(token.substr(0, token.find('<')));
}

std::optional<std::string> suspicious_interface(std::string_view token) {
  std::string name = interface_name(token);
  std::size_t colon = token.find(':');
  sv addr = colon == sv::npos ? sv{} : token.substr(colon + 1);
  std::string why;
  if (name == "lo" || prefix(addr, "127.") || prefix(addr, "::1")) why = "loopback";
  for (const char* p : {"docker", "veth", "virbr", "cni", "flannel", "cali", "br-", "weave", "kube-", "vxlan", "tun",
                        "tap"})
    if (why.empty() && prefix(name, p)) why = std::string("container/VM virtual interface ") + p + "*";
  const char* ll = prefix(addr, "fe80") || prefix(addr, "FE80") ? "IPv6 link-local address"
                   : prefix(addr, "169.254.")                   ? "IPv4 link-local address"
                                                                : nullptr;
  if (ll) why += (why.empty() ? "" : ", ") + std::string(ll);
  if (why.empty()) return std::nullopt;
  return why;
}

}  // namespace fabscope::nccllog
