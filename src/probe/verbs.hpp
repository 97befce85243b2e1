#pragma once
// Live verbs collector: devices, ports and GIDs as libibverbs reports them (ibv_query_device,
// ibv_query_port, ibv_query_gid_ex), a second source beside sysfs (probe/rdma.cpp).
//
// libibverbs.so.1 is dlopen'ed at run time, so one fabscope binary runs on nodes without
// rdma-core; the types come from libibverbs-dev's <infiniband/verbs.h> at build time, and a
// build without that header reports verbs as unavailable. Never throws.
#include <cstdint>
#include <optional>
#include <string>

#include "core/verbs_info.hpp"

namespace fabscope::probe {

VerbsInfo collect_verbs();

// Pure translations of verbs values to the spellings sysfs uses (tested without a device).

// enum ibv_mtu 1..5 -> 256..4096 bytes.
std::optional<int> verbs_mtu_bytes(int ibv_mtu);
// enum ibv_port_state -> "NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"; "" if unknown.
std::string verbs_port_state_name(int state);
// IBTA PortPhysicalState 1..7 -> the names drivers/infiniband/core/sysfs.c writes; "" if unknown.
std::string verbs_phys_state_name(int phys_state);
// IBV_LINK_LAYER_*: 0 unspecified (IB), 1 InfiniBand, 2 Ethernet.
std::string verbs_link_layer_name(int link_layer);
// IBV_GID_TYPE_*: 0 IB, 1 RoCE v1, 2 RoCE v2.
std::string verbs_gid_type_name(int type);
// active_width (1,2,4,8,16) x active_speed (1..256) -> Gb/s as the kernel's rate_show computes;
// nullopt for codes it does not know.
std::optional<double> verbs_rate_gbps(int active_width, int active_speed);
// 16 raw GID bytes -> "0000:0000:...:0001" (sysfs gids/N spelling).
std::string format_gid(const std::uint8_t (&raw)[16]);
// A GUID as ibv_query_device returns it (network byte order) -> "94c8:d9ff:fe9b:183a".
std::string format_guid_be(std::uint64_t guid_be);

}  // namespace fabscope::probe
