#include "probe/probe.hpp"

#include <chrono>
#include <thread>

#include "probe/affinity.hpp"
#include "probe/bonding.hpp"
#include "probe/firewall.hpp"
#include "probe/irq.hpp"
#include "probe/lossless.hpp"
#include "probe/gpu.hpp"
#include "probe/kernel.hpp"
#include "probe/lldp.hpp"
#include "probe/net.hpp"
#include "probe/nvlink.hpp"
#include "probe/pci.hpp"
#include "probe/rdma.hpp"
#include "probe/read_util.hpp"
#include "probe/replay.hpp"
#include "probe/verbs.hpp"
#include "probe/versions.hpp"

namespace fabscope::probe {

NodeInfo collect(const core::Root& root, const Options& opts) {
  NodeInfo info;
  auto& notes = info.probe_notes;
  info.root = root.dir().string();
  info.hostname = root.read_line("proc/sys/kernel/hostname").value_or("");
  if (!is_valid_utf8(info.hostname)) info.hostname.clear();
  if (info.hostname.empty()) notes.push_back("proc/sys/kernel/hostname: unreadable, hostname unknown");
  info.rdma_devices = collect_rdma(root, notes);
  info.netdevs = collect_netdevs(root, notes);
  link_rdma_ports(info.rdma_devices, info.netdevs);
  if (opts.live) fill_ipv4_live(info.netdevs);
  info.pci_devices = collect_pci(root, notes);
  info.gpus = collect_gpus(root, info.pci_devices, notes);
  std::vector<std::string> rdma_netdevs;
  for (const auto& n : info.netdevs)
    if (!n.rdma_ports.empty()) rdma_netdevs.push_back(n.name);
  info.kernel = collect_kernel(root, notes, rdma_netdevs);
  info.versions = collect_versions(root, opts.live, notes);
  std::vector<GpuPair> nvml_pairs;
  if (opts.live) enrich_from_nvml(info.gpus, info.versions, notes, &nvml_pairs);
  if (opts.live) {
    info.verbs = collect_verbs();
    apply_verbs_active_mtu(info.rdma_devices, *info.verbs);
  }
  info.lossless = collect_lossless(root, info.rdma_devices, root.is_live() && opts.live, notes);
  info.bonds = collect_bonds(root, notes);
  info.numa_nodes = collect_numa_nodes(root, notes);
  info.nic_irqs = collect_nic_irqs(root, info.netdevs, info.rdma_devices, info.pci_devices, notes);
  const bool live_tools = root.is_live() && opts.live;
  std::optional<CaptureReplay> replay;
  if (!live_tools) replay = load_capture_replay(root, notes);
  if (replay && replay->live) {
    const ToolRunner kept = replay->runner();
    info.firewall = collect_firewall(true, notes, kept);
    info.lldp = collect_lldp(true, info.netdevs, notes, 5000, kept);
    if (replay->saved) {
      apply_saved_live_facts(*replay->saved, info);
      for (const auto& p : replay->saved->gpu_topology)
        if (p.source == "nvml") nvml_pairs.push_back(p);
    }
  } else {
    info.firewall = collect_firewall(live_tools, notes, opts.run_tool);
    info.lldp = collect_lldp(live_tools, info.netdevs, notes, 5000, opts.run_tool);
  }
  info.gpu_nic_affinity = compute_affinity(info.gpus, info.rdma_devices, info.netdevs, info.pci_devices);
  info.gpu_topology = gpu_topology(info.gpus, info.pci_devices, nvml_pairs);
  return info;
}

TwoProbes collect_twice(const core::Root& root, double seconds) {
  TwoProbes out;
  out.before = collect(root);
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  out.after = collect(root);
  out.elapsed_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace fabscope::probe
