#pragma once
// NVIDIA GPUs: found on PCI (vendor 0x10de, VGA 0x0300xx or 3D 0x0302xx) always; named from the
// driver's proc/driver/nvidia/gpus/<bus id>/information when present; and on a live node
// enriched from NVML (libnvidia-ml.so.1, dlopen) with name, UUID and NVLink state.
#include <string>
#include <string_view>
#include <vector>

#include "core/node_info.hpp"
#include "core/root.hpp"

namespace fabscope::probe {

bool is_nvidia_gpu(const PciDevice& d);

// GPUs in PCI bus order (the order nvidia-smi lists them), index 0..n-1.
std::vector<Gpu> collect_gpus(const core::Root& root, const std::vector<PciDevice>& pci,
                              std::vector<std::string>& notes);

// "Model: \t NVIDIA H200\nGPU UUID: \t GPU-c118..." -> name and uuid ("" when absent).
struct DriverGpuInfo {
  std::string name, uuid;
};
DriverGpuInfo parse_driver_gpu_information(std::string_view text);

// Live only: name, UUID, each GPU's NVLinks (state, version, remote end, error and throughput
// counters; probe/nvlink.hpp) and the CUDA driver version NVML reports (fills
// versions.cuda_driver when empty); with nvml_pairs, NVML's view of every pair of GPUs (NVLinks,
// common PCIe ancestor, P2P status) for gpu_topology. Silently does nothing without NVML, and
// does not load it when gpus is empty.
void enrich_from_nvml(std::vector<Gpu>& gpus, Versions& versions, std::vector<std::string>& notes,
                      std::vector<GpuPair>* nvml_pairs = nullptr);

}  // namespace fabscope::probe
