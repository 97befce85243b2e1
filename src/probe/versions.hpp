#pragma once
// Versions of the GPU and communication stack: the NVIDIA kernel driver from sysfs/procfs, and
// on a live node NCCL (libnccl.so.2) and the CUDA driver (libcuda.so.1) through dlopen, so one
// binary runs on nodes with or without them.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/node_info.hpp"
#include "core/root.hpp"

namespace fabscope::probe {

Versions collect_versions(const core::Root& root, bool live, std::vector<std::string>& notes);

// "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ..." ->
// "580.159.04"; "" when no version number follows "Kernel Module".
std::string parse_nvrm_version(std::string_view text);

// ncclGetVersion() code -> "2.27.3" (22703; before 2.9 the code was 1000*major + 100*minor + patch).
std::string nccl_version_string(int code);
// cuDriverGetVersion() / NVML CUDA version code -> "13.0" (13000) or "12.4" (12040).
std::string cuda_version_string(int code);

}  // namespace fabscope::probe
