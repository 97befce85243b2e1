#pragma once
// NodeInfo values for the check tests: a healthy two-rail node, built value by value so each test
// changes one fact. Shaped like a common 8-GPU server cut down to two GPU/HCA pairs: each GPU and
// its HCA under one PCIe switch, the two switches on different root complexes.
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "core/finding.hpp"

#include "core/node_info.hpp"

namespace fabscope::testing {

inline PciDevice pci(const std::string& addr, const std::string& rc, std::vector<std::string> upstream,
                     bool bridge = false) {
  PciDevice d;
  d.address = addr;
  d.root_complex = rc;
  d.upstream = std::move(upstream);
  d.is_bridge = bridge;
  if (bridge) d.acs_enabled = false;
  d.current_link_speed_gts = d.max_link_speed_gts = 32.0;
  d.current_link_width = d.max_link_width = 16;
  return d;
}

inline RdmaPort ib_port(double gbps, const std::string& rate) {
  RdmaPort p;
  p.port = 1;
  p.state = "ACTIVE";
  p.state_code = 4;
  p.phys_state = "LinkUp";
  p.phys_state_code = 5;
  p.rate = rate;
  p.rate_gbps = gbps;
  p.link_layer = "InfiniBand";
  p.counters = {{"symbol_error", 0}, {"link_downed", 0}, {"link_error_recovery", 0}, {"port_rcv_errors", 0}};
  return p;
}

inline RdmaDevice hca(const std::string& name, const std::string& pci_address, RdmaPort port) {
  RdmaDevice d;
  d.name = name;
  d.hca_type = "MT4129";
  d.fw_ver = "28.39.1002";
  d.pci_address = pci_address;
  d.ports.push_back(std::move(port));
  return d;
}

// Two GPUs, two NDR InfiniBand HCAs, each pair under its own PCIe switch; peermem loaded, memlock
// unlimited, 64 MiB socket buffers, no IOMMU options, NCCL 2.21.5. run() finds nothing.
inline NodeInfo healthy_ib_node() {
  NodeInfo n;
  n.hostname = "node1";
  struct Block {
    std::string rc, bus, nic, gpu;
  };
  for (const auto& b : {Block{"pci0000:15", "15", "0000:17:00.0", "0000:18:00.0"},
                        Block{"pci0000:64", "64", "0000:65:00.0", "0000:66:00.0"}}) {
    const std::string root_port = "0000:" + b.bus + ":01.0", up = "0000:" + b.bus + ":02.0";
    const std::string down_nic = "0000:" + b.bus + ":03.0", down_gpu = "0000:" + b.bus + ":04.0";
    n.pci_devices.push_back(pci(root_port, b.rc, {}, true));
    n.pci_devices.push_back(pci(up, b.rc, {root_port}, true));
    n.pci_devices.push_back(pci(down_nic, b.rc, {root_port, up}, true));
    n.pci_devices.push_back(pci(down_gpu, b.rc, {root_port, up}, true));
    n.pci_devices.push_back(pci(b.nic, b.rc, {root_port, up, down_nic}));
    n.pci_devices.push_back(pci(b.gpu, b.rc, {root_port, up, down_gpu}));
  }
  n.rdma_devices.push_back(hca("mlx5_0", "0000:17:00.0", ib_port(400, "400 Gb/sec (4X NDR)")));
  n.rdma_devices.push_back(hca("mlx5_1", "0000:65:00.0", ib_port(400, "400 Gb/sec (4X NDR)")));
  for (int i = 0; i < 2; ++i) {
    Gpu g;
    g.index = i;
    g.pci_address = i == 0 ? "0000:18:00.0" : "0000:66:00.0";
    g.name = "NVIDIA H100 80GB HBM3";
    n.gpus.push_back(g);
  }
  n.gpu_nic_affinity = {{"0000:18:00.0", "mlx5_0", "PIX"}, {"0000:18:00.0", "mlx5_1", "SYS"},
                        {"0000:66:00.0", "mlx5_0", "SYS"}, {"0000:66:00.0", "mlx5_1", "PIX"}};
  n.kernel.release = "6.8.0-60-generic";
  n.kernel.modules = {"ib_core", "ib_uverbs", "mlx5_core", "mlx5_ib", "nvidia", "nvidia_peermem", "nvidia_uvm"};
  n.kernel.cmdline = "BOOT_IMAGE=/boot/vmlinuz-6.8.0-60-generic root=/dev/sda2 ro quiet";
  n.kernel.sysctls = {{"net.core.rmem_max", "67108864"}, {"net.core.wmem_max", "67108864"}};
  n.kernel.memlock_soft_bytes = n.kernel.memlock_hard_bytes = kUnlimited;
  n.versions.nvidia_driver = "570.124.06";
  n.versions.nccl = "2.21.5";
  n.versions.nccl_code = 22105;
  return n;
}

inline GidEntry gid(int index, const std::string& type, bool ipv4, const std::string& netdev) {
  GidEntry g;
  g.index = index;
  g.type = type;
  g.ipv4_mapped = ipv4;
  g.netdev = netdev;
  g.gid = ipv4 ? "0000:0000:0000:0000:0000:ffff:0a00:000" + std::to_string(index)
               : "fe80:0000:0000:0000:0000:00ff:fe00:000" + std::to_string(index);
  return g;
}

// The same node on RoCE: Ethernet ports on eth2/eth3 at MTU 9000 (active MTU 4096), GID tables
// as mlx5 lays them out (v1 and v2 of the link-local address, then v1 and v2 of the IPv4 one).
inline NodeInfo healthy_roce_node() {
  NodeInfo n = healthy_ib_node();
  int i = 2;
  for (auto& d : n.rdma_devices) {
    auto& p = d.ports.at(0);
    const std::string nd = "eth" + std::to_string(i++);
    p.link_layer = "Ethernet";
    p.rate = "400 Gb/sec (4X NDR)";
    p.netdev = nd;
    p.active_mtu = 4096;
    p.gids = {gid(0, "IB/RoCE v1", false, nd), gid(1, "RoCE v2", false, nd), gid(2, "IB/RoCE v1", true, nd),
              gid(3, "RoCE v2", true, nd)};
    Netdev net;
    net.name = nd;
    net.mtu = 9000;
    net.operstate = "up";
    net.type = 1;
    net.pci_address = d.pci_address;
    net.rdma_ports = {d.name + ":1"};
    n.netdevs.push_back(net);
  }
  return n;
}

inline RdmaPort& port0(NodeInfo& n, const std::string& dev) {
  for (auto& d : n.rdma_devices)
    if (d.name == dev) return d.ports.at(0);
  throw std::runtime_error("no device " + dev);
}

inline Netdev& netdev(NodeInfo& n, const std::string& name) {
  for (auto& d : n.netdevs)
    if (d.name == name) return d;
  throw std::runtime_error("no netdev " + name);
}

inline PciDevice& pci_dev(NodeInfo& n, const std::string& addr) {
  for (auto& d : n.pci_devices)
    if (d.address == addr) return d;
  throw std::runtime_error("no pci device " + addr);
}

inline std::vector<Finding> with_id(const std::vector<Finding>& fs, const std::string& id) {
  std::vector<Finding> out;
  for (const auto& f : fs)
    if (f.id == id) out.push_back(f);
  return out;
}

}  // namespace fabscope::testing
