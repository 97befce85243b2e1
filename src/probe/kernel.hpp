#pragma once
// Kernel facts from procfs: release, loaded modules, command line, the sysctls a cluster
// engineer checks for RDMA and NCCL, and the memlock limit.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/node_info.hpp"
#include "core/root.hpp"

namespace fabscope::probe {

// rdma_netdevs: interfaces that carry RDMA ports; their per-interface rp_filter/arp_* are read
// too, because the kernel applies max(all, iface) for rp_filter and per-interface arp_ignore.
KernelInfo collect_kernel(const core::Root& root, std::vector<std::string>& notes,
                          const std::vector<std::string>& rdma_netdevs = {});

// The sysctls read, as dotted names (proc/sys/net/core/rmem_max = "net.core.rmem_max").
const std::vector<std::string>& known_sysctls();

// Module names, the first field of each proc/modules line.
std::vector<std::string> parse_modules(std::string_view text);

// "Max locked memory" soft and hard limits from proc/<pid>/limits text, in bytes;
// "unlimited" is kUnlimited. Each is nullopt when missing or garbage.
struct Limit {
  std::optional<std::uint64_t> soft, hard;
};
Limit parse_memlock(std::string_view limits_text);

}  // namespace fabscope::probe
