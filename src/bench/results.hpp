#pragma once
// Results of one `fabscope bench` run as plain values, with their JSON form
// (schema "fabscope.bench", version 2; docs/bench.md).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/options.hpp"
#include "core/json.hpp"

namespace fabscope::bench {

// -I: per-iteration times (CUDA events around each timed iteration, the largest over ranks) and
// their statistics, as nccl-tests computes them (nearest-rank percentiles, population stdev).
struct IterStats {
  int skipped = 0;                 // leading iterations left out of the statistics (-K)
  double min_us = 0, max_us = 0, avg_us = 0, p50_us = 0, p95_us = 0, p99_us = 0, stdev_us = 0;
  double cv_pct = 0;               // stdev / avg
  std::vector<double> times_us;    // every timed iteration, skipped ones included
};
// Statistics of times_us[skip..]; an empty range gives zeros.
IterStats iter_stats(std::vector<double> times_us, int skip);

// One placement (out-of-place or in-place) of one size.
struct Timing {
  double time_us = 0;     // time of one iteration (timer and -a of the settings)
  double cpu_time_us = -1;  // host time to queue one call (wall timer); < 0 unknown
  double algbw_gbytes_per_s = 0;  // size / time (1 GB = 1e9 B, as nccl-tests)
  double busbw_gbytes_per_s = 0;  // algbw * the collective's factor
  std::optional<std::int64_t> wrong;  // elements differing from the reference, all ranks; null: not checked
  std::int64_t iterations = 0;        // timed iterations
  int batches = 0;
  double rel_ci = -1;     // half-width of the 95% CI / mean; < 0 unknown (fixed mode)
  std::optional<IterStats> per_iter;  // -I
};

struct SizeResult {
  std::uint64_t bytes = 0;  // the size column: count * type size
  std::uint64_t count = 0;  // elements (nccl-tests' count column)
  int cycle = 0;            // -N: which run of the sweep (0-based)
  Timing out_of_place;
  std::optional<Timing> in_place;  // null where a run did not time it
};

// Speed and algbw/busbw from the algbw bytes (algbw_bytes() of collectives.hpp) and a time: the
// formulas of docs/bench.md.
Timing make_timing(const CollectiveDesc& d, int nranks, std::uint64_t bytes, double time_us);

struct DeviceInfo {
  int rank = 0;
  std::string host;
  int pid = 0;
  int cuda_device = 0;
  std::string pci_bus_id;  // "0000:00:06.0"
  std::string name;        // "NVIDIA H200"
};

struct Nic {
  std::string name;  // "mlx5_0:1" (RDMA port) or netdev
  double rate_gbps = 0;
};

struct Topology {
  int gpus = 0;                        // GPUs on this node (probe)
  std::optional<int> nvlink_active;    // active NVLink links per GPU (smallest of the GPUs used)
  std::optional<double> nvlink_link_gbytes_per_s;  // one direction of one link
  std::string nvlink_rate_source;      // "NVML NVLink version 4" | "GPU name" | ""
  std::vector<Nic> nics;               // active RDMA ports with their rate
  int nodes = 1;                       // nodes in the job (from the launcher), 1 when unknown
};

struct Environment {
  std::string hostname;
  std::string launcher;   // "local", "mpi", "torchrun"
  std::string launch_evidence;
  int nranks = 0;
  int processes = 1;
  std::string nccl_version;
  std::string cuda_driver;
  std::string cuda_runtime;
  std::string nvidia_driver;
  std::string fabscope_version;
  std::map<std::string, std::string> nccl_env;  // NCCL_* variables set for the run
  std::string date_utc;
};

struct PathLimit {
  std::optional<double> gbytes_per_s;  // theoretical busbw limit of the path, one direction
  std::string path;                    // "NVLink", "network", "" unknown
  std::string description;             // "18 NVLink links x 25 GB/s"
};

struct Summary {
  std::int64_t wrong_total = 0;
  bool checked = false;
  double avg_busbw = 0;     // nccl-tests' "Avg bus bandwidth": mean over sizes and placements
  double peak_busbw = 0;
  std::uint64_t peak_bytes = 0;
  PathLimit limit;
  std::optional<double> efficiency;  // peak_busbw / limit
  std::string verdict_level;  // "good" | "fair" | "low" | "unknown"
  std::string verdict;        // one plain sentence or two
  double sweep_s = 0;         // wall time of the sweep (first size to last)
};

struct Report {
  static constexpr int kSchemaVersion = 2;
  Options options;
  Environment env;
  Topology topo;
  std::vector<DeviceInfo> devices;
  std::vector<SizeResult> results;
  Summary summary;
  // Options::compute_load_pct > 0: the share of the run's wall time the first GPU had the load
  // kernel running (gpu/compute_load.hpp); -1 without a load.
  double compute_load_busy_share = -1;
};

// Fills wrong_total, averages, peak; the limit and verdict come from efficiency.hpp.
void summarise(Report& r);

void to_json(json& j, const IterStats& v);
void to_json(json& j, const Timing& v);
void to_json(json& j, const SizeResult& v);
void to_json(json& j, const DeviceInfo& v);
void to_json(json& j, const Topology& v);
void to_json(json& j, const Environment& v);
void to_json(json& j, const Summary& v);
json settings_json(const Options& o);
json report_json(const Report& r);

}  // namespace fabscope::bench
