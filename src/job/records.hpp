#pragma once
// A running job as the analysis sees it: one record per (process, communicator) — a rank of a
// communicator — with the communicator's last operations, read from the profiler plugin's
// segments (plugins/nccl-profiler) on each node. Times are the node's own: host times are Unix
// nanoseconds of that node's clock, GPU times that GPU's global timer. Nothing here compares
// times of two nodes; each record carries the time its node read it (now_unix_ns) so ages are
// measured on one clock.
//
// The JSON form (schema "fabscope.job-records", version 1) is what `fabscope exporter --jobs`
// serves on /jobs and what `fabscope job --save` writes (docs/formats.md).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.hpp"

namespace fabscope::job {

inline constexpr const char* kRecordsSchema = "fabscope.job-records";
inline constexpr int kRecordsSchemaVersion = 1;

struct OpRecord {
  std::uint64_t seq = 0;    // NCCL's sequence number of the op (per op kind for collectives)
  std::string op;           // "AllReduce", ... (the plugin's names)
  std::uint64_t bytes = 0;  // nccl-tests' message size
  std::uint64_t cpu_start_unix_ns = 0;                // host time the op was started (launch)
  std::uint64_t gpu_start_ns = 0, gpu_stop_ns = 0;    // GPU global timer: first channel start, last stop
  std::uint64_t done_unix_ns = 0;                     // host time it completed; 0: in flight
  bool in_flight() const { return done_unix_ns == 0; }
  // Time inside the op: the GPU's span where both stamps are there, else the host's span from
  // the start to the completion; 0 when in flight or unknown.
  std::uint64_t duration_ns() const;
};

struct PeerRecord {  // network steps to or from one peer rank (FABSCOPE_PROFILER_PROXY=1)
  int peer = 0;
  bool send = false;
  std::uint64_t steps = 0, bytes = 0, step_ns_sum = 0, wait_ns_sum = 0;
};

struct RankRecord {
  std::string job_id, host;  // the job's id as the plugin named it; the node's host name
  int pid = 0;
  bool alive = true;  // false: the process ended (its segment's lock is gone)
  // The live process's state as its node saw it: "running", "stopped" (SIGSTOP), "traced" (held by
  // a debugger), "uninterruptible" (in a driver or file-system call), "zombie"; "" not known.
  std::string process_state;
  bool stopped() const { return alive && (process_state == "stopped" || process_state == "traced"); }
  std::uint64_t now_unix_ns = 0;  // the reading node's clock when this record was read
  std::string comm;               // the communicator's hash, 16 hex digits (the same on every rank)
  std::string comm_name;          // the name the program gave it, may be ""
  int rank = 0, nranks = 0;
  int gpu = -1;  // CUDA device index in the process
  std::string bus_id;
  std::uint64_t started = 0, completed = 0;  // operations started / completed, every op
  std::uint64_t last_start_unix_ns = 0, last_done_unix_ns = 0;
  std::vector<OpRecord> ops;  // the last operations, oldest first (the plugin keeps 64)
  std::vector<PeerRecord> peers;
  // Read from a Prometheus server instead of a segment (ops is then empty): the share of the
  // query's window this rank spent inside the communicator's operations (rate of
  // fabscope_job_operation_seconds_sum), -1 when not known; and its oldest operation in flight.
  double busy_fraction = -1;
  std::uint64_t oldest_in_flight_unix_ns = 0;  // 0: none in flight (or not known)
  // The oldest operation in flight: from ops when they are there, else oldest_in_flight_unix_ns.
  std::uint64_t oldest_in_flight_start() const;
};

struct Snapshot {
  std::string source;  // where it was read: "dir /dev/shm", "nodes n1,n2", a file name
  std::vector<RankRecord> ranks;
  std::vector<std::string> errors;  // sources that could not be read ("n3:9100: connection refused")
};

void to_json(json& j, const RankRecord& r);
json snapshot_to_json(const Snapshot& s);
// Reads a document of schema fabscope.job-records (every version up to this one). Throws
// fabscope::Error naming the source, the field and the value.
Snapshot snapshot_from_json(const json& j, std::string_view source);
Snapshot parse_snapshot(std::string_view text, std::string_view source);
// Several documents (one per node) into one snapshot.
void merge(Snapshot& into, Snapshot&& from);

}  // namespace fabscope::job
