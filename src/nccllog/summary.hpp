#pragma once
// LogSummary: what a set of NCCL logs says, as plain values (JSON schema
// "fabscope.nccllog", documented in docs/nccllog.md). Built by Accumulator from events,
// judged by diagnose().
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/finding.hpp"
#include "core/json.hpp"
#include "nccllog/parser.hpp"

namespace fabscope::nccllog {

// How far a process got through communicator setup when it logged a line. Each phase starts at the
// first line only that phase prints: any INFO line of the process (bootstrap: TCP rendezvous over
// the OOB interface), "comm 0x.. nRanks .. nNodes .." (init: topology and graph search, the
// rendezvous is done), a "Channel .. via" line (transport connect), "Init COMPLETE" (the
// communicator runs collectives). Unknown: the log shows nothing of the process before the
// failure and the failure's own source names no phase; it is never guessed.
enum class Phase { Unknown = -1, Bootstrap = 0, Topology, Connect, Running };
const char* to_string(Phase p);

// "host:pid", or the host alone when the log names no pid ("gpu-server320 [5] NCCL INFO ...").
std::string host_pid(const std::string& host, long pid);

struct Nic {
  std::string name;        // "mlx5_0:1" (device:port) or "eth0"
  std::string link_layer;  // "IB", "RoCE"; "" for sockets
};

// A feature NCCL turned on or off and said so in an INFO line: GPUDirect RDMA per HCA or GPU/HCA
// pair, NVLS, CollNet, a setting a network plugin chose, or a switch set by environment
// (NCCL_P2P_DISABLE=1). Identical ones are counted, not repeated.
struct Decision {
  std::string feature;  // "GDR", "NVLS", "CollNet", "P2P", "SHM", "NET/IB", "NCCL_PROTO"
  bool enabled = false;
  std::string scope;    // where: "NET/IB HCA 0 'mlx5_0'", "GPU 0 / HCA 1", "rings", "" (the process)
  std::string reason;   // why, as NCCL says it: "no module", "distance 8 > 5", "NCCL_P2P_DISABLE=1"
  long count = 0;       // lines that said it
};
constexpr std::size_t kMaxDecisions = 32;  // per process

// One NCCL process, identified by host and pid (one or more ranks, one per GPU it drives).
struct ProcessInfo {
  std::string host;
  long pid = -1;
  std::optional<std::string> nccl_version;  // "2.28.9+cuda13.0"
  std::optional<long> cuda_driver;          // 13000 = CUDA 13.0
  std::optional<std::string> bootstrap_if;  // "eth0:192.0.2.2<0>"
  std::optional<std::string> network;       // "IB", "Socket", "IBext_v8", ...
  std::vector<Nic> ib_nics;                 // from "NET/IB : Using ..."
  std::vector<Nic> socket_ifs;              // from "NET/Socket : Using ..."
  bool ib_no_device = false;                // "NET/IB : No device found."
  std::vector<std::string> failed_plugins;  // "Failed to initialize NET plugin IB"
  std::map<std::string, std::string> env;   // "NCCL_IB_HCA" -> "=mlx5_0:1"
  long warnings = 0;
  std::optional<long> first_error_code;     // first ncclResult_t seen in "file:line -> N"
  std::optional<std::string> first_error_trace;  // its "bootstrap.cc:98" (the failing call's file)
  Phase phase = Phase::Unknown;             // the furthest phase this process reached
  // Network channels per device index N of "NET/Socket/N" / "NET/IB/N" / "NET/IBext/N": the
  // interface (socket_ifs[N]) or HCA (ib_nics[N]) they run on. At most 64 entries each.
  std::vector<long> socket_dev_channels, ib_dev_channels;
  std::vector<Decision> decisions;  // at most kMaxDecisions
};

// One rank of a communicator, as seen by the process that owns it.
struct RankInfo {
  std::string host;
  long pid = -1;
  int cuda_dev = -1;
  int rank = -1;
  int nranks = -1;
  std::optional<int> nnodes, local_ranks, local_rank;
  bool init_started = false;
  bool init_complete = false;
  std::optional<double> init_total_s;  // "Init timings ... total 0.52"
};

// Connections of one kind ("NET/IB", "NET/IB/GDRDMA", "P2P/CUMEM", "SHM/direct/direct").
struct TransportCount {
  std::string transport;
  bool network = false;  // NET/*: leaves the node (or at least goes through a NIC)
  bool gdrdma = false;
  long connections = 0;  // "Channel" lines: one per channel, direction and rank
};

struct PeerPair {
  int from = -1, to = -1;
  std::string transport;
  long channels = 0;
};

struct CommSummary {
  std::string key;      // commId ("0xe481bfcc4c65d301"), or "nranks=N" when the log has none
  int nranks = -1;
  std::optional<int> nnodes;
  std::vector<RankInfo> ranks;
  std::vector<TransportCount> transports;
  std::vector<PeerPair> pairs;  // at most kMaxPairs; pairs_dropped counts the rest
  long pairs_dropped = 0;
  bool nvls = false;
  long net_connections = 0, net_rdma_connections = 0, net_gdr_connections = 0;
  long net_socket_connections = 0, local_connections = 0;
};

struct SignatureHit {
  std::string id;  // signature id
  Severity severity = Severity::Info;
  long count = 0;
  std::string first_line;   // the first matching line, cut to 300 bytes
  std::string first_input;  // "file:line"
  std::vector<std::string> hosts;  // distinct hosts, at most 16
  std::optional<int> wc_status;    // completion errors: the status code of the first line
};

// One WARN or framework error line of severity warn or above, in reading order: the material of
// the cause/consequence reasoning in diagnose().
struct Failure {
  std::string id;        // catalog signature id, or "unknown_warning"
  Severity severity = Severity::Warn;
  std::string line;      // the line, cut to 300 bytes
  std::string input;     // "file:line"
  std::uint64_t seq = 0; // reading order over all inputs
  std::string host;      // "" when the line has no host:pid:tid prefix
  long pid = -1;
  int cuda_dev = -1;
  int rank = -1;          // the rank of the comm this process/device was setting up, -1 unknown
  std::string source;     // NCCL's "misc/socket.cc:483", when the line has one
  Phase phase = Phase::Unknown;    // the phase the process was in (see Phase)
  std::optional<double> time;      // seconds, from a timestamp before the host (or in the line)
};

struct InputInfo {
  std::string name;
  std::uint64_t bytes = 0, lines = 0, nccl_lines = 0, cut_lines = 0;
};

struct LogSummary {
  std::vector<InputInfo> inputs;
  std::vector<ProcessInfo> processes;
  // What lines without a "host:pid:tid" prefix say (excerpts quoted as "NCCL INFO ..." or
  // "[0] NCCL INFO ..."): their settings, networks and decisions, as one process of host "" and
  // pid -1, kept apart from the processes above. Absent when every line has a prefix.
  std::optional<ProcessInfo> unprefixed;
  std::vector<CommSummary> comms;
  std::vector<SignatureHit> hits;           // catalog matches, in catalog order
  std::vector<std::string> versions;        // distinct NCCL versions, all lines (bare ones too)
  long unknown_warnings = 0;
  std::vector<std::string> unknown_samples;  // first distinct unknown WARN messages (max 10)
  long channel_lines = 0;
  long dropped_entities = 0;  // processes/comms beyond the caps (memory stays bounded)
  std::vector<Failure> failures;  // the first kMaxFailures, in reading order
  long failures_dropped = 0;
};

constexpr std::size_t kMaxFailures = 1024;

void to_json(json& j, const Nic& v);
void to_json(json& j, const Decision& v);
void to_json(json& j, const ProcessInfo& v);
void to_json(json& j, const RankInfo& v);
void to_json(json& j, const TransportCount& v);
void to_json(json& j, const PeerPair& v);
void to_json(json& j, const CommSummary& v);
void to_json(json& j, const SignatureHit& v);
void to_json(json& j, const InputInfo& v);
void to_json(json& j, const Failure& v);
void to_json(json& j, const LogSummary& v);

}  // namespace fabscope::nccllog
