#include "bench/efficiency.hpp"

#include <algorithm>
#include <cstdio>

#include "bench/sizes.hpp"
#include "core/strings.hpp"

namespace fabscope::bench {

namespace {
bool contains(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

std::string pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", v * 100);
  return buf;
}

std::string gbs(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f GB/s", v);
  return buf;
}
}  // namespace

std::optional<double> nvlink_link_rate(const std::string& gpu_name, std::optional<unsigned> nvml_version,
                                       std::string& source) {
  // Blackwell first: its NVML version numbering differs between driver branches.
  for (const char* b : {"B100", "B200", "B300", "GB200", "GB300"})
    if (contains(gpu_name, b)) {
      source = "GPU name (NVLink 5)";
      return 50.0;
    }
  if (nvml_version) {
    if (*nvml_version == 1) {
      source = "NVML NVLink version 1";
      return 20.0;
    }
    if (*nvml_version >= 2 && *nvml_version <= 6) {
      source = "NVML NVLink version " + std::to_string(*nvml_version);
      return 25.0;
    }
  }
  for (const char* g : {"H100", "H200", "H800", "H20", "GH200", "A100", "A800", "V100"})
    if (contains(gpu_name, g)) {
      source = "GPU name";
      return 25.0;
    }
  source = "";
  return std::nullopt;
}

Topology topology_from(const NodeInfo& node, const std::vector<std::string>& used_pci, int nodes,
                       std::optional<unsigned> nvml_nvlink_version) {
  Topology t;
  t.gpus = static_cast<int>(node.gpus.size());
  t.nodes = nodes < 1 ? 1 : nodes;
  std::string name;
  for (const auto& g : node.gpus) {
    bool used = used_pci.empty();
    for (const auto& u : used_pci)
      if (core::lower(u) == core::lower(g.pci_address)) used = true;
    if (!used) continue;
    if (name.empty()) name = g.name;
    if (g.nvlink_active) t.nvlink_active = t.nvlink_active ? std::min(*t.nvlink_active, *g.nvlink_active) : *g.nvlink_active;
  }
  if (t.nvlink_active && *t.nvlink_active > 0) {
    std::string source;
    t.nvlink_link_gbytes_per_s = nvlink_link_rate(name, nvml_nvlink_version, source);
    t.nvlink_rate_source = source;
  }
  for (const auto& dev : node.rdma_devices)
    for (const auto& p : dev.ports)
      if (p.state == "ACTIVE" && p.rate_gbps && *p.rate_gbps > 0)
        t.nics.push_back({dev.name + ":" + std::to_string(p.port), *p.rate_gbps});
  return t;
}

PathLimit path_limit(const Topology& t, int nranks, const std::map<std::string, std::string>& env) {
  PathLimit l;
  if (nranks < 2) {
    l.description = "one rank: no data crosses a link";
    return l;
  }
  if (t.nodes > 1) {
    if (t.nics.empty()) {
      l.path = "network";
      l.description = "several nodes, but no active RDMA port was found on this node";
      return l;
    }
    double slowest = t.nics.front().rate_gbps;
    for (const auto& n : t.nics) slowest = std::min(slowest, n.rate_gbps);
    l.path = "network";
    l.gbytes_per_s = slowest / 8.0;
    char buf[128];
    std::snprintf(buf, sizeof buf, "%.0f Gb/s per NIC, one NIC per GPU assumed", slowest);
    l.description = buf;
    return l;
  }
  auto v = [&](const char* k) -> std::string {
    auto it = env.find(k);
    return it == env.end() ? "" : it->second;
  };
  if (v("NCCL_P2P_DISABLE") == "1" || v("NCCL_P2P_LEVEL") == "LOC") {
    l.description = "NCCL_P2P_DISABLE=1: data goes through host memory or sockets, whose rate is not known";
    return l;
  }
  if (!t.nvlink_active || *t.nvlink_active == 0) {
    l.description = "no active NVLink: the GPUs talk over PCIe, whose usable rate is not computed";
    return l;
  }
  if (!t.nvlink_link_gbytes_per_s) {
    l.path = "NVLink";
    l.description = std::to_string(*t.nvlink_active) + " active links of unknown rate";
    return l;
  }
  l.path = "NVLink";
  l.gbytes_per_s = *t.nvlink_active * *t.nvlink_link_gbytes_per_s;
  char buf[128];
  std::snprintf(buf, sizeof buf, "%d links x %g GB/s", *t.nvlink_active, *t.nvlink_link_gbytes_per_s);
  l.description = buf;
  return l;
}

void judge(Report& r) {
  Summary& s = r.summary;
  s.limit = path_limit(r.topo, r.env.nranks, r.env.nccl_env);
  s.efficiency.reset();
  if (!s.limit.gbytes_per_s || *s.limit.gbytes_per_s <= 0 || r.results.empty()) {
    s.verdict_level = "unknown";
    s.verdict = "no verdict: " + (s.limit.description.empty() ? std::string("the path's limit is unknown")
                                                              : s.limit.description) + ".";
    return;
  }
  double eff = s.peak_busbw / *s.limit.gbytes_per_s;
  s.efficiency = eff;
  std::string where = "the best bus bandwidth, " + gbs(s.peak_busbw) + " at " + size_label(s.peak_bytes) + ", is " +
                      pct(eff) + " of the " + s.limit.path + " limit (" + gbs(*s.limit.gbytes_per_s) + ")";
  if (eff >= 0.70) {
    s.verdict_level = "good";
    s.verdict = "good: " + where + "; NCCL usually reaches 70-85% of the link rate with large messages.";
  } else if (eff >= 0.50) {
    s.verdict_level = "fair";
    s.verdict = "fair: " + where + ", below the 70-85% NCCL usually reaches.";
  } else {
    s.verdict_level = "low";
    s.verdict = "low: " + where + ". Check for links down (fabscope probe), NCCL_P2P_*/NCCL_PROTO/NCCL_ALGO "
                "settings, other jobs on the GPUs, and NCCL_DEBUG=INFO for the transport used.";
  }
  std::uint64_t largest = 0;
  for (const auto& res : r.results) largest = std::max(largest, res.bytes);
  if (largest < (1ull << 30) && s.verdict_level != "good")
    s.verdict += " The sweep ends at " + size_label(largest) +
                 "; bus bandwidth keeps growing up to about 1 GiB, so run up to -e 1G before judging.";
}

}  // namespace fabscope::bench
