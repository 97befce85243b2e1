#include "mesh/mesh_families.hpp"

namespace fabscope::mesh {

const std::vector<double>& mesh_rtt_bounds() {
  static const std::vector<double> b = {
      1e-6,   2e-6,   3e-6,   4e-6,   5e-6, 6e-6, 8e-6, 10e-6, 12e-6, 15e-6, 20e-6, 25e-6, 30e-6, 40e-6, 50e-6, 60e-6,
      80e-6,  100e-6, 150e-6, 200e-6, 300e-6, 500e-6, 1e-3, 2e-3, 5e-3, 10e-3, 20e-3, 50e-3, 100e-3, 200e-3, 500e-3, 1};
  return b;
}

namespace {
MetricFamily fam(const char* name, MetricType t, const char* help) { return MetricFamily{name, t, help, {}}; }
}  // namespace

std::vector<MetricFamily> mesh_families(const MeshView& v) {
  auto rtt = fam("fabscope_mesh_rtt_seconds", MetricType::Histogram,
                 "Round-trip time of answered probes to the peer, as the prober measured it (includes the peer's "
                 "processing delay).");
  auto net_rtt = fam("fabscope_mesh_network_rtt_seconds", MetricType::Histogram,
                     "RDMA probes timed by the devices' completion timestamps on both sides: the round trip less "
                     "the responder's span from receiving the probe to sending the reply (the network's share).");
  auto sent = fam("fabscope_mesh_probes_sent_total", MetricType::Counter, "Probes sent to the peer.");
  auto answered = fam("fabscope_mesh_probes_answered_total", MetricType::Counter,
                      "Probes the peer answered within the probe timeout.");
  auto errors = fam("fabscope_mesh_probe_errors_total", MetricType::Counter,
                    "Probes without an answer, by reason (timeout, connect, refused, closed, bad_reply).");
  auto up = fam("fabscope_mesh_peer_up", MetricType::Gauge,
                "1 when the last probe to the peer was answered, 0 when it was not (kept while the peer is out of "
                "the rotation).");
  auto last_answer = fam("fabscope_mesh_peer_last_answer_timestamp_seconds", MetricType::Gauge,
                         "Unix time of the peer's last answer; 0 never.");
  auto last_probe = fam("fabscope_mesh_peer_last_probe_timestamp_seconds", MetricType::Gauge,
                        "Unix time the last probe to the peer finished (answered or not).");
  for (const auto& p : v.peers) {
    Labels l{{"peer", p.peer}, {"transport", p.transport}};
    add_histogram(rtt, l, p.rtt);
    if (p.network_rtt.count > 0) add_histogram(net_rtt, l, p.network_rtt);
    sent.samples.push_back(Sample::of_u64(l, p.sent));
    answered.samples.push_back(Sample::of_u64(l, p.answered));
    for (const char* r : kMeshErrorReasons) {
      auto it = p.errors.find(r);
      Labels le = l;
      le.emplace_back("reason", r);
      errors.samples.push_back(Sample::of_u64(std::move(le), it == p.errors.end() ? 0 : it->second));
    }
    if (p.probed) {
      up.samples.push_back(Sample::of(l, p.up ? 1 : 0));
      last_probe.samples.push_back(Sample::of(l, p.last_probe_timestamp_seconds));
    }
    last_answer.samples.push_back(Sample::of(l, p.last_answer_timestamp_seconds));
  }

  auto rprobes = fam("fabscope_mesh_responder_probes_total", MetricType::Counter,
                     "Probes this node's responder read, by result (answered, rate_limited: over the per-connection "
                     "or total rate, send_blocked: the peer did not read or the send failed, unknown_sender: an RDMA "
                     "datagram without the cookie of an open authenticated connection, or not ours).");
  for (const char* r : {"answered", "rate_limited", "send_blocked", "unknown_sender"}) {
    auto it = v.responder.probes.find(r);
    rprobes.samples.push_back(Sample::of_u64({{"result", r}}, it == v.responder.probes.end() ? 0 : it->second));
  }
  auto rejected = fam("fabscope_mesh_responder_rejected_total", MetricType::Counter,
                      "Connections the responder refused or cut, by reason.");
  for (const char* r : kMeshRejectReasons) {
    auto it = v.responder.rejected.find(r);
    rejected.samples.push_back(Sample::of_u64({{"reason", r}}, it == v.responder.rejected.end() ? 0 : it->second));
  }
  auto conns = fam("fabscope_mesh_responder_connections", MetricType::Gauge,
                   "Connections open at the responder (authenticated or saying hello).");
  conns.samples.push_back(Sample::of_u64({}, v.responder.connections_open));
  auto delay = fam("fabscope_mesh_responder_delay_seconds", MetricType::Histogram,
                   "This node's own processing delay per answered probe: from reading the probe to writing the reply.");
  add_histogram(delay, {}, v.responder.delay);

  auto peers = fam("fabscope_mesh_peers", MetricType::Gauge,
                   "Peers by state: listed (every source together, this node left out), selected (probed in the "
                   "current rotation window), labelled (with series of their own).");
  std::uint64_t labelled = 0;
  for (const auto& p : v.peers)
    if (p.peer != kMeshOtherPeer) ++labelled;
  peers.samples.push_back(Sample::of_u64({{"state", "listed"}}, v.peers_listed));
  peers.samples.push_back(Sample::of_u64({{"state", "selected"}}, v.peers_selected));
  peers.samples.push_back(Sample::of_u64({{"state", "labelled"}}, labelled));
  auto limit = fam("fabscope_mesh_peer_label_limit", MetricType::Gauge,
                   "Peers with series of their own at most; the others are summed under peer=\"_other\".");
  limit.samples.push_back(Sample::of_u64({}, v.peer_label_limit));
  auto rotation = fam("fabscope_mesh_rotation_seconds", MetricType::Gauge, "Length of one rotation window.");
  rotation.samples.push_back(Sample::of({}, v.rotation_seconds));
  auto coverage = fam("fabscope_mesh_coverage_period_seconds", MetricType::Gauge,
                      "Time within which every listed peer is probed at least once by this node.");
  coverage.samples.push_back(Sample::of({}, v.coverage_period_seconds));
  auto rate = fam("fabscope_mesh_probe_rate_per_second", MetricType::Gauge, "Probes this node sends per second.");
  rate.samples.push_back(Sample::of({}, v.probe_rate_per_second));
  auto bad = fam("fabscope_mesh_peer_list_bad_lines", MetricType::Gauge,
                 "Lines of the peer list left out as malformed at its last reading (named on stderr).");
  bad.samples.push_back(Sample::of_u64({}, v.peer_list_bad_lines));
  auto lerr = fam("fabscope_mesh_peer_list_errors_total", MetricType::Counter,
                  "Times a peer source could not be read or resolved (the previous peers were kept).");
  lerr.samples.push_back(Sample::of_u64({}, v.peer_list_errors_total));

  auto rdma_up = fam("fabscope_mesh_rdma_up", MetricType::Gauge,
                     "1 when this node's RDMA endpoint for the mesh is open, 0 when it could not be opened (the "
                     "reason is on stderr; peers are probed over tcp). Absent with --mesh-transport tcp and before "
                     "the first connection.");
  auto rdma_info = fam("fabscope_mesh_rdma_info", MetricType::Gauge,
                       "The mesh's RDMA endpoint: device, port, GID index (-1: none, InfiniBand), link layer, "
                       "transport label and whether completion timestamps are read. Always 1.");
  auto rdma_resets = fam("fabscope_mesh_rdma_resets_total", MetricType::Counter,
                         "Times the mesh's RDMA endpoint failed (a completion with an error put its queue pair in "
                         "the error state) and was opened again.");
  if (v.rdma.enabled && v.rdma.tried) {
    rdma_resets.samples.push_back(Sample::of_u64({}, v.rdma.resets));
    rdma_up.samples.push_back(Sample::of({}, v.rdma.up ? 1 : 0));
    if (v.rdma.up)
      rdma_info.samples.push_back(Sample::of({{"device", v.rdma.device},
                                              {"port", std::to_string(v.rdma.port)},
                                              {"gid_index", std::to_string(v.rdma.gid_index)},
                                              {"link_layer", v.rdma.link_layer},
                                              {"transport", v.rdma.transport},
                                              {"timestamps", v.rdma.timestamps ? "hardware" : "software"}},
                                             1));
  }

  std::vector<MetricFamily> out;
  for (auto* f : {&rtt, &net_rtt, &sent, &answered, &errors, &up, &last_answer, &last_probe, &rprobes, &rejected, &conns, &delay,
                  &peers, &limit, &rotation, &coverage, &rate, &bad, &lerr, &rdma_up, &rdma_info, &rdma_resets})
    out.push_back(std::move(*f));
  return out;
}

}  // namespace fabscope::mesh
