#pragma once
// fabscope_job_* families from the profiler segments of a node's running jobs: a pure function over
// decoded segments (docs/metrics.md "Running jobs"). Every series of a communicator carries the
// labels job_id, host, comm, rank and gpu (not `job`: Prometheus sets that one to the scrape job); aggregates add op and size.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "exporter/job_segment.hpp"
#include "core/metrics.hpp"

namespace fabscope::exporter {

struct JobProcess {
  JobSegment segment;
  bool alive = true;  // false: the process ended; its series stay for the grace period
  // The writer's scheduling state from /proc/<pid>/stat, read only where that pid is the writer
  // (its start time equals the segment's): 'R', 'S', 'D', 'T' (stopped by a signal), 't'
  // (stopped by a tracer), ...; 0 when not known (another pid namespace, no /proc, ended).
  char state = 0;
  bool stopped() const { return alive && (state == 'T' || state == 't'); }
};

// "running", "stopped" (T), "traced" (t), "uninterruptible" (D), "zombie" (Z), "" for 0 or an
// unknown letter: the words job records carry.
const char* job_process_state_word(char state);

struct JobScrapeStats {
  std::map<std::string, std::uint64_t> skipped_total;  // reason -> segments skipped, since start
  std::uint64_t removed_total = 0;                     // ended processes' segments removed
};

// max_aggregates bounds the (communicator, op, size) series of the node; the rest are left out
// and counted in fabscope_job_series_dropped.
std::vector<MetricFamily> job_families(const std::vector<JobProcess>& processes, const JobScrapeStats& stats,
                                       std::size_t max_aggregates);

// The same series as render_text(job_families(...)), written straight into out: what a scrape
// serves (no metric model is built; label sets are escaped once per communicator).
void job_text(const std::vector<JobProcess>& processes, const JobScrapeStats& stats, std::size_t max_aggregates,
              std::string& out);

// busbw factor of an op on nranks ranks, from the bench's descriptors (nccl-tests' factors);
// Send and Recv count as sendrecv (1), an op outside them 0.
double job_busbw_factor(unsigned op, int nranks);

// Histogram bounds in seconds for fabscope_job_operation_seconds: 4^k microseconds, k = 0..12.
const std::vector<double>& job_duration_bounds();

}  // namespace fabscope::exporter
