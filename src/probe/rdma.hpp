#pragma once
// RDMA devices and ports from sys/class/infiniband (one directory per device, ports/<n>/...).
// The exporter calls collect_rdma() on every scrape: it reads each file once and skips the
// GID table walk when the caller does not need it.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/node_info.hpp"
#include "core/root.hpp"
#include "core/verbs_info.hpp"
#include "probe/note.hpp"
#include "probe/port_attrs.hpp"

namespace fabscope::probe {

struct RdmaOptions {
  bool gids = true;      // walk ports/<n>/gids (up to 256 entries per port)
  bool counters = true;  // counters/* and hw_counters/*
};

// Notes follow probe/note.hpp; the port values are parsed by probe/port_attrs.hpp.
std::vector<RdmaDevice> collect_rdma(const core::Root& root, std::vector<Note>& notes, const RdmaOptions& opts = {});
std::vector<RdmaDevice> collect_rdma(const core::Root& root, std::vector<std::string>& notes,
                                     const RdmaOptions& opts = {});

// sysfs has no active-MTU file; libibverbs (ibv_query_port) has. On a live node, takes each
// port's active MTU from verbs where it reported one (InfiniBand ports, and RoCE ports where it
// is the hardware's answer rather than the value derived from the netdev MTU).
void apply_verbs_active_mtu(std::vector<RdmaDevice>& devices, const VerbsInfo& verbs);

// True for ::ffff:a.b.c.d written as sysfs does ("0000:0000:0000:0000:0000:ffff:0a00:0001").
bool is_ipv4_mapped_gid(std::string_view gid);
// True for an all-zero GID (an unused table slot).
bool is_zero_gid(std::string_view gid);

// RoCE active MTU the kernel derives from a netdev MTU (bytes), or nullopt below 256.
std::optional<int> roce_mtu_for_netdev_mtu(int netdev_mtu);

// The GID index NCCL picks by default on RoCE: the first RoCE v2 entry with an IPv4-mapped
// address, else the first RoCE v2 entry. nullopt when the port has none.
std::optional<int> preferred_roce_v2_gid(const RdmaPort& port);

}  // namespace fabscope::probe
