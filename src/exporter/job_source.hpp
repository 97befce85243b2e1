#pragma once
// The exporter's job mode (`--jobs`): on every scrape, reads the profiler segments of this node's
// running jobs (plugins/nccl-profiler) from one directory and renders fabscope_job_*.
//
// A segment is read with pread into the exporter's own memory, never mapped: a mapping of a file
// that its owner truncates faults on the next read. Each is checked before it is used: a regular
// file (no link followed), of version 1's exact size, decoded by parse_job_segment, owned by the
// user the header names, and written by a process that is that user's and still the same process
// (its start time in /proc/<pid>/stat matches: pids are reused). A segment that fails is skipped
// and counted by reason; none can make a scrape fail or wait.
//
// A segment whose process ended stays in the output for the grace period, then it is removed
// from the directory (when the exporter may: root, or the same user) and from the output.
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/root.hpp"
#include "exporter/job_families.hpp"
#include "exporter/metrics.hpp"

namespace fabscope::exporter {

struct JobSourceOptions {
  std::string dir = "/dev/shm";       // where the plugin writes (FABSCOPE_PROFILER_DIR)
  double grace_seconds = 60;          // an ended process's series stay this long
  std::size_t max_aggregates = 4096;  // (communicator, op, size) series per node
  std::size_t max_segments = 1024;    // files read per scrape
};

class JobSource {
 public:
  // proc: the root /proc/<pid>/stat and /proc/<pid> are read under (tests: a fixture tree).
  JobSource(core::Root proc, JobSourceOptions opts);

  // Reads every segment now. now: steady time, for the grace period.
  std::vector<JobProcess> read(std::chrono::steady_clock::time_point now);
  std::vector<MetricFamily> families();
  JobScrapeStats stats() const;

 private:
  core::Root proc_;
  JobSourceOptions opts_;
  mutable std::mutex mu_;
  JobScrapeStats stats_;
  std::map<std::string, std::chrono::steady_clock::time_point> ended_since_;  // file -> first seen ended
};

// Field 22 (starttime) of a /proc/<pid>/stat line; nullopt when the line does not have it.
std::optional<std::uint64_t> proc_start_ticks(std::string_view stat_line);

}  // namespace fabscope::exporter
