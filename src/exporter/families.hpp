#pragma once
// Metric families built from probe values: per RDMA port, per node, per check, and the exporter's
// own. Pure functions: the exporter's main loop reads sysfs and passes the values in. Every name,
// type, label and unit is documented in docs/metrics.md.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/finding.hpp"
#include "core/node_info.hpp"
#include "core/metrics.hpp"

namespace fabscope::exporter {

// A counters/* file with a name of its own (IBA PortCounters and PortCountersExtended).
struct KnownCounter {
  const char* file;    // "symbol_error"
  const char* metric;  // "fabscope_port_symbol_errors_total"
  const char* help;
};
const std::vector<KnownCounter>& known_counters();

// Per port: counters, state, rate, info. counters/* files without a name of their own go to
// fabscope_port_extra_events_total{counter=...}, every hw_counters/* file to
// fabscope_port_hw_events_total{counter=...}.
std::vector<MetricFamily> port_families(const std::vector<RdmaDevice>& devices);

// MTU of each netdev an RDMA port carries (netdev name -> bytes).
MetricFamily netdev_mtu_family(const std::map<std::string, int>& mtu_bytes);

// Facts from the slower full probe: GPU count, peer-memory module, the GPUs' NVLinks and how each
// pair of GPUs connects (NVML; empty without GPUs, and NVML is then not loaded).
struct NodeFacts {
  std::optional<int> gpus;
  std::optional<bool> peermem_loaded;
  std::vector<Gpu> gpu_links;           // the GPUs with their nvlinks and NVLink counters
  std::vector<GpuPair> gpu_topology;
};
std::vector<MetricFamily> node_families(const NodeFacts& facts);
// fabscope_gpu_nvlink_* and fabscope_gpu_pair_nvlinks: per link state, info, errors and bytes,
// per GPU bytes over all links, per pair the NVLinks joining it. Families without samples when
// no GPU reports NVLinks.
std::vector<MetricFamily> nvlink_families(const std::vector<Gpu>& gpus, const std::vector<GpuPair>& pairs);

// Check verdicts: 0 ok (no finding above info), 1 warn, 2 fail, worst over subjects.
int check_status(Severity worst);
struct CheckResults {
  std::vector<std::string> ids;  // every check id of the registry
  std::vector<Finding> findings;
  double duration_seconds = 0;
  double timestamp_seconds = 0;  // Unix time of the run
};
// One fabscope_check_status sample per id (findings with an id outside ids get one too).
std::vector<MetricFamily> check_families(const CheckResults& results);

// The exporter's own metrics.
struct SelfStats {
  double scrape_duration_seconds = 0;
  std::map<std::string, std::uint64_t> scrape_errors_total;  // reason -> count
  std::map<std::string, std::uint64_t> read_problems_total;  // probe note kind -> count
  std::map<std::string, std::uint64_t> values_unread;        // probe note kind -> values not read now
  std::uint64_t http_requests_total = 0;
  std::uint64_t http_rejected_total = 0;  // bad method, path, headers, size, timeout
  std::uint64_t http_connections_evicted_total = 0;
  std::uint64_t http_connections_open = 0;
  std::string version;
};
std::vector<MetricFamily> self_families(const SelfStats& stats);

// Reasons counted in fabscope_scrape_errors_total{reason}. Always rendered, 0 included, so an
// alert on increase() sees the series from the first scrape.
inline constexpr const char* kErrorRead = "read";  // a file vanished mid-read, or a value newly unread
inline constexpr const char* kErrorCounterBackwards = "counter_backwards";  // reset or wrap
inline constexpr const char* kErrorChecks = "checks";             // the full probe or checks failed

}  // namespace fabscope::exporter
