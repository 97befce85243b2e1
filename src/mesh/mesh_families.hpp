#pragma once
// Metric families of the probe mesh (`fabscope exporter --mesh`): per peer and transport, RTT
// histograms, probes sent and answered, errors by reason, reachability; the responder's own
// answers, refusals and processing delay; the peer list and selection. Pure: the mesh
// (mesh.hpp) hands over a MeshView. Every name, type and label is in docs/metrics.md.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/metrics.hpp"

namespace fabscope::mesh {

// Bucket upper bounds of the RTT and delay histograms, in seconds: 1 µs steps up to 6 µs (the
// runbook's 5 µs InfiniBand and 10 µs RoCE thresholds are bounds), then about three per decade
// to 1 s.
const std::vector<double>& mesh_rtt_bounds();

// Why a probe got no answer; every reason is rendered for every peer, 0 included.
inline constexpr const char* kMeshErrorReasons[] = {
    "timeout",    // written, no reply within the probe timeout
    "connect",    // no connection: name not resolved, refused, unreachable, timed out
    "refused",    // the peer refused the mesh token
    "closed",     // the peer closed the connection with a probe outstanding
    "bad_reply",  // the reply was not ours (magic or sequence)
    "rdma_error", // the device refused or failed the probe's send (UD transport)
};

// The peer label of everything beyond the label limit.
inline constexpr const char* kMeshOtherPeer = "_other";

struct MeshPeerStats {
  std::string peer;              // label: the peer's id, or kMeshOtherPeer
  std::string transport = "tcp";  // label: "tcp" | "rdma_ib" | "rdma_roce"
  Histogram rtt{mesh_rtt_bounds()};
  // RDMA with completion timestamps on both sides: the round trip less the responder's own
  // span, both by the devices' clocks (the network's share). Rendered once it has a sample.
  Histogram network_rtt{mesh_rtt_bounds()};
  std::uint64_t sent = 0, answered = 0;
  std::map<std::string, std::uint64_t> errors;  // reason -> count
  bool probed = false;           // a probe finished (answered or not), and the peer has not since
                                 // answered over another transport
  bool up = false;               // the last probe was answered
  double last_answer_timestamp_seconds = 0;  // Unix time; 0 never
  double last_probe_timestamp_seconds = 0;
};

struct MeshResponderStats {
  std::map<std::string, std::uint64_t> probes;    // "answered" | "rate_limited" | "send_blocked" | "unknown_sender"
  std::map<std::string, std::uint64_t> rejected;  // reason -> connections refused or cut
  std::uint64_t connections_open = 0;
  Histogram delay{mesh_rtt_bounds()};
};

// Reasons of fabscope_mesh_responder_rejected_total, all rendered.
inline constexpr const char* kMeshRejectReasons[] = {
    "unauthenticated",       // a hello with the wrong token
    "garbage",               // bytes that are not the protocol (before or after the hello)
    "hello_timeout",         // no complete hello in time (a slow or silent stranger)
    "too_many_connections",  // over the pending or authenticated connection limits
    "flood",                 // far over the probe rate limit: cut
};

// The node's RDMA endpoint for the mesh (transport auto).
struct MeshRdmaView {
  bool enabled = false;   // --mesh-transport auto
  bool tried = false;     // an open was attempted (on the first authenticated connection)
  bool up = false;        // open: the UD queue pair answers and probes
  std::string device, link_layer, transport;
  int port = 0, gid_index = -1;
  bool timestamps = false;
  std::uint64_t resets = 0;  // endpoints closed after a failed completion
};

struct MeshView {
  std::vector<MeshPeerStats> peers;  // sorted by peer; the _other aggregate among them when used
  MeshResponderStats responder;
  std::uint64_t peers_listed = 0, peers_selected = 0;
  std::uint64_t peer_label_limit = 0;
  double rotation_seconds = 0, coverage_period_seconds = 0, probe_rate_per_second = 0;
  std::uint64_t peer_list_bad_lines = 0;
  std::uint64_t peer_list_errors_total = 0;  // a source that could not be read or resolved
  MeshRdmaView rdma;
};

std::vector<MetricFamily> mesh_families(const MeshView& v);

}  // namespace fabscope::mesh
