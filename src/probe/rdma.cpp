#include "probe/rdma.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>

#include "probe/read_util.hpp"

namespace fabscope::probe {





bool is_zero_gid(std::string_view gid) {
  return !gid.empty() && std::all_of(gid.begin(), gid.end(), [](char c) { return c == '0' || c == ':'; });
}

bool is_ipv4_mapped_gid(std::string_view gid) {
  return gid.size() == 39 && gid.substr(0, 30) == "0000:0000:0000:0000:0000:ffff:";
}

std::optional<int> roce_mtu_for_netdev_mtu(int netdev_mtu) {
  // include/rdma/ib_addr.h, iboe_get_mtu(): the RoCE path MTU is the largest IB MTU that fits
  // in the netdev MTU less the RoCE v2 headers (GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28
  // + ICRC 4 = 96 bytes). This is why RoCE fabrics set MTU 4200 (or 9000) to get 4096.
  int payload = netdev_mtu - 96;
  for (int mtu : {4096, 2048, 1024, 512, 256})
    if (payload >= mtu) return mtu;
  return std::nullopt;
}

std::optional<int> preferred_roce_v2_gid(const RdmaPort& port) {
  std::optional<int> first_v2;
  for (const auto& g : port.gids) {
    if (g.type != "RoCE v2") continue;
    if (g.ipv4_mapped) return g.index;
    if (!first_v2) first_v2 = g.index;
  }
  return first_v2;
}

void apply_verbs_active_mtu(std::vector<RdmaDevice>& devices, const VerbsInfo& verbs) {
  if (!verbs.available) return;
  for (auto& d : devices) {
    const VerbsDevice* vd = verbs.find(d.name);
    if (!vd) continue;
    for (auto& p : d.ports)
      for (const auto& vp : vd->ports)
        if (vp.port == p.port && vp.active_mtu) p.active_mtu = vp.active_mtu;
  }
}

namespace {

void read_counters(NotedReader& r, const std::string& dir, bool words_to_bytes,
                   std::map<std::string, std::uint64_t>& out) {
  const auto& root = r.root();
  std::string path;
  path.reserve(dir.size() + 64);
  for (const auto& name : root.list(dir)) {
    if (!is_valid_utf8(name)) continue;  // not a counter the kernel names
    path.assign(dir).append("/").append(name);
    auto line = r.text(path);
    if (!line) continue;
    if (auto v = parse_counter(path, name, *line, words_to_bytes, r.notes())) out.emplace(name, *v);
  }
}

void read_gids(const core::Root& root, const std::string& port_dir, RdmaPort& port) {
  std::string base = port_dir + "/gids";
  auto names = root.list(base);
  if (names.empty()) return;
  std::vector<int> indices;
  indices.reserve(names.size());
  for (const auto& n : names)
    if (auto i = core::parse_int(n); i && *i >= 0 && *i < 65536) indices.push_back(static_cast<int>(*i));
  std::sort(indices.begin(), indices.end());
  std::string path;
  path.reserve(port_dir.size() + 32);
  for (int i : indices) {
    auto idx = std::to_string(i);
    path.assign(base).append("/").append(idx);
    auto gid = root.read_line(path);
    // Unused slots read as all zeros; reading a slot that vanished fails: both are skipped.
    if (!gid || is_zero_gid(*gid) || !is_valid_utf8(*gid)) continue;
    GidEntry e;
    e.index = i;
    e.gid = std::move(*gid);
    e.ipv4_mapped = is_ipv4_mapped_gid(e.gid);
    // gid_attrs exist on RoCE ports only; reading them for an empty slot fails with EINVAL.
    path.assign(port_dir).append("/gid_attrs/types/").append(idx);
    if (auto t = root.read_line(path); t && is_valid_utf8(*t)) e.type = std::move(*t);
    path.assign(port_dir).append("/gid_attrs/ndevs/").append(idx);
    if (auto n = root.read_line(path); n && is_valid_utf8(*n)) e.netdev = std::move(*n);
    port.gids.push_back(std::move(e));
  }
}

// The netdev a port carries: the GID table names it for RoCE; otherwise (IPoIB, or RoCE without
// gid_attrs) the netdevs of the device's PCI function, matched on dev_port = port - 1
// (ipoib and mlx4_en set dev_port since Linux 3.15; older kernels used dev_id).
std::string port_netdev(const core::Root& root, const std::string& dev_dir, const RdmaPort& port,
                        std::size_t port_count) {
  std::map<std::string, int> votes;
  for (const auto& g : port.gids)
    if (!g.netdev.empty()) ++votes[g.netdev];
  if (!votes.empty()) {
    return std::max_element(votes.begin(), votes.end(),
                            [](const auto& a, const auto& b) { return a.second < b.second; })
        ->first;
  }
  if (port.gids.empty()) {
    // The table was not walked (the exporter's layout): entry 0 of a RoCE port is the
    // link-local GID of the port's own netdev. Soft-RoCE (rxe) has no PCI function to ask.
    const std::string ndev = dev_dir + "/ports/" + std::to_string(port.port) + "/gid_attrs/ndevs/0";
    if (auto n = root.read_line(ndev); n && !n->empty() && is_valid_utf8(*n)) return *n;
  }
  std::string net_dir = dev_dir + "/device/net";
  for (const auto& name : root.list(net_dir)) {
    auto dev_port = root.read_int(net_dir + "/" + name + "/dev_port");
    if (!dev_port) dev_port = root.read_int(net_dir + "/" + name + "/dev_id");
    if (dev_port ? *dev_port + 1 == port.port : port_count == 1) return name;
  }
  return "";
}

void read_port(NotedReader& r, const std::string& dev_dir, int number, std::size_t port_count,
               const RdmaOptions& opts, RdmaPort& port) {
  const auto& root = r.root();
  std::string dir = dev_dir + "/ports/" + std::to_string(number);
  port.port = number;
  auto& notes = r.notes();
  if (auto s = r.text(dir + "/state", true)) {
    if (auto st = parse_port_state(dir + "/state", *s, notes)) {
      port.state = st->name;
      port.state_code = st->code;
    }
  }
  if (auto s = r.text(dir + "/phys_state", true)) {
    if (auto st = parse_phys_state(dir + "/phys_state", *s, notes)) {
      port.phys_state = st->name;
      port.phys_state_code = st->code;
    }
  }
  if (auto s = r.text(dir + "/rate", true)) {
    port.rate_gbps = parse_rate(dir + "/rate", *s, notes);
    if (port.rate_gbps) port.rate = std::move(*s);
  }
  if (auto s = r.text(dir + "/link_layer", true))
    port.link_layer = parse_link_layer(dir + "/link_layer", *s, notes).value_or("");
  if (auto v = r.integer(dir + "/lid"); v && *v >= 0 && *v <= 0xffff)
    port.lid = static_cast<std::uint32_t>(*v);
  if (auto v = r.integer(dir + "/sm_lid"); v && *v >= 0 && *v <= 0xffff)
    port.sm_lid = static_cast<std::uint32_t>(*v);
  if (opts.counters) {
    read_counters(r, dir + "/counters", true, port.counters);
    read_counters(r, dir + "/hw_counters", false, port.hw_counters);
  }
  if (opts.gids) read_gids(root, dir, port);
  port.netdev = port_netdev(root, dev_dir, port, port_count);
  // sysfs has no active-MTU attribute; for RoCE the kernel derives it from the netdev MTU.
  if (port.link_layer == "Ethernet" && !port.netdev.empty()) {
    if (auto mtu = root.read_int("sys/class/net/" + port.netdev + "/mtu"); mtu && *mtu > 0 && *mtu < 1 << 20)
      port.active_mtu = roce_mtu_for_netdev_mtu(static_cast<int>(*mtu));
  }
}

}  // namespace

std::vector<RdmaDevice> collect_rdma(const core::Root& root, std::vector<std::string>& notes,
                                     const RdmaOptions& opts) {
  std::vector<Note> typed;
  auto devices = collect_rdma(root, typed, opts);
  for (const auto& n : typed) notes.push_back(n.text());
  return devices;
}

std::vector<RdmaDevice> collect_rdma(const core::Root& root, std::vector<Note>& notes, const RdmaOptions& opts) {
  std::vector<RdmaDevice> devices;
  NotedReader r(root, notes);
  const std::string class_dir = "sys/class/infiniband";
  for (const auto& name : root.list(class_dir)) {
    if (!is_valid_utf8(name)) {
      notes.push_back({class_dir, NoteKind::NotText, "a device whose name is not text (" + quote(name) + "), skipped"});
      continue;
    }
    std::string dir = class_dir + "/" + name;
    auto port_names = root.list(dir + "/ports");
    if (port_names.empty() && !root.is_dir(dir)) {
      // Listed, then gone (hot unplug, driver reload) or a dangling link: nothing to read.
      notes.push_back({dir, NoteKind::Removed, "listed but not readable (device removed?), skipped"});
      continue;
    }
    std::size_t notes_before = notes.size();
    RdmaDevice d;
    d.name = name;
    d.hca_type = r.text(dir + "/hca_type").value_or("");
    d.fw_ver = r.text(dir + "/fw_ver").value_or("");
    d.board_id = r.text(dir + "/board_id").value_or("");
    d.node_guid = r.text(dir + "/node_guid").value_or("");
    d.node_type = r.text(dir + "/node_type").value_or("");
    if (auto target = root.link_target(dir + "/device")) d.pci_address = last_pci_component(*target);
    if (!d.pci_address.empty()) {
      if (auto numa = r.integer(dir + "/device/numa_node"); numa && *numa >= 0 && *numa < 4096)
        d.numa_node = static_cast<int>(*numa);
    }
    std::vector<int> numbers;
    for (const auto& p : port_names) {
      auto n = core::parse_int(p);
      if (n && *n >= 1 && *n <= 255) numbers.push_back(static_cast<int>(*n));
      else notes.push_back({dir + "/ports/" + p, NoteKind::BadValue, "not a port number, skipped"});
    }
    std::sort(numbers.begin(), numbers.end());
    d.ports.resize(numbers.size());
    for (std::size_t i = 0; i < numbers.size(); ++i)
      read_port(r, dir, numbers[i], numbers.size(), opts, d.ports[i]);
    if (!root.is_dir(dir)) {
      // Removed while being read: its half-read values and their notes would only mislead.
      notes.resize(notes_before);
      notes.push_back({dir, NoteKind::Removed, "removed while being read, skipped"});
      continue;
    }
    devices.push_back(std::move(d));
  }
  return devices;
}

}  // namespace fabscope::probe
