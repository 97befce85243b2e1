#include "ncclenv/plan.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "core/root.hpp"
#include "core/strings.hpp"

namespace fabscope::ncclenv {

namespace {

struct PortRef {
  const RdmaDevice* dev;
  const RdmaPort* port;
  std::string name;
};

// ACTIVE implies the physical link is up; a phys_state the probe could not read (a corrupt
// value, noted in probe_notes) does not disqualify an ACTIVE port.
bool usable(const RdmaPort& p) { return p.state == "ACTIVE" && (p.phys_state == "LinkUp" || p.phys_state.empty()); }

std::string describe(const PortRef& r) {
  const RdmaPort& p = *r.port;
  std::string s = r.name + " " + (p.state.empty() ? "?" : p.state) + "/" + (p.phys_state.empty() ? "?" : p.phys_state);
  if (p.rate_gbps) s += " " + core::format_number(*p.rate_gbps) + " Gb/s";
  if (!p.link_layer.empty()) s += " " + p.link_layer;
  if (!p.netdev.empty()) s += " on " + p.netdev;
  return s;
}

// Soft-RoCE (rdma_rxe) and soft-iWARP (siw) devices: names are given by the kernel driver.
// (An empty pci_address alone does not tell: captured trees may lack the device links.)
bool software_rdma(const RdmaDevice& d) {
  return core::starts_with(d.name, "rxe") || core::starts_with(d.name, "siw");
}

// A port slower than half of the node's best is a management or legacy port: NCCL would pace
// its rings and trees to the slowest NIC it uses.
constexpr double kSlowFraction = 0.5;

int gdr_rank(const std::string& level) {
  static const std::map<std::string, int> ranks = {{"PIX", 0}, {"PXB", 1}, {"PHB", 2}, {"NODE", 3}, {"SYS", 4}};
  auto it = ranks.find(level);
  return it == ranks.end() ? -1 : it->second;
}
const char* gdr_name(int rank) {
  static const char* names[] = {"PIX", "PXB", "PHB", "NODE", "SYS"};
  return rank >= 0 && rank <= 4 ? names[rank] : "";
}

// Interface names that are never the bootstrap network: loopback, container and VM bridges,
// overlay tunnels, traffic-shaping helpers.
bool infrastructure_name(const std::string& n) {
  static const char* prefixes[] = {"docker", "virbr", "br-", "cni", "flannel", "cali", "vxlan", "kube-",
                                   "ifb", "tunl", "lxc", "weave", "cilium", "podman", "nerdctl"};
  if (n == "lo") return true;
  for (const char* p : prefixes)
    if (core::starts_with(n, p)) return true;
  return false;
}

struct PlanState {
  const NodeInfo& node;
  const PlanOptions& opts;
  EnvPlan plan;
  std::vector<PortRef> selected;

