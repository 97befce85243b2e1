#pragma once
// The running job of several nodes as one view, from one snapshot per node (JobDoc: totals since
// each process started): per job label, per communicator, its ranks (those missing from every
// file listed), and per op a rank x size grid of bus bandwidth (bus bytes / operation seconds) and
// of the p50 and p99 operation time, interpolated in the histogram's buckets as Prometheus'
// histogram_quantile does (mesh.hpp's). A cell more than 10% below its column's median is marked:
// a slow rank shows as a row of marks. Pure: render_job.cpp only draws it.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/model.hpp"

namespace fabscope::report {

// A busbw below this fraction of its column's median is marked.
inline constexpr double kJobBelowMedian = 0.9;

struct JobRankRef {
  const JobRank* rank = nullptr;
  const Input* input = nullptr;  // the file it came from
};

struct JobCell {
  // bus_bytes / seconds_sum / 1e9; nullopt: size 0 or no time. Where fewer operations were timed
  // than counted (the histogram's _count below operations_total: operations without a time, e.g.
  // FABSCOPE_PROFILER_KERNEL=0), the bus bytes are taken in that proportion, the untimed
  // operations' bytes having no seconds in the sum.
  std::optional<double> busbw_gbps;
  std::optional<double> timed;        // the histogram's _count: operations with a time
  std::optional<double> p50_s, p99_s; // histogram_quantile over its buckets
  double operations = 0;
  std::optional<double> ratio;        // busbw / the column's median
  bool below = false;                 // ratio below kJobBelowMedian
  bool present = false;               // the rank has this (op, size)
};

struct JobOpView {
  std::string op;
  std::vector<std::uint64_t> sizes;             // columns: size classes, ascending
  std::vector<std::vector<JobCell>> cells;      // [rank index in JobCommView::ranks][column]
  std::vector<std::optional<double>> median_gbps;  // per column, over the ranks with a busbw
  bool busbw = false;                           // some cell has bus bytes above 0 (the op has a busbw factor)
  std::size_t below = 0;                        // cells marked
  std::vector<std::size_t> below_rows;          // rank indexes with a marked cell, most marks first
  double operations = 0;                        // over every rank and size
};

struct JobCommView {
  std::string job, comm, comm_name;
  std::optional<int> nranks;            // comm_info's; the largest where its ranks disagree
  std::vector<JobRankRef> ranks;        // kept, by rank
  std::vector<int> missing;             // ranks below nranks in no file
  std::vector<std::string> hosts;       // natural order
  double completed_min = 0, completed_max = 0, in_flight = 0;  // completed: over its ranks; in flight: summed
  std::optional<double> progress_oldest_unix_s;  // the least recent last progress among ranks that made some
  int laggard = -1;                     // its rank
  std::size_t no_progress = 0;          // ranks without any completed operation
  std::vector<JobOpView> ops;           // by op name
  bool network = false;                 // some rank has fabscope_job_network_* series
  std::vector<std::string> notes;       // its ranks disagree on nranks or the name
};

struct JobView {
  std::string job;
  std::vector<JobCommView> comms;  // by communicator hash
};

struct JobSection {
  std::vector<JobView> jobs;                     // job labels in natural order
  std::optional<double> newest_progress_unix_s;  // the newest last progress of any rank in the files
  std::size_t files = 0, ranks = 0;              // snapshots, ranks kept
  std::vector<std::string> notes;                // ranks left out: seen in an earlier file
};

// `inputs`: the job inputs in command-line order. A (job, comm, rank) in a second file is left out
// with a note (the first kept).
JobSection build_job_section(const std::vector<const Input*>& inputs);

// The median (the mean of the two middle values for an even count); nullopt when empty.
std::optional<double> job_median(std::vector<double> v);

// The rows of an op's table past max_rows: runs of consecutive ranks (in the comm's order), each
// cell keeping the lowest busbw and the highest p50 and p99 of the block, marked when any cell in
// it is. Up to max_rows every block is one rank.
struct JobBlockCell {
  std::optional<double> busbw_gbps, p50_s, p99_s;
  std::size_t present = 0, below = 0;  // ranks in the block with this size, marked
};
struct JobBlock {
  std::size_t first = 0, last = 0;  // rank indexes, inclusive
  std::vector<JobBlockCell> cells;  // per column
};
std::vector<JobBlock> job_blocks(const JobOpView& op, std::size_t max_rows);

// Ranks as ranges: {0, 3, 4, 5, 9} -> "0, 3-5, 9".
std::string rank_ranges(const std::vector<int>& ranks);

}  // namespace fabscope::report
