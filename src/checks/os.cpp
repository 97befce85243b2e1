// os.*: kernel and process settings that RDMA and NCCL depend on.
#include <optional>

#include "checks/families.hpp"
#include "core/root.hpp"
#include "core/table.hpp"

namespace fabscope::checks {

namespace {

constexpr std::uint64_t kSocketBufferMin = 16ull << 20;  // 16 MiB

std::string limit_text(std::optional<std::uint64_t> v) {
  if (!v) return "unknown";
  if (*v == kUnlimited) return "unlimited";
  return core::format_bytes(static_cast<double>(*v)) + " (" + std::to_string(*v) + " bytes)";
}

void memlock(const NodeInfo& node, std::vector<Finding>& out) {
  const auto& k = node.kernel;
  if (node.rdma_devices.empty() || !k.memlock_soft_bytes || *k.memlock_soft_bytes == kUnlimited) return;
  out.push_back(make_finding(
      "os.memlock_limited", Severity::Warn, "node",
      "locked-memory limit is " + limit_text(k.memlock_soft_bytes) +
          ", not unlimited: RDMA registers (pins) every communication buffer, and NCCL fails with "
          "'Cannot allocate memory' once the limit is reached (the limit read is the probing process's; "
          "check it where jobs start)",
      "proc/self/limits Max locked memory soft=" + limit_text(k.memlock_soft_bytes) +
          " hard=" + limit_text(k.memlock_hard_bytes),
      "set memlock unlimited for jobs: '* - memlock unlimited' in /etc/security/limits.d/, "
      "LimitMEMLOCK=infinity for systemd services (slurmd too), docker run --ulimit memlock=-1"));
}

void socket_buffers(const NodeInfo& node, std::vector<Finding>& out) {
  std::string low, evidence;
  for (const char* key : {"net.core.rmem_max", "net.core.wmem_max"}) {
    auto it = node.kernel.sysctls.find(key);
    if (it == node.kernel.sysctls.end()) continue;
    auto v = core::parse_u64(it->second);
    if (!v) continue;
    evidence += (evidence.empty() ? "" : " ") + std::string(key) + "=" + it->second;
    if (*v < kSocketBufferMin) low += (low.empty() ? "" : " and ") + std::string(key);
  }
  if (low.empty()) return;
  const bool sockets_carry_data = node.rdma_devices.empty();
  out.push_back(make_finding(
      "os.socket_buffers_small", Severity::Warn, "node",
      low + " below 16 MiB: TCP windows stay small on fast links, which slows NCCL's socket transport" +
          std::string(sockets_carry_data ? " (this node has no RDMA device, so sockets carry all "
                                           "inter-node NCCL traffic)"
                                         : " and bootstrap"),
      evidence,
      "sysctl -w net.core.rmem_max=67108864 net.core.wmem_max=67108864, and persist both in "
      "/etc/sysctl.d/90-fabscope.conf"));
}

// Boolean kernel parameter values as the kernel's kstrtobool accepts them.
bool is_on(const std::string& v) { return v == "1" || v == "on" || v == "y" || v == "Y" || v == "yes"; }

void iommu(const NodeInfo& node, std::vector<Finding>& out) {
  const std::string& cmdline = node.kernel.cmdline;
  if (cmdline.empty()) return;
  std::string on, pt;
  for (const auto& w : core::split_ws(cmdline)) {
    if (w == "--") break;  // what follows is for init, not the kernel
    if (w == "intel_iommu=on" || w == "amd_iommu=on") on = w;
    if (w == "intel_iommu=off" || w == "amd_iommu=off") on.clear();
    if (w == "iommu=pt") pt = w;
    if (core::starts_with(w, "iommu.passthrough=") && is_on(w.substr(18))) pt = w;
  }
  if (on.empty() || !pt.empty()) return;
  out.push_back(make_finding(
      "os.iommu_not_passthrough", Severity::Warn, "node",
      "the IOMMU is on (" + on + ") without passthrough: every DMA of the HCA and GPU is translated, "
      "which costs bandwidth and latency and can block GPUDirect peer-to-peer traffic",
      "proc/cmdline: " + on + ", no iommu=pt",
      "add iommu=pt to the kernel command line (GRUB_CMDLINE_LINUX in /etc/default/grub, then "
      "update-grub or grub2-mkconfig, reboot); keep the IOMMU translated only where VMs need it"));
}

}  // namespace

std::vector<Finding> check_os(const NodeInfo& node) {
  std::vector<Finding> out;
  // A node with neither GPUs nor RDMA devices is not a training node: nothing here applies.
  if (node.rdma_devices.empty() && node.gpus.empty()) return out;
  memlock(node, out);
  socket_buffers(node, out);
  iommu(node, out);
  return out;
}

}  // namespace fabscope::checks
