#pragma once
// The theoretical limit of the path a run's data takes, and a plain-language verdict on the
// best bus bandwidth measured against it. Pure: the topology and environment come in as values.
#include <optional>
#include <string>
#include <vector>

#include "bench/results.hpp"
#include "core/node_info.hpp"

namespace fabscope::bench {

// One direction of one NVLink link in GB/s. NVLink 2, 3 and 4 (V100, A100, H100/H200) carry
// 25 GB/s per direction per link; NVLink 5 (Blackwell) 50; NVLink 1 (P100) 20. The NVML
// version, when known, is nvmlDeviceGetNvLinkVersion's answer (an nvmlNvlinkVersion_t: driver
// 580 answers 6 on H200, NVLink 4.0); the GPU name settles NVLink 5.
std::optional<double> nvlink_link_rate(const std::string& gpu_name, std::optional<unsigned> nvml_version,
                                       std::string& source);

// GPUs, NVLink links, NICs on this node; `used_pci` are the PCI addresses of the GPUs the run
// used (the smallest active link count among them is kept).
Topology topology_from(const NodeInfo& node, const std::vector<std::string>& used_pci, int nodes,
                       std::optional<unsigned> nvml_nvlink_version);

// The path limit for a run of nranks ranks over `nodes` nodes. env: the NCCL_* variables of the
// run (NCCL_P2P_DISABLE=1 takes NVLink out of the path).
PathLimit path_limit(const Topology& t, int nranks, const std::map<std::string, std::string>& nccl_env);

// Sets summary.limit, efficiency, verdict_level and verdict. Call after summarise().
void judge(Report& r);

}  // namespace fabscope::bench
