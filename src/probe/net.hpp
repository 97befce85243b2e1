#pragma once
// Network interfaces from sys/class/net: MTU, state, speed, type, backing PCI function, and
// which RDMA ports they carry (from the ports' netdev, found by the RDMA collector).
#include <string>
#include <vector>

#include "core/node_info.hpp"
#include "core/root.hpp"

namespace fabscope::probe {

std::vector<Netdev> collect_netdevs(const core::Root& root, std::vector<std::string>& notes);

// Fills Netdev::rdma_ports ("mlx5_0:1") from RdmaPort::netdev.
void link_rdma_ports(const std::vector<RdmaDevice>& rdma, std::vector<Netdev>& netdevs);

}  // namespace fabscope::probe
