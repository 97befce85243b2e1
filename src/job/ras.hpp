#pragma once
// NCCL's own view of a running job: a client of the RAS service every NCCL process (2.24 and
// later) runs, and a reader of its report.
//
// The service listens on NCCL_RAS_ADDR (localhost:28028 unless set) and speaks lines of text:
//   client: CLIENT PROTOCOL 2          server: SERVER PROTOCOL 2
//   client: TIMEOUT <s>  (optional)    server: OK        (the gathering's per-leg time-out)
//   client: SET FORMAT json (2.28.7+)  server: OK        (older servers: ERROR: Unknown command ...)
//   client: STATUS | VERBOSE STATUS    server: the report, then it closes the connection
// The report (text: job summary, communicator groups, an Errors and a Warnings section; JSON:
// every communicator with every rank's state and operation counts) is what the process that
// answers gathered from every process of the job, so one connection on any node sees the job.
//
// ras_fetch does the I/O (bounded in time and bytes); parse_ras_report and ras_findings are pure.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/finding.hpp"
#include "core/json.hpp"

namespace fabscope::job {

inline constexpr const char* kRasSchema = "fabscope.job-ras";
inline constexpr int kRasSchemaVersion = 1;
inline constexpr int kRasDefaultPort = 28028;

struct RasQueryOptions {
  std::string address = "localhost:28028";  // "host:port", "[v6]:port", "host", or a bare port
  // The whole exchange. The server answers after gathering from every process: up to its per-leg
  // time-out (5 s by default) plus 5 s more when a process does not answer, hence 15.
  double timeout_s = 15;
  bool verbose = false;  // VERBOSE STATUS: NCCL lists more of the ranks that stand out
  std::size_t max_bytes = 8 << 20;
  int collective_timeout_s = 0;  // 0: the server's default; else sent as TIMEOUT (never 0: no limit)
  // "text" (every 2.24+ server), "json" (2.28.7+; an error from older ones) or "auto" (JSON
  // where the server knows it, else text).
  std::string format = "text";
};

struct RasEndpoint {
  std::string host;
  int port = kRasDefaultPort;
};
// "host:port", "[v6]:port", "host", "v6::addr" (no port), or a bare port (localhost). Throws
// fabscope::Error naming the text.
RasEndpoint parse_ras_address(std::string_view text);

// Connects, speaks the protocol and returns the report's bytes as the server sent them. Throws
// fabscope::Error naming the address and what happened: refused, no answer, not a RAS server
// (its first line quoted), timed out after N bytes, closed before the report's end, too large.
std::string ras_fetch(const RasQueryOptions& options);

// One process of the job as RAS names it.
struct RasProcess {
  int pid = -1;
  std::string host;  // the address NCCL prints (an IP)
  std::string gpus;  // "0", "0,1", "2 (NVML 5)"
};

// One rank RAS names in a section, with what it says of it.
struct RasRank {
  int rank = -1;
  std::string gpu;  // CUDA device, "3" or "3 (NVML 5)"; "" when not given
  int pid = -1;
  std::string host;
  std::string state;      // the status ("INIT"), the error ("Remote process error"), "not responding"
  std::int64_t ops = -1;  // in an operation-count group: the count it launched up to (0: none)
};

// Ranks of a communicator that share one count of an operation kind.
struct RasOpGroup {
  std::uint64_t count = 0;  // launched up to operation `count` (0: none launched)
  int nranks = 0;
  std::vector<RasRank> ranks;  // those NCCL lists (it lists the few that stand out)
};

struct RasOpMismatch {
  std::string op;  // "AllReduce"
  std::vector<RasOpGroup> groups;
  std::uint64_t max_count() const;
  int ranks_behind() const;  // ranks of the groups below the highest count
};

struct RasComm {
  std::string hash;         // NCCL's communicator hash, 16 hex digits
  std::string label;        // the text report's "#group-index"; "" from JSON
  int size = -1;            // ranks of the communicator; -1 when not known
  int ranks_reported = -1;  // ranks RAS has data of (JSON)
  int missing = 0;          // ranks RAS has no data of (their process did not answer)
  std::vector<RasRank> missing_ranks;
  int nocomm = 0;  // ranks whose process answered but no longer has the communicator
  int init_errors = 0, async_errors = 0;
  std::vector<RasRank> error_ranks;       // state = the error
  std::vector<std::string> error_counts;  // "3 ranks reported Remote process error"
  bool status_differs = false;
  std::vector<RasRank> status_ranks;       // state = the status NCCL gives the rank
  std::vector<std::string> status_counts;  // "3 ranks have status RUNNING"
  std::vector<RasOpMismatch> op_mismatches;
};

// A row of the text report's communicator table (communicators grouped by size and state).
struct RasCommGroup {
  int group = -1, comms = 0, nodes = 0;
  std::string ranks_per_node;  // "4" or "2-4"
  int ranks_per_comm = 0, ranks_in_group = 0;
  std::string status, errors;  // "RUNNING", "OK" / "INCOMPLETE,MISMATCH"
};

struct RasReport {
  std::string source;
  std::string format;          // "text" or "json"
  bool complete = false;       // the report's end was read (text: its Warnings section; JSON: parsed)
  bool json_repaired = false;  // JSON with a missing comma restored (NCCL 2.28.7-2.28.9)
  std::string nccl_version, cuda_compiled;
  int cuda_runtime = -1, cuda_driver = -1;
  int nodes = -1, processes = -1, gpus = -1;  // the job summary's totals
  double collection_s = -1;                   // how long the server gathered
  int timeouts = 0;                           // communication time-outs while gathering
  int processes_missing = 0;                  // processes that sent no data (the job-level INCOMPLETE)
  std::vector<RasProcess> missing_processes;
  int processes_dead = 0;  // processes RAS considers dead (unreachable)
  std::vector<RasProcess> dead_processes;
  std::vector<RasCommGroup> groups;
  int comms_total = -1;               // communicators in the report (JSON); the groups' sum for text
  std::vector<RasComm> comms;         // the communicators named (text: those with errors; JSON: all)
  std::vector<std::string> warnings;  // the Errors and Warnings sections' lines, as printed
  std::vector<std::string> other;     // lines not understood, kept (cut) rather than dropped
};

// Reads a report in text or JSON (told apart by its first character). Never throws for the
// content: a line it does not understand goes to `other`, numbers out of range are dropped,
// strings are made printable and cut, every list is bounded.
RasReport parse_ras_report(std::string_view text, std::string_view source);

// job.ras_missing (Fail): processes or ranks RAS has no data of, or considers dead.
// job.ras_mismatch (Warn): ranks of a communicator differ in operation counts or status.
// job.ras_error (Warn): initialization or asynchronous errors, time-outs while gathering, a
// report that ended early.
std::vector<Finding> ras_findings(const RasReport& report);

// One line for a human: "NCCL 2.28.9 (text report): 1 node, 2 processes, 2 GPUs, 1 communicator,
// gathered in 0.000 s" (the parts the report had).
std::string ras_summary(const RasReport& report);

// {"schema": "fabscope.job-ras", "schema_version": 1, ...}: the report as read.
json ras_report_to_json(const RasReport& report);

}  // namespace fabscope::job
