#include "nccllog/summary.hpp"

namespace fabscope::nccllog {

const char* to_string(Phase p) {
  switch (p) {
    case Phase::Unknown: return "unknown";
    case Phase::Bootstrap: return "bootstrap";
    case Phase::Topology: return "topology";
    case Phase::Connect: return "connect";
    case Phase::Running: return "running";
  }
  return "?";
}

void to_json(json& j, const Nic& v) { j = json{{"name", v.name}, {"link_layer", v.link_layer}}; }

std::string host_pid(const std::string& host, long pid) {
  return pid < 0 ? host : host + ":" + std::to_string(pid);
}

void to_json(json& j, const Decision& v) {
  j = json{{"feature", v.feature}, {"enabled", v.enabled}, {"scope", v.scope}, {"reason", v.reason}, {"count", v.count}};
}

void to_json(json& j, const ProcessInfo& v) {
  j = json{{"host", v.host},
           {"pid", v.pid},
           {"nccl_version", v.nccl_version},
           {"cuda_driver", v.cuda_driver},
           {"bootstrap_if", v.bootstrap_if},
           {"network", v.network},
           {"ib_nics", v.ib_nics},
           {"socket_ifs", v.socket_ifs},
           {"ib_no_device", v.ib_no_device},
           {"failed_plugins", v.failed_plugins},
           {"env", v.env},
           {"warnings", v.warnings},
           {"first_error_code", v.first_error_code},
           {"first_error_trace", v.first_error_trace},
           {"phase", to_string(v.phase)},
           {"socket_dev_channels", v.socket_dev_channels},
           {"ib_dev_channels", v.ib_dev_channels},
           {"decisions", v.decisions}};
}

void to_json(json& j, const RankInfo& v) {
  j = json{{"host", v.host},
           {"pid", v.pid},
           {"cuda_dev", v.cuda_dev},
           {"rank", v.rank},
           {"nranks", v.nranks},
           {"nnodes", v.nnodes},
           {"local_ranks", v.local_ranks},
           {"local_rank", v.local_rank},
           {"init_started", v.init_started},
           {"init_complete", v.init_complete},
           {"init_total_s", v.init_total_s}};
}

void to_json(json& j, const TransportCount& v) {
  j = json{{"transport", v.transport}, {"network", v.network}, {"gdrdma", v.gdrdma}, {"connections", v.connections}};
}

void to_json(json& j, const PeerPair& v) {
  j = json{{"from", v.from}, {"to", v.to}, {"transport", v.transport}, {"channels", v.channels}};
}

void to_json(json& j, const CommSummary& v) {
  j = json{{"key", v.key},
           {"nranks", v.nranks},
           {"nnodes", v.nnodes},
           {"ranks", v.ranks},
           {"transports", v.transports},
           {"pairs", v.pairs},
           {"pairs_dropped", v.pairs_dropped},
           {"nvls", v.nvls},
           {"net_connections", v.net_connections},
           {"net_rdma_connections", v.net_rdma_connections},
           {"net_gdr_connections", v.net_gdr_connections},
           {"net_socket_connections", v.net_socket_connections},
           {"local_connections", v.local_connections}};
}

void to_json(json& j, const SignatureHit& v) {
  j = json{{"id", v.id},
           {"severity", to_string(v.severity)},
           {"count", v.count},
           {"first_line", v.first_line},
           {"first_input", v.first_input},
           {"hosts", v.hosts},
           {"wc_status", v.wc_status}};
}

void to_json(json& j, const InputInfo& v) {
  j = json{{"name", v.name}, {"bytes", v.bytes}, {"lines", v.lines}, {"nccl_lines", v.nccl_lines},
           {"cut_lines", v.cut_lines}};
}

void to_json(json& j, const Failure& v) {
  j = json{{"id", v.id},           {"severity", to_string(v.severity)},
           {"line", v.line},       {"input", v.input},
           {"seq", v.seq},         {"host", v.host},
           {"pid", v.pid},         {"cuda_dev", v.cuda_dev},
           {"rank", v.rank},       {"source", v.source},
           {"phase", to_string(v.phase)}, {"time", v.time}};
}

void to_json(json& j, const LogSummary& v) {
  j = json{{"inputs", v.inputs},
           {"processes", v.processes},
           {"unprefixed", v.unprefixed ? json(*v.unprefixed) : json(nullptr)},
           {"communicators", v.comms},
           {"signature_hits", v.hits},
           {"nccl_versions", v.versions},
           {"unknown_warnings", v.unknown_warnings},
           {"unknown_samples", v.unknown_samples},
           {"channel_lines", v.channel_lines},
           {"dropped_entities", v.dropped_entities},
           {"failures", v.failures},
           {"failures_dropped", v.failures_dropped}};
}

}  // namespace fabscope::nccllog
