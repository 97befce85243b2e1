#include "probe/verbs.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "probe/ibverbs.hpp"
#ifdef FABSCOPE_IBVERBS_HEADER
#include <net/if.h>
#endif

namespace fabscope::probe {

std::optional<int> verbs_mtu_bytes(int ibv_mtu) {
  if (ibv_mtu < 1 || ibv_mtu > 5) return std::nullopt;
  return 128 << ibv_mtu;
}

std::string verbs_port_state_name(int state) {
  static const char* const names[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};
  return state >= 0 && state < 6 ? names[state] : "";
}

std::string verbs_phys_state_name(int phys_state) {
  // drivers/infiniband/core/sysfs.c, phys_state_to_str(): the names sysfs writes after "N: ".
  static const char* const names[] = {"",       "Sleep",  "Polling",
                                      "Disabled", "PortConfigurationTraining", "LinkUp",
                                      "LinkErrorRecovery", "Phy Test"};
  return phys_state >= 1 && phys_state < 8 ? names[phys_state] : "";
}

std::string verbs_link_layer_name(int link_layer) {
  // IBV_LINK_LAYER_UNSPECIFIED (0) comes from providers that predate the field: IB ports.
  if (link_layer == 0 || link_layer == 1) return "InfiniBand";
  if (link_layer == 2) return "Ethernet";
  return "";
}

std::string verbs_gid_type_name(int type) {
  static const char* const names[] = {"IB", "RoCE v1", "RoCE v2"};
  return type >= 0 && type < 3 ? names[type] : "";
}

std::optional<double> verbs_rate_gbps(int active_width, int active_speed) {
  // drivers/infiniband/core/sysfs.c, rate_show(): per-lane rate in units of 0.1 Gb/s, times
  // the lane count. FDR counts as 14 and FDR10 as 10, so verbs and sysfs agree exactly.
  int lanes = 0;
  switch (active_width) {
    case 1: lanes = 1; break;
    case 2: lanes = 4; break;
    case 4: lanes = 8; break;
    case 8: lanes = 12; break;
    case 16: lanes = 2; break;
    default: return std::nullopt;
  }
  int tenths = 0;
  switch (active_speed) {
    case 1: tenths = 25; break;
    case 2: tenths = 50; break;
    case 4: tenths = 100; break;
    case 8: tenths = 100; break;
    case 16: tenths = 140; break;
    case 32: tenths = 250; break;
    case 64: tenths = 500; break;
    case 128: tenths = 1000; break;
    default: return std::nullopt;
  }
  return tenths * lanes / 10.0;
}

std::string format_gid(const std::uint8_t (&raw)[16]) {
  // Eight groups of four hex digits, as sysfs gids/N shows them. Built digit by digit: the
  // earlier snprintf into an offset buffer aborted under a fortified libc on the GPU node.
  static const char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(39);
  for (int i = 0; i < 16; ++i) {
    if (i > 0 && i % 2 == 0) out += ':';
    out += hex[raw[i] >> 4];
    out += hex[raw[i] & 0xf];
  }
  return out;
}

std::string format_guid_be(std::uint64_t guid_be) {
  std::uint8_t b[8];
  std::memcpy(b, &guid_be, sizeof b);
  char buf[20];
  std::snprintf(buf, sizeof buf, "%02x%02x:%02x%02x:%02x%02x:%02x%02x", b[0], b[1], b[2], b[3], b[4],
                b[5], b[6], b[7]);
  return buf;
}

#ifndef FABSCOPE_IBVERBS_HEADER

VerbsInfo collect_verbs() {
  VerbsInfo info;
  info.status = "not built in: fabscope was built without libibverbs-dev (infiniband/verbs.h)";
  return info;
}

#else

namespace {

using Lib = IbverbsLib;

VerbsPort read_port(const ibv_port_attr& a, int port) {
  VerbsPort p;
  p.port = port;
  p.state_code = a.state;
  p.state = verbs_port_state_name(a.state);
  p.phys_state_code = a.phys_state;
  p.phys_state = verbs_phys_state_name(a.phys_state);
  p.link_layer = verbs_link_layer_name(a.link_layer);
  p.active_mtu = verbs_mtu_bytes(a.active_mtu);
  p.max_mtu = verbs_mtu_bytes(a.max_mtu);
  p.lid = a.lid;
  p.sm_lid = a.sm_lid;
  p.rate_gbps = verbs_rate_gbps(a.active_width, a.active_speed);
  p.gid_tbl_len = a.gid_tbl_len;
  return p;
}

bool is_zero(const ibv_gid& g) {
  for (auto b : g.raw)
    if (b) return false;
  return true;
}

void read_gids(const Lib& lib, ibv_context* ctx, VerbsDevice& dev) {
  std::size_t total = 0;
  for (const auto& p : dev.ports) total += static_cast<std::size_t>(std::max(p.gid_tbl_len, 0));
  if (total == 0) return;
  if (lib.query_gid_table) {
    std::vector<ibv_gid_entry> entries(total);
    ssize_t n = lib.query_gid_table(ctx, entries.data(), entries.size(), 0, sizeof(ibv_gid_entry));
    if (n >= 0) {
      for (ssize_t i = 0; i < n; ++i) {
        const auto& e = entries[static_cast<std::size_t>(i)];
        if (is_zero(e.gid)) continue;
        for (auto& p : dev.ports) {
          if (p.port != static_cast<int>(e.port_num)) continue;
          VerbsGid g;
          g.index = static_cast<int>(e.gid_index);
          g.gid = format_gid(e.gid.raw);
          g.type = verbs_gid_type_name(static_cast<int>(e.gid_type));
          char name[IF_NAMESIZE] = {};
          if (e.ndev_ifindex && if_indextoname(e.ndev_ifindex, name)) g.netdev = name;
          p.gids.push_back(std::move(g));
        }
      }
      for (auto& p : dev.ports)
        std::sort(p.gids.begin(), p.gids.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
      return;
    }
  }
  // rdma-core before v31 has no GID table query: entries without type or netdev.
  if (!lib.query_gid) return;
  for (auto& p : dev.ports) {
    for (int i = 0; i < p.gid_tbl_len; ++i) {
      ibv_gid gid{};
      if (lib.query_gid(ctx, static_cast<uint8_t>(p.port), i, &gid) != 0 || is_zero(gid)) continue;
      VerbsGid g;
      g.index = i;
      g.gid = format_gid(gid.raw);
      p.gids.push_back(std::move(g));
    }
  }
}

VerbsDevice read_device(const Lib& lib, ibv_device* d) {
  VerbsDevice dev;
  const char* name = lib.get_device_name(d);
  dev.name = name ? name : "";
  ibv_context* ctx = lib.open_device(d);
  if (!ctx) {
    // EACCES/ENOENT here usually means /dev/infiniband/uverbsN is missing or not readable.
    int err = errno;
    dev.error = std::string("ibv_open_device failed: ") + std::strerror(err);
    if (err == EACCES || err == EPERM)
      dev.error += " (/dev/infiniband/uverbs* not readable as this user; rdma-core's udev rules make it 0666)";
    return dev;
  }
  ibv_device_attr attr{};
  if (int rc = lib.query_device(ctx, &attr); rc != 0) {
    dev.error = std::string("ibv_query_device failed: ") + std::strerror(rc);
    lib.close_device(ctx);
    return dev;
  }
  dev.node_guid = format_guid_be(attr.node_guid);
  dev.fw_ver = attr.fw_ver;
  dev.vendor_id = attr.vendor_id;
  dev.vendor_part_id = attr.vendor_part_id;
  for (int port = 1; port <= attr.phys_port_cnt; ++port) {
    ibv_port_attr pa;
    if (int rc = lib.query_port(ctx, static_cast<uint8_t>(port), pa); rc != 0) {
      dev.error = "ibv_query_port(" + std::to_string(port) + ") failed: " + std::strerror(rc);
      continue;
    }
    dev.ports.push_back(read_port(pa, port));
  }
  read_gids(lib, ctx, dev);
  lib.close_device(ctx);
  return dev;
}

}  // namespace

VerbsInfo collect_verbs() {
  VerbsInfo info;
  const Lib& lib = ibverbs();
  if (!lib.error.empty()) {
    info.status = lib.error;
    return info;
  }
  if (!lib.has_device_queries()) {
    info.status = "libibverbs.so.1 lacks ibv_get_device_list/ibv_open_device/ibv_query_device";
    return info;
  }
  int n = 0;
  ibv_device** list = lib.get_device_list(&n);
  if (!list) {
    // ENOSYS: the kernel has no uverbs (ib_uverbs not loaded); not an error on a node without RDMA.
    info.available = true;
    info.status = std::string("ibv_get_device_list failed: ") + std::strerror(errno);
    return info;
  }
  info.available = true;
  for (int i = 0; i < n; ++i) info.devices.push_back(read_device(lib, list[i]));
  lib.free_device_list(list);
  info.status = "libibverbs.so.1: " + std::to_string(n) + " device(s)";
  return info;
}

#endif

}  // namespace fabscope::probe
