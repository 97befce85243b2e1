// versions.*: NCCL version and HCA firmware consistency.
#include <map>
#include <optional>
#include <set>

#include "checks/families.hpp"
#include "core/root.hpp"

namespace fabscope::checks {

namespace {

// NCCL 2.14 is the oldest release we judge as current enough: older ones lack fixes for
// RoCE and multi-NIC topologies that later checks and env plans rely on.
constexpr int kMinMajor = 2, kMinMinor = 14;

// (major, minor) from "2.27.3", else from ncclGetVersion()'s code: major*10000 + minor*100 +
// patch since 2.9, major*1000 + minor*100 + patch before.
std::optional<std::pair<int, int>> nccl_major_minor(const Versions& v) {
  if (!v.nccl.empty()) {
    auto parts = core::split(v.nccl, '.');
    if (parts.size() >= 2) {
      auto ma = core::parse_int(parts[0]), mi = core::parse_int(parts[1]);
      if (ma && mi && *ma >= 0 && *ma < 100 && *mi >= 0 && *mi < 100)
        return std::pair<int, int>{static_cast<int>(*ma), static_cast<int>(*mi)};
    }
  }
  if (v.nccl_code && *v.nccl_code > 0) {
    int c = *v.nccl_code;
    if (c >= 10000) return std::pair<int, int>{c / 10000, (c % 10000) / 100};
    return std::pair<int, int>{c / 1000, (c % 1000) / 100};
  }
  return std::nullopt;
}

void nccl(const NodeInfo& node, std::vector<Finding>& out) {
  auto mm = nccl_major_minor(node.versions);
  if (!mm || *mm >= std::pair<int, int>{kMinMajor, kMinMinor}) return;
  std::string shown = node.versions.nccl.empty()
                          ? std::to_string(mm->first) + "." + std::to_string(mm->second)
                          : node.versions.nccl;
  out.push_back(make_finding(
      "versions.nccl_old", Severity::Warn, "node",
      "NCCL " + shown + " is older than 2.14: it misses years of fixes for RoCE GID selection, "
      "multi-NIC topologies and GPUDirect RDMA, and newer GPUs",
      "ncclGetVersion: nccl=\"" + node.versions.nccl + "\" code=" +
          (node.versions.nccl_code ? std::to_string(*node.versions.nccl_code) : std::string("unknown")),
      "install a current libnccl2 (NVIDIA's CUDA repository, or the NCCL that ships with the framework, "
      "e.g. the nvidia-nccl-cu12 wheel) and check which libnccl.so.2 the job loads (NCCL_DEBUG=INFO)"));
}

void firmware(const NodeInfo& node, std::vector<Finding>& out) {
  std::map<std::string, std::map<std::string, std::string>> by_type;  // hca_type -> device -> fw
  for (const auto& d : node.rdma_devices)
    if (!d.hca_type.empty() && !d.fw_ver.empty()) by_type[d.hca_type][d.name] = d.fw_ver;
  for (const auto& [type, devs] : by_type) {
    std::set<std::string> versions;
    std::string evidence;
    for (const auto& [name, fw] : devs) {
      versions.insert(fw);
      evidence += (evidence.empty() ? "" : " ") + name + "=" + fw;
    }
    if (versions.size() < 2) continue;
    out.push_back(make_finding(
        "versions.fw_mismatch", Severity::Warn, "hca_type " + type,
        std::to_string(versions.size()) + " firmware versions among the " + std::to_string(devs.size()) + " " +
            type + " HCAs: they may differ in behaviour and performance (and a fleet upgrade stopped half way)",
        "fw_ver: " + evidence,
        "flash every " + type + " HCA to the same firmware (mlxfwmanager --query lists them; "
        "mlxfwmanager -u, then reboot or mlxfwreset)"));
  }
}

}  // namespace

std::vector<Finding> check_versions(const NodeInfo& node) {
  std::vector<Finding> out;
  nccl(node, out);
  firmware(node, out);
  return out;
}

}  // namespace fabscope::checks
