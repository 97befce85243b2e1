#pragma once
// The probe mesh of several nodes as one node x node grid (row: the prober, column: the peer it
// probed), from one snapshot per node (MeshDoc: totals since each exporter started). Per series:
// the median and 99th percentile of the RTT, interpolated in the histogram's buckets the way
// Prometheus' histogram_quantile does, and the loss; judged against the runbook's bounds
// (docs/alerts.md). Up to max_blocks names each row and column is one node; past that, runs of
// consecutive names (in natural order) make one block, and a block cell keeps its worst values
// and every mark of the series inside it. Peers summed as "_other" by their prober are one more
// column. Pure: render_mesh.cpp only draws it.
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/model.hpp"

namespace fabscope::report {

// histogram_quantile(q, ...) over one series' cumulative buckets (le, count), +Inf among them:
// the bucket holding the q-th observation is found and the value interpolated linearly between
// its bounds (from 0 for the first bucket); in the +Inf bucket, the largest finite bound. nullopt
// where Prometheus gives NaN: no +Inf bucket, fewer than two buckets, no observation, q NaN.
std::optional<double> histogram_quantile(double q, std::vector<std::pair<double, double>> buckets);

// The runbook's p99 bound for a transport label: rdma_ib 5 µs, rdma_roce 10 µs, tcp 1 ms
// (deploy/prometheus/fabscope-mesh-rules.yml); nullopt for another label.
std::optional<double> mesh_rtt_bound_seconds(const std::string& transport);
// Loss above this (0.01%) is marked, as FabscopeMeshLoss fires.
inline constexpr double kMeshLossBound = 0.0001;

// One series judged.
struct MeshPair {
  std::size_t prober = 0;  // index into MeshGrid::names
  std::size_t peer = 0;    // index into MeshGrid::names, or names.size() for "_other"
  std::string peer_label;  // as the prober listed it
  std::string transport;
  std::optional<double> p50_s, p99_s;  // nullopt: no answered probe in the histogram
  double rtt_count = 0;                // answered probes in the histogram
  double sent = 0, answered = 0, lost = 0;
  std::optional<double> loss;          // lost / (answered + lost); nullopt: no probe finished
  std::optional<double> up;
  std::optional<double> bound_s;       // mesh_rtt_bound_seconds(transport)
  bool slow = false;                   // p99 above bound_s
  bool lossy = false;                  // loss above kMeshLossBound
  bool no_answer = false;              // probes sent, none answered
};

// The loss of a series: lost = the probe errors of every reason, over answered + lost (a probe
// under way counts in neither, as fabscope:mesh_loss:ratio_rate5m); without error series,
// 1 - answered / sent.
MeshPair judge_mesh_series(const MeshSeries& s);

struct MeshCell {
  std::size_t row = 0, col = 0;  // block indexes; col == blocks.size() is the "_other" column
  std::vector<std::size_t> pairs;  // into MeshGrid::pairs
  std::optional<double> p50_s, p99_s;  // the largest over the pairs (a block: its worst)
  std::optional<double> loss;          // the largest
  double rtt_count = 0, sent = 0, answered = 0, lost = 0;
  bool slow = false, lossy = false;
  bool no_answer = false;  // no pair in it has an answered probe
};

struct MeshBlock {
  std::vector<std::size_t> names;  // indexes into MeshGrid::names, consecutive
  bool snapshot = false;           // one of them gave a snapshot (the row has data)
};

struct MeshGrid {
  std::vector<std::string> names;       // probers and the peers they listed, natural order
  std::vector<int> snapshot_of;         // per name: index of its snapshot among those given, -1 none
  std::vector<MeshBlock> blocks;        // rows, and the first columns
  std::size_t block = 1;                // names per block (the last may hold fewer)
  bool other = false;                   // some prober has an "_other" series: one more column
  std::vector<MeshPair> pairs;          // every series of every snapshot kept
  std::vector<MeshCell> cells;          // only cells with a series, row-major
  std::vector<std::string> notes;       // snapshots left out (a node given twice)
  std::size_t snapshots = 0;            // kept
};

// `inputs`: the mesh inputs in command-line order. A peer is the node whose name equals its label,
// else whose name equals it without ":PORT", else (for host names, not addresses) whose short
// name (up to the first '.') equals the label's, when exactly one does; any other peer is a name
// of its own (a column without a snapshot row).
MeshGrid build_mesh_grid(const std::vector<const Input*>& inputs, std::size_t max_blocks = 64);

// The latency colour scale: 9 steps, dark = slow, whose edges hold the runbook's bounds
// (5 µs, 10 µs, 1 ms): up to 5 µs, 5-10, 10-20, 20-50, 50-100, 100-200 µs, 0.2-1 ms, 1-10 ms, above
// 10 ms; a value on an edge is in the lower step (a bucket's `le` includes its bound, the alerts
// fire above it).
const std::vector<double>& mesh_scale_edges_seconds();  // the 8 edges
int mesh_bin(double seconds);                           // 0 (fastest) .. 8

// "4.2 µs", "830 µs", "1.25 ms", "2 s": three significant digits.
std::string format_seconds(double s);

}  // namespace fabscope::report
