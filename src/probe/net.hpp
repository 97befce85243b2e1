#pragma once
// Network interfaces from sys/class/net: MTU, state, speed, type, backing PCI function, and
// which RDMA ports they carry (from the ports' netdev, found by the RDMA collector).
#include <cstdint>
#include <string>
#include <vector>

#include "core/node_info.hpp"
#include "core/root.hpp"

namespace fabscope::probe {

std::vector<Netdev> collect_netdevs(const core::Root& root, std::vector<std::string>& notes);

// Live only: IPv4 addresses per interface from getifaddrs(), as "10.0.0.1/24", in the order the
// kernel lists them. Interfaces not in the list are ignored.
void fill_ipv4_live(std::vector<Netdev>& netdevs);

// "a.b.c.d/len" from an IPv4 address and netmask (network byte order); "" for a non-contiguous mask.
std::string ipv4_with_prefix(std::uint32_t addr_be, std::uint32_t mask_be);

// Fills Netdev::rdma_ports ("mlx5_0:1") from RdmaPort::netdev.
void link_rdma_ports(const std::vector<RdmaDevice>& rdma, std::vector<Netdev>& netdevs);

}  // namespace fabscope::probe