  void add(std::string name, std::string value, std::string reason, std::string evidence) {
    plan.vars.push_back({std::move(name), std::move(value), std::move(reason), std::move(evidence)});
  }
};

void plan_hca(PlanState& s) {
  std::vector<PortRef> all, up;
  for (const auto& d : s.node.rdma_devices)
    for (const auto& p : d.ports) all.push_back({&d, &p, port_name(d, p)});
  for (const auto& r : all) {
    if (usable(*r.port)) up.push_back(r);
    else s.plan.notes.push_back(r.name + " left out of NCCL_IB_HCA: not ACTIVE/LinkUp (" + describe(r) + ")");
  }
  double best = 0;
  for (const auto& r : up)
    if (r.port->rate_gbps) best = std::max(best, *r.port->rate_gbps);
  std::vector<PortRef> fast;
  for (const auto& r : up) {
    if (best > 0 && r.port->rate_gbps && *r.port->rate_gbps < best * kSlowFraction) {
      s.plan.notes.push_back(r.name + " left out of NCCL_IB_HCA: " + core::format_number(*r.port->rate_gbps) +
                             " Gb/s is far below the node's best " + core::format_number(best) +
                             " Gb/s (a management or slow port; NCCL would pace to it)");
      continue;
    }
    fast.push_back(r);
  }
  const auto& dr = s.opts.default_route_ifaces;
  auto on_default_route = [&](const PortRef& r) {
    return !r.port->netdev.empty() && std::find(dr.begin(), dr.end(), r.port->netdev) != dr.end();
  };
  const bool others = std::any_of(fast.begin(), fast.end(), [&](const PortRef& r) { return !on_default_route(r); });
  for (const auto& r : fast) {
    if (others && on_default_route(r)) {
      s.plan.notes.push_back(r.name + " left out of NCCL_IB_HCA: its netdev " + r.port->netdev +
                             " carries the default route (the management network) and other ports exist");
      continue;
    }
    s.selected.push_back(r);
  }
  if (s.selected.empty()) return;
  s.plan.rdma = true;
  std::vector<std::string> names, evidence, software;
  for (const auto& r : s.selected) {
    names.push_back(r.name);
    evidence.push_back(describe(r));
    if (software_rdma(*r.dev) && std::find(software.begin(), software.end(), r.dev->name) == software.end())
      software.push_back(r.dev->name);
  }
  s.add("NCCL_IB_HCA", "=" + core::join(names, ","),
        "the ACTIVE, LinkUp data ports, as an exact list ('=' prefix, ':port'), so NCCL neither "
        "picks a management port nor a second device whose name merely starts the same",
        core::join(evidence, "; "));
  if (!software.empty())
    s.plan.warnings.push_back(
        core::join(software, ", ") +
        (software.size() == 1 ? " is a software RDMA device" : " are software RDMA devices") +
        " (Soft-RoCE rxe / siw): NCCL runs over them, CPU-bound and without GPUDirect "
        "RDMA; use them for tests");
}

void plan_gid(PlanState& s) {
  std::vector<const PortRef*> roce;
  for (const auto& r : s.selected)
    if (r.port->link_layer == "Ethernet") roce.push_back(&r);
  if (roce.empty()) return;
  std::map<int, std::vector<std::string>> by_index;
  std::vector<std::string> evidence, missing, unknown;
  for (const auto* r : roce) {
    if (r->port->gids.empty()) {
      unknown.push_back(r->name);
      continue;
    }
    const GidEntry* hit = nullptr;
    for (const auto& g : r->port->gids)
      if (g.type == "RoCE v2" && g.ipv4_mapped) {
        hit = &g;
        break;
      }
    if (!hit) {
      missing.push_back(r->name);
      continue;
    }
    by_index[hit->index].push_back(r->name);
    evidence.push_back(r->name + " gid[" + std::to_string(hit->index) + "]=::ffff:" + gid_ipv4(hit->gid) +
                       " RoCE v2" + (hit->netdev.empty() ? "" : " " + hit->netdev));
  }
  if (!unknown.empty())
    s.plan.warnings.push_back("NCCL_IB_GID_INDEX not set: the GID table of " + core::join(unknown, ", ") +
                              " could not be read");
  if (!missing.empty())
    s.plan.warnings.push_back("NCCL_IB_GID_INDEX not set: " + core::join(missing, ", ") +
                              " has no IPv4 RoCE v2 GID (does its netdev hold an IPv4 address?)");
  if (!unknown.empty() || !missing.empty()) return;
  if (by_index.size() > 1) {
    std::vector<std::string> parts;
    for (const auto& [i, ports] : by_index)
      parts.push_back(core::join(ports, ",") + " at " + std::to_string(i));
    s.plan.warnings.push_back("NCCL_IB_GID_INDEX not set: the IPv4 RoCE v2 GID sits at different indexes (" +
                              core::join(parts, "; ") +
                              "); one value cannot fit all ports. With NCCL >= 2.21 leave it unset "
                              "(NCCL picks per port by NCCL_IB_ADDR_FAMILY and NCCL_IB_ROCE_VERSION_NUM), "
                              "or make the GID tables agree");
    return;
  }
  s.add("NCCL_IB_GID_INDEX", std::to_string(by_index.begin()->first),
        "the RoCE v2 entry holding the port's IPv4 address, the same index on every RoCE port: it "
        "routes across IP subnets; NCCL before 2.21 otherwise uses GID 0 (link-local)",
        core::join(evidence, "; "));
}

void plan_ifname(PlanState& s) {
  const auto& dr = s.opts.default_route_ifaces;
  std::vector<const Netdev*> candidates;
  std::vector<std::string> left_out;
  for (const auto& n : s.node.netdevs) {
    std::string why;
    if ((n.type && *n.type == 772) || n.name == "lo") why = "loopback";
    else if (infrastructure_name(n.name)) why = "container/VM bridge or helper";
    else if (core::starts_with(n.name, "veth") && n.rdma_ports.empty() && n.ipv4.empty())
      why = "container veth (no address, no RDMA port)";
    else if (n.operstate != "up") why = n.operstate.empty() ? "state unknown" : n.operstate;
    if (!why.empty()) {
      left_out.push_back(n.name + " (" + why + ")");
      continue;
    }
    candidates.push_back(&n);
  }
  if (candidates.empty()) {
    s.plan.warnings.push_back(
        "NCCL_SOCKET_IFNAME not set: no interface is up apart from loopback and "
        "container bridges" +
        (left_out.empty() ? "" : " (" + core::join(left_out, ", ") + ")"));
    return;
  }
  const Netdev* chosen = nullptr;
  std::string reason;
  if (!s.opts.master_addr.empty()) {
    auto addr = parse_ipv4(s.opts.master_addr);
    if (!addr) {
      s.plan.warnings.push_back("--master-addr '" + s.opts.master_addr + "' is not an IPv4 address; ignored");
    } else {
      for (const auto* n : candidates)
        for (const auto& cidr : n->ipv4)
          if (!chosen && subnet_contains(cidr, *addr)) {
            chosen = n;
            reason = "its subnet " + cidr + " contains the master address " + s.opts.master_addr +
                     ", so every rank reaches rank 0 over it";
          }
      if (!chosen) {
        bool any_ipv4 = std::any_of(candidates.begin(), candidates.end(), [](const Netdev* n) { return !n->ipv4.empty(); });
        s.plan.warnings.push_back("no interface's IPv4 subnet contains --master-addr " + s.opts.master_addr +
                                  (any_ipv4 ? " (the master is routed, not on a local subnet)"
                                            : " (no IPv4 addresses known: a captured tree has none)") +
                                  "; the interface below was chosen by rule, check that it reaches the master");
      }
    }
  }
  if (!chosen) {
    auto rank = [&](const Netdev* n) {
      const bool route = std::find(dr.begin(), dr.end(), n->name) != dr.end();
      return std::make_tuple(route ? 0 : 1, n->pci_address.empty() ? 1 : 0, -n->speed_mbps.value_or(0), n->name);
    };
    chosen = *std::min_element(candidates.begin(), candidates.end(),
                               [&](const Netdev* a, const Netdev* b) { return rank(a) < rank(b); });
    const bool route = std::find(dr.begin(), dr.end(), chosen->name) != dr.end();
    if (route) reason = "it carries the default route, so it reaches the other nodes' bootstrap sockets";
    else if (candidates.size() == 1) reason = "the only interface that is up and not a loopback or container bridge";
    else
      reason = std::string("the first of the up interfaces by preference (") +
               (chosen->pci_address.empty() ? "virtual" : "a physical NIC") +
               ", fastest, then by name); pass --master-addr to pick by subnet";
  }
  std::string ev = chosen->name + ": " + chosen->operstate;
  if (!chosen->pci_address.empty()) ev += ", pci " + chosen->pci_address;
  if (chosen->speed_mbps) ev += ", " + std::to_string(*chosen->speed_mbps) + " Mb/s";
  if (!chosen->ipv4.empty()) ev += ", " + core::join(chosen->ipv4, " ");
  if (std::find(dr.begin(), dr.end(), chosen->name) != dr.end()) ev += ", default route";
  std::vector<std::string> others;
  for (const auto* n : candidates)
    if (n != chosen) others.push_back(n->name);
  if (!others.empty()) ev += "; also up: " + core::join(others, ", ");
  if (!left_out.empty()) ev += "; left out: " + core::join(left_out, ", ");
  s.add("NCCL_SOCKET_IFNAME", "=" + chosen->name,
        "bootstrap (and socket transport) interface, exact match ('='): " + reason, ev);
}

std::string join_ints(const std::vector<int>& v) {
  std::string out;
  for (int i : v) out += (out.empty() ? "" : ",") + std::to_string(i);
  return out.empty() ? "none" : out;
}

void plan_qos(PlanState& s) {
  bool any_roce = false, any_ib = false;
  for (const auto& r : s.selected) {
    any_roce = any_roce || r.port->link_layer == "Ethernet";
    any_ib = any_ib || r.port->link_layer == "InfiniBand";
  }
  if (s.opts.roce_dscp) {
    const int dscp = *s.opts.roce_dscp;
    s.add("NCCL_IB_TC", std::to_string(dscp << 2),
          "traffic class = DSCP " + std::to_string(dscp) +
              " << 2, from --roce-dscp: it must match the lossless (PFC/ECN) class configured on the "
              "switches and the NIC, which this node cannot see",
          "--roce-dscp " + std::to_string(dscp));
    if (!any_roce) s.plan.warnings.push_back("--roce-dscp given but no selected port is RoCE (Ethernet link layer)");
    // The priority the NIC gives DSCP d: the DSCP application entry for d under DSCP trust, the
    // driver's default d >> 3 without one (mlx5's default dscp2prio). Under PCP trust the DSCP
    // does not select a priority at all.
    for (const auto& l : s.node.lossless) {
      if (!l.pfc_priorities || l.trust.empty()) continue;
      std::string where = l.netdev + " (PFC on priority " + join_ints(*l.pfc_priorities) + ", trust " + l.trust + ")";
      if (l.trust == "pcp") {
        s.plan.warnings.push_back("--roce-dscp " + std::to_string(dscp) + ": " + where +
                                  " trusts the VLAN priority (PCP), not DSCP, so NCCL_IB_TC does not pick the "
                                  "lossless priority; set DSCP trust (mlnx_qos -i " + l.netdev + " --trust dscp)");
        continue;
      }
      int prio = dscp >> 3;
      for (const auto& a : l.apps)
        if (a.selector == 5 && a.protocol == dscp) prio = a.priority;
      if (std::find(l.pfc_priorities->begin(), l.pfc_priorities->end(), prio) == l.pfc_priorities->end())
        s.plan.warnings.push_back("--roce-dscp " + std::to_string(dscp) + " maps to priority " + std::to_string(prio) +
                                  " on " + where + ", which is not lossless: use the DSCP of the PFC priority");
    }
  }
  if (s.opts.ib_sl) {
    s.add("NCCL_IB_SL", std::to_string(*s.opts.ib_sl),
          "service level from --ib-sl: the subnet manager's SL-to-VL mapping decides what it means, "
          "which this node cannot see",
          "--ib-sl " + std::to_string(*s.opts.ib_sl));
    if (!any_ib) s.plan.warnings.push_back("--ib-sl given but no selected port is InfiniBand");
  }
  if (!s.plan.rdma) return;
  s.add("NCCL_IB_TIMEOUT", "20",
        "ack timeout 4.096 us x 2^20 (about 4.3 s) before a retry: NCCL's current default, pinned so "
        "older releases (default 14, about 67 ms) do not abort on a congested fabric",
        "RDMA ports selected: " + std::to_string(s.selected.size()));
  s.add("NCCL_IB_RETRY_CNT", "7",
        "the most retries the IB transport allows (3-bit field): a transient drop is retried, not fatal",
        "RDMA ports selected: " + std::to_string(s.selected.size()));
  if (any_roce) {
    std::vector<std::string> names;
    for (const auto& r : s.selected)
      if (r.port->link_layer == "Ethernet") names.push_back(r.name);
    s.add("NCCL_IB_QPS_PER_CONNECTION", "4",
          "RoCE: each queue pair is one UDP flow with its own source port, so 4 QPs per connection "
          "let the switches' ECMP hashing spread a connection over 4 paths instead of one",
          "Ethernet link layer on " + core::join(names, ", "));
  }
}

void plan_gdr(PlanState& s) {
  if (!s.plan.rdma || s.node.gpus.empty()) return;
  std::set<std::string> hw;  // PCIe HCAs among the selected ports
  for (const auto& r : s.selected)
    if (!software_rdma(*r.dev)) hw.insert(r.dev->name);
  if (hw.empty()) {
    s.plan.notes.push_back("NCCL_NET_GDR_LEVEL not set: the selected RDMA devices are software devices, "
                           "which cannot reach GPU memory");
    return;
  }
  int need = -1;
  std::vector<std::string> evidence, unknown;
  for (const auto& g : s.node.gpus) {
    int best = -1;
    std::string best_nic;
    for (const auto& a : s.node.gpu_nic_affinity) {
      if (a.gpu != g.pci_address || !hw.count(a.nic)) continue;
      const int r = gdr_rank(a.level);
      if (r >= 0 && (best < 0 || r < best)) best = r, best_nic = a.nic;
    }
    if (best < 0) {
      unknown.push_back(g.pci_address);
      continue;
    }
    evidence.push_back("gpu " + g.pci_address + " -> " + best_nic + " " + gdr_name(best));
    need = std::max(need, best);
  }
  if (!unknown.empty()) {
    s.plan.warnings.push_back("NCCL_NET_GDR_LEVEL not set: GPU-NIC distance unknown for gpu " +
                              core::join(unknown, ", "));
    return;
  }
  if (need < 0) return;
  const bool modules_known = !s.node.kernel.modules.empty();
  const bool peermem = s.node.has_module("nvidia_peermem") || s.node.has_module("nv_peer_mem");
  if (modules_known && !peermem)
    s.plan.warnings.push_back("GPUDirect RDMA: neither nvidia_peermem nor nv_peer_mem is loaded; unless NCCL "
                              "can use DMA-BUF (NCCL >= 2.19, Linux >= 5.12, open GPU kernel modules) every "
                              "transfer is staged through host memory: modprobe nvidia_peermem");
  if (need >= gdr_rank("NODE")) {
    s.plan.warnings.push_back(std::string("NCCL_NET_GDR_LEVEL not set: a GPU's nearest NIC is ") +
                              gdr_name(need) + " away (" + core::join(evidence, "; ") +
                              "): GPUDirect RDMA would cross the CPU interconnect, slower than staging; "
                              "this is a placement problem (GPU and NIC on different sockets)");
    return;
  }
  const int level = std::max(need, gdr_rank("PXB"));
  std::string reason = level == gdr_rank("PXB")
                           ? "every GPU has a NIC under the same PCIe switch (PIX/PXB): GPUDirect RDMA on "
                             "for all of them, as NCCL's default does; pinned so a topology surprise shows"
                           : "the nearest NIC of some GPU is behind the CPU's host bridge (PHB): allow "
                             "GPUDirect RDMA through it; compare with NCCL_NET_GDR_LEVEL=PXB using "
                             "fabscope bench, some root complexes are slow at peer-to-peer";
  std::string ev = core::join(evidence, "; ");
  if (modules_known) ev += peermem ? "; peermem module loaded" : "; no peermem module";
  s.add("NCCL_NET_GDR_LEVEL", gdr_name(level), reason, ev);
}

void plan_sockets(PlanState& s) {
  if (s.plan.rdma) return;
  if (s.node.rdma_devices.empty()) {
    s.add("NCCL_IB_DISABLE", "1",
          "no RDMA device on this node: skip the IB transport's probing and use TCP sockets directly",
          "sys/class/infiniband lists no device");
    s.plan.warnings.push_back("no RDMA device: NCCL will use TCP sockets between nodes (NET/Socket), the slow "
                              "path, typically a fraction of the NIC's rate and far below RDMA; fine inside "
                              "one node (NVLink/PCIe), not for multi-node training at scale");
  } else {
    s.plan.warnings.push_back("RDMA devices exist but no port is ACTIVE/LinkUp: NCCL will fall back to TCP "
                              "sockets until the links come up (fabscope check says why)");
  }
  s.add("NCCL_SOCKET_NTHREADS", "4",
        "socket transport: 4 helper threads per connection (NCCL's default is 1 on most systems), so "
        "one CPU core does not cap the link; with 4 sockets per thread, measured 1.5-2.6x the "
        "all-reduce bandwidth of the defaults (bench/RESULTS.md)",
        s.node.rdma_devices.empty() ? "no RDMA device" : "no usable RDMA port");
  s.add("NCCL_NSOCKS_PERTHREAD", "4",
        "4 TCP sockets per thread: 16 streams per connection fill a 25-100 Gb/s link (NCCL allows "
        "threads x sockets <= 64)",
        "NCCL_SOCKET_NTHREADS=4");
}

}  // namespace

const PlannedVar* EnvPlan::find(const std::string& name) const {
  for (const auto& v : vars)
    if (v.name == name) return &v;
  return nullptr;
}

std::optional<std::uint32_t> parse_ipv4(const std::string& text) {
  auto parts = core::split(text, '.', false);
  if (parts.size() != 4) return std::nullopt;
  std::uint32_t v = 0;
  for (const auto& p : parts) {
    if (p.empty() || p.size() > 3 || p.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    const int n = std::stoi(p);
    if (n > 255) return std::nullopt;
    v = (v << 8) | static_cast<std::uint32_t>(n);
  }
  return v;
}

bool subnet_contains(const std::string& cidr, std::uint32_t addr) {
  auto slash = cidr.find('/');
  auto net = parse_ipv4(cidr.substr(0, slash));
  if (!net) return false;
  int len = 32;
  if (slash != std::string::npos) {
    auto l = core::parse_int(cidr.substr(slash + 1));
    if (!l || *l < 0 || *l > 32) return false;
    len = static_cast<int>(*l);
  }
  const std::uint32_t mask = len == 0 ? 0 : ~std::uint32_t{0} << (32 - len);
  return (*net & mask) == (addr & mask);
}

std::string gid_ipv4(const std::string& gid) {
  std::string hex;
  for (char c : gid)
    if (c != ':') hex += c;
  if (hex.size() != 32 || hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos ||
      hex.compare(0, 24, "00000000000000000000ffff") != 0)
    return "";
  std::string out;
  for (int i = 0; i < 4; ++i) {
    const int b = std::stoi(hex.substr(24 + i * 2, 2), nullptr, 16);
    out += (i ? "." : "") + std::to_string(b);
  }
  return out;
}

EnvPlan plan(const NodeInfo& node, const PlanOptions& opts) {
  PlanState s{node, opts, {}, {}};
  s.plan.hostname = node.hostname;
  s.plan.gpus = static_cast<int>(node.gpus.size());
  s.plan.any_rdma_device = !node.rdma_devices.empty();
  plan_hca(s);
  plan_gid(s);
  plan_ifname(s);
  plan_sockets(s);
  plan_qos(s);
  plan_gdr(s);
  // The transport switch first: it says which of the others matter.
  std::stable_partition(s.plan.vars.begin(), s.plan.vars.end(),
                        [](const PlannedVar& v) { return v.name == "NCCL_IB_DISABLE"; });
  return s.plan;
}

void to_json(json& j, const PlannedVar& v) {
  j = json{{"name", v.name}, {"value", v.value}, {"reason", v.reason}, {"evidence", v.evidence}};
}

void to_json(json& j, const EnvPlan& p) {
  j = json{{"schema", "fabscope.env"},
           {"schema_version", EnvPlan::kSchemaVersion},
           {"hostname", p.hostname},
           {"rdma", p.rdma},
           {"rdma_devices_present", p.any_rdma_device},
           {"gpus", p.gpus},
           {"variables", p.vars},
           {"warnings", p.warnings},
           {"notes", p.notes}};
}

}  // namespace fabscope::ncclenv
