#pragma once
// What holds a running job back, judged from its ranks' records (records.hpp): pure, no I/O.
//
// The straggler. In a collective every rank leaves together, so the rank that entered last spends
// the least time inside it; the others wait for it. For each communicator the analysis takes the
// last collectives that every rank read has completed, finds in each the rank with the least time
// inside it, and names a rank when it is that rank in far more of them than chance allows (a
// binomial test against 1/ranks) and the others' wait is worth naming (a share of the window's
// wall time). Only durations are compared across ranks, each measured on its own GPU's (or host's)
// clock: no common clock across hosts is needed. Ranks on one host also share a time base (the
// GPUs' global timers follow the host's clock): the analysis reports how late each one's GPU
// started the collectives compared with its host's other ranks, a second witness.
//
// The hang. A communicator in which some rank has had an operation in flight for the hang time
// and no rank completed one in that time; the ranks behind are those that started fewer
// operations than the others (they never entered the one the others wait in), and the ranks whose
// process is stopped (a SIGSTOP or a debugger, read by the node's exporter): a rank stopped inside
// the operation the others wait in has started as many, and only its state tells it apart. A
// stopped rank is named at once, before the hang time; when every live rank read is stopped the
// job was suspended as a whole (scontrol suspend) and nothing is a hang.
//
// The slow connection. With the plugin's network steps per peer (FABSCOPE_PROFILER_PROXY=1): the
// sending side's time on the network per step, per (rank, peer); a connection far above the
// communicator's median.
#include <cstdint>
#include <string>
#include <vector>

#include "core/finding.hpp"
#include "core/json.hpp"
#include "job/records.hpp"

namespace fabscope::job {

struct Options {
  std::size_t window = 64;        // the last collectives compared, per communicator
  std::size_t min_ops = 16;       // fewer compared: no straggler verdict yet
  double min_win_share = 0.5;     // the named rank has the least time in at least this share of them
  double max_p = 1e-3;            // chance of that many by luck (binomial, 1/ranks each), over the ranks
  double min_wait_share = 0.05;   // and the others' wait for it is at least this share of the window's time
  // Or, time-weighted: the wait credited to it is at least this share of the wait credited to all
  // ranks (with wait >= min_wait_share as above, and no collective holding half of it). A delay before each
  // step lands in the step's first collectives only; with few ranks the count test cannot tell it
  // from chance in a window of 64, the time the others waited can.
  double min_wait_dominance = 0.8;
  double hang_after_s = 10;       // an operation in flight this long and no rank completed one: a hang
  double slow_link_factor = 3.0;  // a connection's network time per step this many times the median
  std::uint64_t slow_link_min_steps = 32;
};

struct RankStat {
  int rank = 0;
  std::string host, bus_id;
  int gpu = -1, pid = 0;
  bool alive = true;
  std::string process_state;    // as the record says: "running", "stopped", "traced", ...; "" not known
  bool stopped = false;         // alive and stopped or traced
  std::size_t least = 0;        // collectives compared in which it spent the least time inside
  double wait_ns = 0;           // in those: the others' median time minus its own, summed
  double median_ns = 0;         // its median time inside the compared collectives
  bool has_skew = false;
  double skew_ns = 0;           // median GPU start after its host's other ranks (ranks sharing a host)
  double busy_fraction = -1;    // from a Prometheus server: share of the window inside operations
  std::uint64_t started = 0, completed = 0;
  double in_flight_s = -1;      // age of its oldest operation in flight; -1: none
  double idle_s = -1;           // since its last completed operation; -1: none yet
};

// A sending connection (rank -> peer) with the plugin's network steps (FABSCOPE_PROFILER_PROXY=1).
struct Connection {
  int from = 0, to = 0;
  std::uint64_t steps = 0, bytes = 0;
  double per_step_ns = 0;  // time on the network per step (wait_ns / steps)
  double gbps = 0;         // bytes over that time: the rate while on the network
};

struct CommView {
  std::string job_id, comm, comm_name;
  int nranks = 0;
  std::vector<RankStat> ranks;  // the ranks read, by rank
  std::vector<int> missing;     // ranks of the communicator with no record (at most 64 listed)
  std::size_t compared = 0;     // collectives compared
  double window_s = 0;          // wall time they span (median over the ranks, each on its clock)
  int straggler = -1;           // the rank named, -1: none
  double straggler_p = 1;       // the binomial tail of its count
  double wait_share = 0;        // the others' wait for the most-least rank, share of window_s
  bool hung = false;
  bool suspended = false;       // every live rank read is stopped: the whole job was stopped
  std::vector<int> stopped;     // live ranks whose process is stopped (not when suspended)
  std::vector<int> behind;      // in a hang: the ranks behind (started fewer, or ended), as named
  std::vector<Connection> connections;  // sending connections with at least slow_link_min_steps steps
  double connection_median_ns = 0;      // their median time per step (0: fewer than 3 connections)
  int slow_from = -1, slow_to = -1;     // the connection named job.slow_link, -1: none
  std::string verdict;          // one line: "rank 3 (host gpu-07, GPU 3) holds the others back ..."
};

struct Analysis {
  std::vector<CommView> comms;
  std::vector<Finding> findings;  // worst first
};

Analysis analyze(const Snapshot& snapshot, const Options& options = {});

// The median of v (the mean of the middle two for an even count); 0 when empty.
double median_of(std::vector<double> v);

// P(X >= k) for X ~ Binomial(n, p).
double binomial_tail(std::size_t k, std::size_t n, double p);

inline constexpr const char* kAnalysisSchema = "fabscope.job";
inline constexpr int kAnalysisSchemaVersion = 1;
json analysis_to_json(const Analysis& a, const Snapshot& snapshot, const Options& options);

}  // namespace fabscope::job
