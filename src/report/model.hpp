#pragma once
// What `fabscope report` reads, as plain values: one Input per file given, whatever wrote it.
// Loading (load.hpp) fills these from JSON or nccl-tests text; rendering (render.hpp) turns
// them into HTML and never reads a file.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/saved_result.hpp"
#include "core/finding.hpp"
#include "fabric/model.hpp"
#include "rdma/types.hpp"
#include "tune/saved_result.hpp"

namespace fabscope::report {

// `fabscope check --json` or `fabscope doctor --json`: one node's findings.
struct NodeDoc {
  std::string hostname;
  std::string verdict;    // doctor: "healthy" | "degraded" | "broken"; check: "" (see worst)
  std::string transport;  // doctor only
  std::optional<int> gpus, rdma_devices;  // doctor only
  std::vector<Finding> findings;
  std::vector<std::string> next_steps;    // doctor only
  std::vector<std::string> probe_notes;
  int fail = 0, warn = 0, info = 0;
  std::string worst;      // "ok" | "info" | "warn" | "fail"
};

// One placement of one size, as nccl-tests prints it.
struct Placement {
  double time_us = 0;
  double algbw_gbytes_per_s = 0;
  double busbw_gbytes_per_s = 0;
  std::optional<std::int64_t> wrong;  // null: not checked (N/A), or an old "error" column
};

struct BenchRow {
  int cycle = 0;  // bench -N: which repetition of the sweep (0-based)
  std::uint64_t size_bytes = 0;
  std::uint64_t count = 0;
  Placement out_of_place;
  std::optional<Placement> in_place;  // null where in-place is not defined (alltoall, sendrecv)
};

// One benchmark sweep: a `fabscope bench --json` file or one table of an nccl-tests output.
struct BenchRun {
  std::string source;       // "fabscope bench" | "nccl-tests"
  std::string collective;   // "all_reduce" (nccl-tests: from "alltoall_perf" etc. when printed)
  std::string datatype, op;
  std::optional<int> nranks;
  std::optional<int> nodes;
  std::string hosts;        // "h200x2", or "ztan-mig-235z, ztan-mig-gq73"
  std::string gpu_name;     // first device's name
  std::string nccl_version, cuda_driver, nvidia_driver, tool_version;
  std::string date_utc;
  std::vector<BenchRow> rows;
  // fabscope bench only: the path's theoretical busbw limit and its verdict.
  std::optional<double> limit_gbytes_per_s;
  std::string limit_path, limit_description;
  std::string verdict_level, verdict;
  std::optional<std::int64_t> wrong_total;
  double avg_busbw_gbytes_per_s = 0;  // as the tool printed it (nccl-tests: its summary line)
  // fabscope bench only: the peak its summary states (bench/results.cpp: no peak for one rank).
  std::optional<double> peak_busbw_gbytes_per_s;
  std::uint64_t peak_size_bytes = 0;
};

// A run's peak busbw as the report shows it: the bench's own where its file states it; otherwise
// (nccl-tests output) the highest busbw of any size and placement, by the bench's rule: one rank
// moves nothing over a link and has no peak (known false).
struct BenchPeak {
  bool known = false;
  double busbw_gbytes_per_s = 0;
  std::uint64_t size_bytes = 0;
};
BenchPeak bench_peak(const BenchRun& b);

// `fabscope tune --json` (fabscope.tune) is read as the tune module's tune::SavedResult
// (tune/saved_result.hpp): the run, the table rows written and the bucket advice.

// `fabscope cluster --json` (fabscope.cluster) is read as the cluster module's
// cluster::SavedResult (cluster/saved_result.hpp).

// `fabscope rdma --json` (fabscope.rdma) is read as the rdma module's rdma::Result
// (rdma/types.hpp).

// `fabscope fabric --save` or `--json` (fabscope.fabric): the swept subnet, read by the subnet
// library's own reader; --json adds the findings fabric judged (a --save file has none).
struct FabricDoc {
  fabric::Subnet subnet;
  bool judged = false;            // the file carries `findings` (fabric --json)
  std::vector<Finding> findings;
  int fail = 0, warn = 0, info = 0;
  std::string worst;              // judged only
};

// One node's probe mesh (`fabscope exporter --mesh`), from its saved /metrics text or the same
// series as fabscope.metrics JSON: per peer and transport, the totals since that
// exporter started.
struct MeshSeries {
  std::string peer;       // as the node lists it: "node07", "10.0.0.7", "host:PORT", or "_other"
  std::string transport;  // "tcp", "rdma_ib", "rdma_roce"
  std::vector<std::pair<double, double>> buckets;  // (le, cumulative count), le ascending, +Inf last
  std::optional<double> rtt_count, rtt_sum_seconds;
  std::optional<double> sent, answered;
  std::map<std::string, double> errors;  // reason -> probes without an answer
  std::optional<double> up;              // fabscope_mesh_peer_up: absent before the first probe
};

struct MeshDoc {
  std::string node;                // the prober: the file's label, or the NAME of --mesh NAME=FILE
  std::string format;              // "text" (Prometheus exposition) or "json" (fabscope.metrics)
  std::vector<MeshSeries> series;  // in (peer, transport) order
  std::optional<double> peers_listed, peer_label_limit;
};

// One node's running jobs (`fabscope exporter --jobs`, fed by the NCCL profiler plugin), from its
// saved /metrics text or the same series as fabscope.metrics JSON: per rank of each communicator,
// the totals since that process started.
struct JobAggSeries {  // one (op, size class) of one rank: the series with op and size labels
  std::string op;               // "AllReduce", ..., as the exporter names it
  std::uint64_t size_bytes = 0; // the size class's lower bound (label size): 1048576 for 1-2 MiB
  std::optional<double> operations, bytes, bus_bytes;           // ..._total counters
  std::optional<double> seconds_sum, seconds_count;             // fabscope_job_operation_seconds
  std::vector<std::pair<double, double>> buckets;               // (le, cumulative count), +Inf last
};

struct JobNetSeries {  // fabscope_job_network_*: steps to or from one peer rank
  int peer = 0;
  std::string direction;  // "send" or "recv"
  std::optional<double> steps, bytes, step_seconds, wait_seconds;
};

struct JobRank {  // one rank of one communicator, as one node's exporter served it
  std::string job, host, comm, gpu;  // labels job_id, host, comm, gpu; comm: 16 hex digits
  int rank = 0;
  std::string where;                 // "FILE:LINE" of its first series
  bool info = false;                 // fabscope_job_comm_info was there
  std::string comm_name, state;      // state: "active" or "finalized"
  std::optional<int> nranks;
  std::optional<long long> pid;
  std::optional<double> started, completed, in_flight;
  std::optional<double> last_progress_unix_s;      // 0: none yet
  std::optional<double> oldest_in_flight_unix_s;   // absent: none in flight
  std::vector<JobAggSeries> aggs;                  // (op, size) order
  std::vector<JobNetSeries> net;                   // (peer, direction) order
};

struct JobDoc {
  std::string node;              // the NAME of --job NAME=FILE, else the file's label
  std::string format;            // "text" (Prometheus exposition) or "json" (fabscope.metrics)
  std::vector<JobRank> ranks;    // (job_id, comm, rank) order
};

enum class InputKind { Node, Bench, Tune, Cluster, Rdma, Fabric, Mesh, Job };

struct Input {
  std::string file;     // as given on the command line
  std::string label;    // short name in legends: the file name without directory and extension
  std::string schema;   // "fabscope.check", "fabscope.bench", "fabscope.cluster", ..., "nccl-tests", "prometheus-text"
  int schema_version = 0;
  InputKind kind = InputKind::Node;
  NodeDoc node;         // kind == Node
  BenchRun bench;       // kind == Bench
  tune::SavedResult tune;  // kind == Tune
  cluster::SavedResult cluster;  // kind == Cluster
  rdma::Result rdma;    // kind == Rdma
  FabricDoc fabric;     // kind == Fabric
  MeshDoc mesh;         // kind == Mesh
  JobDoc job;           // kind == Job
};

struct Report {
  std::string title = "fabscope report";
  std::string generated_utc;  // "2026-11-23T15:00:00Z"; "" leaves it out
  std::string docs_url;       // base prepended to "docs/checks.md#..." links; "": default_docs_url()
  std::vector<Input> inputs;
};

}  // namespace fabscope::report
