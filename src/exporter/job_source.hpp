#pragma once
// The exporter's job mode (`--jobs`): on every scrape, reads the profiler segments of this node's
// running jobs (plugins/nccl-profiler) from one directory and renders fabscope_job_*.
//
// A segment is read with pread into the exporter's own memory, never mapped: a mapping of a file
// that its owner truncates faults on the next read. Each is checked before it is used: a regular
// file (no link followed), named after the pid in its header, of version 1's exact size, decoded by
// parse_job_segment, owned by the user the header names. A segment that fails is skipped and
// counted by reason; none can make a scrape fail or wait.
//
// Whether its writer still runs is not asked of /proc: the pid is the writer's own (a container's
// pid namespace) and pids are reused. A live writer holds a shared lock (flock) on its segment;
// the kernel drops it when the process ends, however it ends. An exclusive lock that the exporter
// gets at once (LOCK_NB, released right away) means the writer is gone.
//
// Whether a live writer is stopped (SIGSTOP, a debugger) is asked of /proc, and believed only when
// /proc/<pid>/stat's start time (field 22) equals the one the writer put in its header: the same
// process seen from the same pid namespace. Elsewhere the state stays unknown.
//
// A segment whose process ended stays in the output for the grace period, then it is removed
// from the directory (when the exporter may: root, or the same user) and from the output.
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "exporter/job_families.hpp"
#include "job/records.hpp"
#include "core/metrics.hpp"

namespace fabscope::exporter {

struct JobSourceOptions {
  std::string dir = "/dev/shm";       // where the plugin writes (FABSCOPE_PROFILER_DIR)
  double grace_seconds = 60;          // an ended process's series stay this long
  std::size_t max_aggregates = 4096;  // (communicator, op, size) series per node
  std::size_t max_segments = 1024;    // files read per scrape
  std::string proc_dir = "/proc";     // where the writers' states are read
};

// The state letter (field 3) of a /proc/<pid>/stat text when its start time (field 22) is
// start_ticks; 0 when it is another process, or the text is not a stat line.
char stat_state_if_started(std::string_view stat, std::uint64_t start_ticks);

class JobSource {
 public:
  explicit JobSource(JobSourceOptions opts);

  // Reads every segment now. now: steady time, for the grace period.
  std::vector<JobProcess> read(std::chrono::steady_clock::time_point now);
  std::vector<MetricFamily> families();
  // The same series as render_text(families()), appended to out (the scrape's path).
  void text(std::string& out);
  // The segments read now as the job analysis's records, stamped with this node's clock:
  // `fabscope job --dir`; records_json is the same as JSON (schema fabscope.job-records): /jobs.
  job::Snapshot records(std::string source);
  std::string records_json();
  JobScrapeStats stats() const;

 private:
  JobSourceOptions opts_;
  mutable std::mutex mu_;
  JobScrapeStats stats_;
  std::map<std::string, std::chrono::steady_clock::time_point> ended_since_;  // file -> first seen ended
  std::set<std::string> logged_;  // skipped files already said on stderr
};

}  // namespace fabscope::exporter
