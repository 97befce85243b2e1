#include "nccllog/diagnose.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <set>
#include <tuple>

#include "core/strings.hpp"
#include "core/wc_status.hpp"
#include "nccllog/rules.hpp"
#include "nccllog/signatures.hpp"

namespace fabscope::nccllog {

namespace {

constexpr const char* kDocs = "docs/nccllog.md";

std::string proc_name(const ProcessInfo& p) { return host_pid(p.host, p.pid); }

// The processes, then what the lines without a host:pid prefix said (as one more): the sources
// of settings, networks and decisions.
std::vector<const ProcessInfo*> fact_sources(const LogSummary& s) {
  std::vector<const ProcessInfo*> out;
  out.reserve(s.processes.size() + 1);
  for (const auto& p : s.processes) out.push_back(&p);
  if (s.unprefixed) out.push_back(&*s.unprefixed);
  return out;
}

constexpr const char* kNoPrefix = "(lines without host:pid)";
std::string host_label(const ProcessInfo& p) { return p.host.empty() ? kNoPrefix : p.host; }

// " on h1, h2" for hosts_where's list; "" when only lines without a host prefix said it.
std::string on_hosts(const std::vector<std::string>& hosts, std::size_t max = 4) {
  std::vector<std::string> named;
  for (const auto& h : hosts)
    if (h != kNoPrefix) named.push_back(h);
  return named.empty() ? "" : " on " + core::join(named, ", ", max);
}

// A finding's subject: the hosts, or "log" when only lines without a host prefix said it.
std::string subject_of(const std::vector<std::string>& hosts, std::size_t max = 8) {
  std::string on = on_hosts(hosts, max);
  return on.empty() ? "log" : on.substr(4);
}

std::vector<std::string> hosts_where(const LogSummary& s, bool (*pred)(const ProcessInfo&)) {
  std::vector<std::string> out;
  for (const ProcessInfo* p : fact_sources(s))
    if (pred(*p) && std::find(out.begin(), out.end(), host_label(*p)) == out.end()) out.push_back(host_label(*p));
  return out;
}

std::string nic_list(const LogSummary& s) {
  std::vector<std::string> nics;
  for (const ProcessInfo* pp : fact_sources(s))
    for (const auto& n : pp->ib_nics) {
      std::string t = n.name + (n.link_layer.empty() ? "" : "/" + n.link_layer);
      if (std::find(nics.begin(), nics.end(), t) == nics.end()) nics.push_back(t);
    }
  return core::join(nics, " ", 8);
}

// "P2P/CUMEM 96, SHM/direct/direct 4" over every communicator, local or network.
std::string transport_mix(const LogSummary& s, bool network) {
  std::map<std::string, long> m;
  for (const auto& c : s.comms)
    for (const auto& t : c.transports)
      if (t.network == network) m[t.transport] += t.connections;
  std::vector<std::pair<std::string, long>> v(m.begin(), m.end());
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> parts;
  for (const auto& [name, n] : v) parts.push_back(name + " " + std::to_string(n));
  return core::join(parts, ", ", 8);
}

bool env_says(const LogSummary& s, const std::string& name, const std::string& value) {
  for (const ProcessInfo* p : fact_sources(s)) {
    auto it = p->env.find(name);
    if (it != p->env.end() && it->second == value) return true;
  }
  return false;
}

// The interfaces (socket) or HCAs (IB) that "Channel .. via NET/x/N" lines ran on, by name.
std::vector<std::string> used_devices(const LogSummary& s, bool socket) {
  std::vector<std::string> out;
  for (const auto& p : s.processes) {
    const auto& counts = socket ? p.socket_dev_channels : p.ib_dev_channels;
    const auto& list = socket ? p.socket_ifs : p.ib_nics;
    for (std::size_t i = 0; i < counts.size(); ++i) {
      if (counts[i] == 0) continue;
      // An index the process's "Using" list does not cover (an excerpt) stays as NCCL printed it.
      std::string n = i < list.size() ? (socket ? interface_name(list[i].name) : list[i].name)
                                       : std::string(socket ? "NET/Socket/" : "NET/IB/") + std::to_string(i);
      if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    }
  }
  return out;
}

// "veth1: container/VM virtual interface veth*" for the first NET/Socket interface that carried
// channels and is a suspicious choice; nullopt when none is.
std::optional<std::string> first_suspicious_socket_if(const LogSummary& s) {
  for (const auto& p : s.processes)
    for (std::size_t i = 0; i < p.socket_dev_channels.size() && i < p.socket_ifs.size(); ++i)
      if (p.socket_dev_channels[i] > 0)
        if (auto why = suspicious_interface(p.socket_ifs[i].name))
          return interface_name(p.socket_ifs[i].name) + ": " + *why;
  return std::nullopt;
}

const ProcessInfo* process_of(const LogSummary& s, const std::string& host, long pid) {
  if (host.empty()) return nullptr;
  for (const auto& p : s.processes)
    if (p.host == host && p.pid == pid) return &p;
  return nullptr;
}

const Signature* signature_by_id(const std::string& id) {
  for (const auto& x : signatures())
    if (id == x.id) return &x;
  return nullptr;
}

// What a failure line says, in one line: the catalog title, or the WARN text.
// "ALLREDUCE, SeqNum 57, 32 elements" from PyTorch's "WorkNCCL(SeqNum=57, OpType=ALLREDUCE,
// NumelIn=32, ...)"; "" when the line has none of them.
std::string watchdog_work(const std::string& line) {
  auto field = [&](const char* key) -> std::string {
    std::size_t p = line.find(key);
    if (p == std::string::npos) return "";
    p += std::strlen(key);
    std::size_t e = line.find_first_of(",) ", p);
    return line.substr(p, std::min<std::size_t>(e == std::string::npos ? line.size() - p : e - p, 40));
  };
  std::vector<std::string> parts;
  if (auto op = field("OpType="); !op.empty()) parts.push_back(op);
  if (auto seq = field("SeqNum="); !seq.empty()) parts.push_back("SeqNum " + seq);
  if (auto n = field("NumelIn="); !n.empty()) parts.push_back(n + " elements");
  return core::join(parts, ", ");
}

// When the ranks that timed out wait in different collectives, which rank waits in which:
// "the timed-out ranks wait in different collectives: ALLREDUCE on rank 0; BROADCAST on ranks
// 1,2,3" ("" when they all wait in the same one, or name none).
std::string watchdog_groups(const LogSummary& s) {
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;  // op -> ranks, in order
  for (const Failure& f : s.failures) {
    if (f.id != "collective_timeout") continue;
    std::string work = watchdog_work(f.line);
    std::string op = work.substr(0, work.find(','));
    if (op.empty()) continue;
    auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == op; });
    if (g == groups.end()) g = groups.insert(groups.end(), {op, {}});
    std::string who = f.rank >= 0 ? std::to_string(f.rank) : f.host.empty() ? "?" : f.host;
    if (std::find(g->second.begin(), g->second.end(), who) == g->second.end()) g->second.push_back(who);
  }
  if (groups.size() < 2) return "";
  std::vector<std::string> parts;
  for (const auto& [op, who] : groups)
    parts.push_back(op + " on rank" + (who.size() > 1 ? "s " : " ") + core::join(who, ",", 8));
  return "the timed-out ranks wait in different collectives: " + core::join(parts, "; ", 6);
}

std::string failure_title(const Failure& f) {
  if (f.id == "collective_timeout") {
    std::string work = watchdog_work(f.line);
    const Signature* sig = signature_by_id(f.id);
    return std::string(sig ? sig->title : "collective timeout") + (work.empty() ? "" : " (" + work + ")");
  }
  if (f.id == "ib_completion_error") {  // the generic entry: the status code says which error
    if (auto st = completion_status(f.line))
      return "IB completion error status " + std::to_string(*st) + " (" + core::wc_status_name(*st) + ")";
  }
  if (const Signature* sig = signature_by_id(f.id)) return sig->title;
  std::size_t w = f.line.find("NCCL WARN ");
  std::string msg = w == std::string::npos ? f.line : f.line.substr(w + 10);
  if (msg.size() > 120) msg = msg.substr(0, 117) + "...";
  return "NCCL WARN " + msg;
}

std::string failure_where(const Failure& f) {
  if (f.host.empty()) return f.rank >= 0 ? "rank " + std::to_string(f.rank) : "";
  std::string w = f.rank >= 0 ? "rank " + std::to_string(f.rank) + " on " : "";
  return w + host_pid(f.host, f.pid);
}

// --- summary rules -----------------------------------------------------------------------------

bool any_ib_nics(const LogSummary& s) {
  return std::any_of(s.processes.begin(), s.processes.end(), [](const ProcessInfo& p) { return !p.ib_nics.empty(); });
}

void rule_socket_with_rdma_nics(const RuleInput& in, std::vector<Finding>& out) {
  if (in.t.socket == 0 || !any_ib_nics(in.s)) return;
  std::string ev = "NET/Socket on " + std::to_string(in.t.socket) + " of " + std::to_string(in.t.net) +
                   " network connections";
  if (env_says(in.s, "NCCL_IB_DISABLE", "1")) ev += "; NCCL_IB_DISABLE=1 set by environment";
  out.push_back(make_finding(
      "nccllog.net_socket_with_rdma_nics", Severity::Fail, "network",
      "network traffic on TCP sockets although NET/IB listed RDMA devices", ev + "; NET/IB listed " + nic_list(in.s),
      "Find why those ranks did not use IB: NCCL_IB_DISABLE / NCCL_NET=Socket in their environment, an "
      "NCCL_IB_HCA filter that matches nothing on some nodes, or ports down there (fabscope check).",
      kDocs));
}

void rule_socket_no_rdma(const RuleInput& in, std::vector<Finding>& out) {
  if (in.t.socket == 0 || any_ib_nics(in.s)) return;
  std::string ev = "NET/Socket on " + std::to_string(in.t.socket) + " of " + std::to_string(in.t.net) +
                   " network connections";
  if (env_says(in.s, "NCCL_IB_DISABLE", "1")) ev += "; NCCL_IB_DISABLE=1 set by environment";
  auto no_dev = hosts_where(in.s, [](const ProcessInfo& p) { return p.ib_no_device; });
  if (!no_dev.empty()) ev += "; \"NET/IB : No device found\"" + on_hosts(no_dev, 8);
  out.push_back(make_finding(
      "nccllog.net_socket_no_rdma", Severity::Warn, "network", "network traffic on TCP sockets: no RDMA device was usable",
      ev,
      "If the nodes have InfiniBand/RoCE NICs: load the drivers (mlx5_ib, ib_uverbs), install rdma-core "
      "in the image, expose /dev/infiniband to containers, and check NCCL_IB_HCA. Without RDMA NICs, "
      "expect a fraction of the bandwidth.",
      kDocs));
}

void rule_gdrdma_absent(const RuleInput& in, std::vector<Finding>& out) {
  if (in.t.rdma == 0 || in.t.gdr >= in.t.rdma) return;
  out.push_back(make_finding(
      "nccllog.gdrdma_absent", Severity::Warn, "network",
      "GPUDirect RDMA not used on " + std::to_string(in.t.rdma - in.t.gdr) + " of " + std::to_string(in.t.rdma) +
          " RDMA connections (data staged through host memory)",
      "GDRDMA on " + std::to_string(in.t.gdr) + "/" + std::to_string(in.t.rdma) + " RDMA connections; " +
          transport_mix(in.s, true),
      "Load nvidia_peermem (or use a driver and kernel with dma-buf), keep GPU and NIC under the same "
      "PCIe switch, check NCCL_NET_GDR_LEVEL and NCCL_NET_GDR_READ, and that ACS is off (fabscope check).",
      kDocs));
}

void rule_ib_init_failed(const RuleInput& in, std::vector<Finding>& out) {
  auto failed = hosts_where(in.s, [](const ProcessInfo& p) {
    return std::find(p.failed_plugins.begin(), p.failed_plugins.end(), "IB") != p.failed_plugins.end();
  });
  if (failed.empty()) return;
  auto no_dev = hosts_where(in.s, [](const ProcessInfo& p) { return p.ib_no_device; });
  out.push_back(make_finding(
      "nccllog.ib_init_failed", in.t.net > 0 && any_ib_nics(in.s) ? Severity::Warn : Severity::Info,
      subject_of(failed),
      "the NET/IB transport failed to initialise" + std::string(no_dev.empty() ? "" : " (\"NET/IB : No device found\")"),
      "\"Failed to initialize NET plugin IB\"" + on_hosts(failed, 8),
      "Nothing to do on nodes without RDMA NICs; otherwise check that ibv_devinfo lists the HCAs inside "
      "the job's environment and that NCCL_IB_HCA matches them.",
      kDocs));
}

// "GDR off (NET/OFI: Could not disable CUDA API usage for HMEM)", "NVLS off (NCCL_NVLS_ENABLE=0 set
// by environment)", "NCCL_PROTO=simple (set by NET/OFI)": one decision in a line of text.
std::string decision_text(const Decision& d) {
  if (d.feature.rfind("NCCL_", 0) == 0) return d.feature + "=" + d.reason + (d.scope.empty() ? "" : " (set by " + d.scope + ")");
  std::string why = d.scope;
  if (!d.reason.empty()) why += (why.empty() ? "" : ": ") + d.reason;
  return d.feature + (d.enabled ? " on" : " off") + (why.empty() ? "" : " (" + why + ")");
}

// GPUDirect RDMA turned off where the network could use it: per HCA ("no module"), per GPU/HCA
// pair (the PCIe distance is beyond NCCL_NET_GDR_LEVEL), by a network plugin, by the environment,
// or for the rings as a whole ("Connected all rings, use ring PXN 0 GDR 0"). Sockets never use GDR,
// so what NET/Socket says about it is no finding; neither are the rings of a job with no RDMA.
void rule_gdr_disabled(const RuleInput& in, std::vector<Finding>& out) {
  std::vector<std::string> hosts, items;
  bool module = false, distance = false, plugin = false, env = false;
  const bool rdma = in.t.rdma > 0 || any_ib_nics(in.s);
  for (const ProcessInfo* p : fact_sources(in.s))
    for (const auto& d : p->decisions) {
      if (d.feature != "GDR" || d.enabled || d.scope.rfind("NET/Socket", 0) == 0) continue;
      if (d.scope == "rings" && !rdma) continue;
      const bool by_env = d.reason.find("set by environment") != std::string::npos;
      module = module || d.reason.find("module") != std::string::npos;
      distance = distance || d.reason.rfind("distance", 0) == 0;
      env = env || by_env;
      plugin = plugin || (d.scope.rfind("NET/", 0) == 0 && d.scope.rfind("NET/IB", 0) != 0 && !by_env);
      std::string t = decision_text(d);
      if (std::find(items.begin(), items.end(), t) == items.end()) items.push_back(t);
      if (std::find(hosts.begin(), hosts.end(), host_label(*p)) == hosts.end()) hosts.push_back(host_label(*p));
    }
  if (items.empty()) return;
  std::vector<std::string> fix;
  if (module)
    fix.push_back("Load nvidia_peermem (modprobe nvidia-peermem) on the hosts named, or use DMA-BUF (NCCL 2.19+, "
                  "Linux 5.12+, the open GPU kernel modules).");
  if (distance)
    fix.push_back("The GPU and the NIC are farther apart on PCIe than NCCL_NET_GDR_LEVEL allows: use the NIC under "
                  "the GPU's own PCIe switch (fabscope probe shows the paths, NCCL_IB_HCA picks the NIC), or raise "
                  "NCCL_NET_GDR_LEVEL (PHB, SYS) where peer traffic through the CPU performs well (ACS off).");
  if (plugin)
    fix.push_back("The network plugin turned GDR off (its reason is in the evidence): check what the plugin needs "
                  "for GPU memory (aws-ofi-nccl: a libfabric provider with CUDA HMEM support and, on EFA, "
                  "FI_EFA_USE_DEVICE_RDMA=1 where the instance supports it).");
  if (env) fix.push_back("The job's environment turns it off: unset NCCL_NET_GDR_LEVEL=LOC unless that is intended.");
  if (fix.empty())
    fix.push_back("Load nvidia_peermem or use DMA-BUF, keep GPU and NIC under one PCIe switch, and check "
                  "NCCL_NET_GDR_LEVEL (fabscope check reports the node's GPUDirect state).");
  out.push_back(make_finding(
      "nccllog.gdr_disabled", Severity::Warn, subject_of(hosts),
      "GPUDirect RDMA is off: network data is staged through host memory", core::join(items, "; ", 6) + on_hosts(hosts),
      core::join(fix, " ", 4), kDocs));
}

// "NET/IB : No device found" and no RDMA connection: the container or node has no usable RDMA
// device, so NCCL's network traffic (if the job has any) goes over TCP sockets. When channel lines
// show the sockets, nccllog.net_socket_no_rdma says it with the counts instead.
void rule_ib_no_device(const RuleInput& in, std::vector<Finding>& out) {
  // Only where the log shows no connection at all: a job whose channels are all intra-node, or
  // whose communicators all span one node, has no network traffic to worry about.
  if (in.t.net > 0 || in.t.local > 0 || any_ib_nics(in.s)) return;
  if (!in.s.comms.empty() && std::all_of(in.s.comms.begin(), in.s.comms.end(),
                                         [](const CommSummary& c) { return c.nnodes && *c.nnodes == 1; }))
    return;
  auto no_dev = hosts_where(in.s, [](const ProcessInfo& p) { return p.ib_no_device; });
  if (no_dev.empty()) return;
  std::string ev = "\"NET/IB : No device found\"" + on_hosts(no_dev, 8);
  if (env_says(in.s, "NCCL_IB_DISABLE", "1")) ev += "; NCCL_IB_DISABLE=1 set by environment";
  out.push_back(make_finding(
      "nccllog.ib_no_device", Severity::Warn, subject_of(no_dev),
      "NET/IB found no RDMA device: inter-node traffic would go over TCP sockets", ev,
      "If the nodes have InfiniBand/RoCE NICs: expose /dev/infiniband to the container (docker "
      "--device=/dev/infiniband, the RDMA device plugin in Kubernetes), install rdma-core and the "
      "provider (libmlx5) in the image, load ib_uverbs, and leave NCCL_IB_DISABLE unset.",
      kDocs));
}

std::string settings_named(const LogSummary& s, const std::string& text);

// The name of the device in "NET/IB : Unable to open device mlx5_bond_0", "" when none.
std::string unopened_device(const LogSummary& s) {
  for (const auto& h : s.hits) {
    if (h.id != "ib_unable_to_open_device") continue;
    std::size_t p = h.first_line.find("Unable to open device ");
    if (p == std::string::npos) return "";
    std::string rest = h.first_line.substr(p + 22);
    return rest.substr(0, rest.find(' '));
  }
  return "";
}

// The distinct decisions of every process that turned something off or that a plugin made, in
// the order first seen ("GDR on (rings)" and NVLS channel counts are left to the tables).
std::vector<std::string> notable_decisions(const LogSummary& s) {
  std::vector<std::string> out;
  for (const ProcessInfo* p : fact_sources(s))
    for (const auto& d : p->decisions) {
      if (d.feature == "DMA-BUF" || (d.enabled && d.feature.rfind("NCCL_", 0) != 0)) continue;
      if (d.feature == "NVLS" && d.reason.find("nvls channels") != std::string::npos) continue;
      std::string t = decision_text(d);
      if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
    }
  return out;
}

bool has_decision(const LogSummary& s, const char* feature, bool enabled) {
  for (const ProcessInfo* p : fact_sources(s))
    for (const auto& d : p->decisions)
      if (d.feature == feature && d.enabled == enabled) return true;
  return false;
}

// What an excerpt without Channel lines shows of the transport decisions ("" when nothing):
// "NET/IB found no usable RDMA device on h (mlx5_bond_0 could not be opened); NCCL uses network
// Socket; NET/Socket lists bond0; GDR off (...); NCCL_IB_DISABLE=0 (set by environment: IB was not
// disabled)".
std::string excerpt_facts(const LogSummary& s) {
  std::vector<std::string> parts;
  auto no_dev = hosts_where(s, [](const ProcessInfo& p) { return p.ib_no_device; });
  if (!no_dev.empty()) {
    std::string dev = unopened_device(s);
    parts.push_back("NET/IB found no RDMA device" + on_hosts(no_dev) +
                    (dev.empty() ? "" : " (" + dev + " could not be opened)"));
  }
  std::vector<std::string> nets, socks, hcas;
  for (const ProcessInfo* pp : fact_sources(s)) {
    const ProcessInfo& p = *pp;
    if (p.network && std::find(nets.begin(), nets.end(), *p.network) == nets.end()) nets.push_back(*p.network);
    for (const auto& n : p.socket_ifs)
      if (std::find(socks.begin(), socks.end(), interface_name(n.name)) == socks.end()) socks.push_back(interface_name(n.name));
    for (const auto& n : p.ib_nics)
      if (std::find(hcas.begin(), hcas.end(), n.name) == hcas.end()) hcas.push_back(n.name);
  }
  if (!nets.empty()) {
    std::string net = "NCCL uses network " + core::join(nets, ", ", 4);
    if (nets.size() == 1 && nets[0] == "Socket" && !socks.empty()) net += " (TCP) over " + core::join(socks, ", ", 6);
    if (nets.size() == 1 && nets[0] == "Socket" && !no_dev.empty())
      net += ": inter-node traffic runs at a fraction of RDMA's bandwidth";
    parts.push_back(net);
  }
  if (!hcas.empty()) parts.push_back("NET/IB lists " + core::join(hcas, ", ", 8));
  if (!socks.empty() && !(nets.size() == 1 && nets[0] == "Socket")) parts.push_back("NET/Socket lists " + core::join(socks, ", ", 6));
  for (const auto& d : notable_decisions(s)) parts.push_back(d);
  // Sockets over an ib* interface are IPoIB: TCP over the InfiniBand fabric, not IB verbs.
  for (const auto& sk : socks)
    if (sk.rfind("ib", 0) == 0 && nets.size() == 1 && nets[0] == "Socket") {
      parts.push_back(sk + " is IPoIB: TCP over the InfiniBand fabric, not IB verbs (RDMA)");
      break;
    }
  // Catalog notes (severity info) the excerpt holds: said, so that they are not taken for errors.
  for (const auto& h : s.hits)
    if (h.severity == Severity::Info)
      if (const Signature* sig = signature_by_id(h.id)) parts.push_back(std::string("a note: ") + sig->title);
  if (has_decision(s, "DMA-BUF", true) && has_decision(s, "GDR", false))
    parts.push_back("\"DMA-BUF is available\" is a check NCCL makes at every init, not a sign that DMA-BUF or GDR is used");
  // "; NCCL_IB_DISABLE=0 (set by environment)": the settings that decide the transport.
  std::string env = settings_named(s, "NCCL_IB_DISABLE NCCL_NET NCCL_P2P_DISABLE NCCL_SHM_DISABLE");
  if (!no_dev.empty() && env_says(s, "NCCL_IB_DISABLE", "0")) {
    const std::string set = "NCCL_IB_DISABLE=0 (set by environment)";
    if (std::size_t at = env.find(set); at != std::string::npos)
      env.replace(at, set.size(), "NCCL_IB_DISABLE=0 (set by environment: IB was not disabled, no device was usable)");
  }
  if (parts.empty() && env.empty()) return "";
  std::string shown = core::join(parts, "; ", 12) + env;
  if (parts.empty()) shown.erase(0, 2);
  return "no NCCL failure in the log; no Channel lines; it shows: " + shown;
}

void rule_init_incomplete(const RuleInput& in, std::vector<Finding>& out) {
  std::vector<std::string> incomplete;
  for (const auto& c : in.s.comms)
    for (const auto& r : c.ranks)
      if ((r.init_started || r.nnodes) && !r.init_complete)
        incomplete.push_back("rank " + std::to_string(r.rank) + " on " + host_pid(r.host, r.pid) +
                             " (comm " + c.key + ")");
  if (incomplete.empty()) return;
  out.push_back(make_finding(
      "nccllog.init_incomplete", Severity::Fail, "communicator",
      std::to_string(incomplete.size()) + " rank(s) never reached Init COMPLETE", core::join(incomplete, "; ", 8),
      "Read the first WARN of those ranks (listed in this report); a rank that stops without one is "
      "usually waiting for a peer that failed or was never started.",
      kDocs));
}

void rule_nccl_call_failed(const RuleInput& in, std::vector<Finding>& out) {
  std::vector<std::string> errs;
  for (const auto& p : in.s.processes)
    if (p.first_error_code && !trace_fallback(in.s, p))
      errs.push_back(proc_name(p) + " " + nccl_result_name(*p.first_error_code) + " (" +
                     std::to_string(*p.first_error_code) + ")" +
                     (p.first_error_trace ? " from " + *p.first_error_trace : "") + " during " +
                     to_string(p.phase));
  if (errs.empty()) return;
  out.push_back(make_finding("nccllog.nccl_call_failed", Severity::Fail, "process",
                             "NCCL calls returned an error in " + std::to_string(errs.size()) + " process(es)",
                             core::join(errs, "; ", 8),
                             "The WARN lines just before the \"file:line -> N\" trace name the cause; see the "
                             "first-cause finding.",
                             kDocs));
}

void rule_ranks_missing(const RuleInput& in, std::vector<Finding>& out) {
  for (const auto& c : in.s.comms) {
    std::set<int> seen;
    for (const auto& r : c.ranks)
      if (r.rank >= 0) seen.insert(r.rank);
    if (c.nranks > 0 && !seen.empty() && static_cast<int>(seen.size()) < c.nranks) {
      out.push_back(make_finding(
          "nccllog.ranks_missing", Severity::Info, "comm " + c.key,
          "the log shows " + std::to_string(seen.size()) + " of " + std::to_string(c.nranks) +
              " ranks of this communicator",
          "ranks seen: " + std::to_string(seen.size()) + ", nranks " + std::to_string(c.nranks),
          "Pass every rank's log (NCCL_DEBUG_FILE=/shared/nccl.%h.%p) to judge the whole job.", kDocs));
    }
  }
}

void rule_version_mismatch(const RuleInput& in, std::vector<Finding>& out) {
  if (in.s.versions.size() <= 1) return;
  std::vector<std::string> per;
  // The version most processes run is the job's; the hosts of the others are the odd ones out.
  std::size_t most = 0;
  std::string common;
  std::vector<std::pair<std::string, std::vector<std::string>>> hosts_of;  // version -> hosts
  std::vector<std::size_t> counts;                                          // processes per version
  for (const auto& v : in.s.versions) {
    std::vector<std::string> hosts;
    std::size_t procs = 0;
    for (const auto& p : in.s.processes) {
      if (p.nccl_version != v) continue;
      ++procs;
      if (std::find(hosts.begin(), hosts.end(), p.host) == hosts.end()) hosts.push_back(p.host);
    }
    per.push_back(v + (hosts.empty() ? "" : " on " + core::join(hosts, ",", 4)) +
                  (procs == 0 ? "" : " (" + std::to_string(procs) + " process" + (procs == 1 ? "" : "es") + ")"));
    if (procs > most) most = procs, common = v;
    hosts_of.emplace_back(v, std::move(hosts));
    counts.push_back(procs);
  }
  std::vector<std::string> odd;
  // A tie names no one: which side is odd is not for the log to say.
  if (std::count(counts.begin(), counts.end(), most) > 1) hosts_of.clear();
  for (const auto& [v, hosts] : hosts_of)
    if (v != common)
      for (const auto& h : hosts)
        if (std::find(odd.begin(), odd.end(), h) == odd.end()) odd.push_back(h);
  std::string msg = "ranks run different NCCL versions";
  if (!odd.empty() && most > 0) msg += ": " + core::join(odd, ", ", 4) + " differ" + (odd.size() == 1 ? "s" : "") +
                                       " from the " + common + " the other processes run";
  out.push_back(make_finding(
      "nccllog.version_mismatch", Severity::Fail, odd.empty() ? "job" : core::join(odd, ",", 4), msg,
      core::join(per, "; ", 8),
      "Use one NCCL build everywhere (same container image; no system libnccl shadowing the framework's).", kDocs));
}

void rule_suspicious_interface(const RuleInput& in, std::vector<Finding>& out) {
  // "veth1 (a container/VM virtual interface)" -> what used it
  std::map<std::string, std::vector<std::string>> seen;
  for (const auto& p : in.s.processes) {
    if (p.bootstrap_if)
      if (auto why = suspicious_interface(*p.bootstrap_if))
        seen[*p.bootstrap_if + ": " + *why].push_back("bootstrap of " + proc_name(p));
    for (std::size_t i = 0; i < p.socket_dev_channels.size() && i < p.socket_ifs.size(); ++i)
      if (p.socket_dev_channels[i] > 0)
        if (auto why = suspicious_interface(p.socket_ifs[i].name))
          seen[p.socket_ifs[i].name + ": " + *why].push_back("NET/Socket/" + std::to_string(i) + " of " +
                                                              proc_name(p) + " (" +
                                                              std::to_string(p.socket_dev_channels[i]) + " channels)");
  }
  if (seen.empty()) return;
  std::vector<std::string> ev;
  std::string good;
  for (const auto& p : in.s.processes)
    for (const auto& n : p.socket_ifs)
      if (good.empty() && !suspicious_interface(n.name)) good = interface_name(n.name);
  for (const auto& [k, v] : seen) ev.push_back(k + " <- " + core::join(v, ", ", 4));
  out.push_back(make_finding(
      "nccllog.suspicious_interface", Severity::Warn, "network",
      "NCCL's sockets use " + std::to_string(seen.size()) + " interface(s) that other nodes rarely reach",
      core::join(ev, "; ", 6),
      good.empty() ? "Pin NCCL_SOCKET_IFNAME to the interface the nodes share (ip -br addr)."
                   : "Pin NCCL_SOCKET_IFNAME=" + good + " (listed by NCCL on these nodes), or the interface the "
                     "nodes share; exclude bridges with NCCL_SOCKET_IFNAME=^docker,veth,virbr,lo.",
      kDocs));
}

void rule_unknown_warning(const RuleInput& in, std::vector<Finding>& out) {
  if (in.s.unknown_warnings == 0) return;
  out.push_back(make_finding("nccllog.unknown_warning", Severity::Warn, "log",
                             std::to_string(in.s.unknown_warnings) + " NCCL WARN line(s) not in the catalog",
                             core::join(in.s.unknown_samples, " | ", 5),
                             "Read them in context; known causes are listed in docs/nccllog.md.", kDocs));
}

std::uint64_t nccl_line_count(const LogSummary& s) {
  std::uint64_t n = 0;
  for (const auto& in : s.inputs) n += in.nccl_lines;
  return n;
}

void rule_no_nccl_lines(const RuleInput& in, std::vector<Finding>& out) {
  if (nccl_line_count(in.s) != 0) return;
  out.push_back(make_finding("nccllog.no_nccl_lines", Severity::Warn, "input", "no NCCL log lines in the input",
                             std::to_string(in.s.inputs.size()) + " input(s), 0 lines with NCCL INFO/WARN",
                             "Run the job with NCCL_DEBUG=INFO (and NCCL_DEBUG_FILE=/path/nccl.%h.%p for one "
                             "file per rank).",
                             kDocs));
}

void rule_lines_cut(const RuleInput& in, std::vector<Finding>& out) {
  std::uint64_t cut = 0;
  for (const auto& i : in.s.inputs) cut += i.cut_lines;
  if (cut == 0) return;
  out.push_back(make_finding("nccllog.lines_cut", Severity::Info, "input",
                             std::to_string(cut) + " over-long line(s) were cut", "cut at the line cap",
                             "None needed; NCCL's own lines are below 1 KiB, so cut lines are other output.", kDocs));
}

void rule_entities_dropped(const RuleInput& in, std::vector<Finding>& out) {
  if (in.s.dropped_entities == 0 && in.s.failures_dropped == 0) return;
  out.push_back(make_finding("nccllog.entities_dropped", Severity::Info, "input",
                             "more processes, ranks or failures than the analyzer keeps; extra ones were not tracked",
                             std::to_string(in.s.dropped_entities) + " lines not attributed, " +
                                 std::to_string(in.s.failures_dropped) + " failure lines beyond the first " +
                                 std::to_string(kMaxFailures),
                             "Analyze fewer files at a time.", kDocs));
}

const SummaryRule kSummaryRules[] = {
    {"nccllog.net_socket_with_rdma_nics", rule_socket_with_rdma_nics},
    {"nccllog.net_socket_no_rdma", rule_socket_no_rdma},
    {"nccllog.gdrdma_absent", rule_gdrdma_absent},
    {"nccllog.gdr_disabled", rule_gdr_disabled},
    {"nccllog.ib_init_failed", rule_ib_init_failed},
    {"nccllog.ib_no_device", rule_ib_no_device},
    {"nccllog.suspicious_interface", rule_suspicious_interface},
    {"nccllog.init_incomplete", rule_init_incomplete},
    {"nccllog.nccl_call_failed", rule_nccl_call_failed},
    {"nccllog.ranks_missing", rule_ranks_missing},
    {"nccllog.version_mismatch", rule_version_mismatch},
    {"nccllog.unknown_warning", rule_unknown_warning},
    {"nccllog.no_nccl_lines", rule_no_nccl_lines},
    {"nccllog.lines_cut", rule_lines_cut},
    {"nccllog.entities_dropped", rule_entities_dropped},
};

// The values the log's processes had for the NCCL_* variables a signature's cause or remedy names
// ("; NCCL_SOCKET_IFNAME==nosuchif0 (set by environment)"): the value at fault next to the line.
// Variables no process's log shows set are left out.
std::string settings_named(const LogSummary& s, const std::string& text) {
  std::vector<std::string> names;
  for (std::size_t i = text.find("NCCL_"); i != std::string::npos; i = text.find("NCCL_", i + 1)) {
    std::size_t j = i + 5;
    while (j < text.size() && (std::isupper(static_cast<unsigned char>(text[j])) ||
                               std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '_'))
      ++j;
    std::string name = text.substr(i, j - i);
    while (!name.empty() && name.back() == '_') name.pop_back();
    if (name.size() > 5 && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  std::string out;
  for (const auto& name : names) {
    std::vector<std::string> values;
    for (const ProcessInfo* p : fact_sources(s))
      if (auto it = p->env.find(name); it != p->env.end() && std::find(values.begin(), values.end(), it->second) == values.end())
        values.push_back(it->second);
    if (values.empty()) continue;
    out += "; " + name + "=" + core::join(values, " | ", 4) + " (set by environment)";
  }
  return out;
}

// The catalog findings: one per signature hit; a hit whose every line is a consequence says so.
void catalog_findings(const LogSummary& s, const Causality& c, std::vector<Finding>& out) {
  for (const auto& h : s.hits) {
    const Signature* sig = signature_by_id(h.id);
    if (!sig) continue;
    long as_cause = 0, as_consequence = 0;
    for (std::size_t i = 0; i < s.failures.size(); ++i) {
      if (s.failures[i].id != h.id) continue;
      (c.rule[i] ? as_consequence : as_cause) += 1;
    }
    std::string ev = std::to_string(h.count) + "x";
    if (!h.hosts.empty()) ev += " on " + core::join(h.hosts, ",", 4);
    if (h.wc_status) ev += "; status " + std::to_string(*h.wc_status) + " = " + core::wc_status_name(*h.wc_status);
    ev += "; first at " + h.first_input + ": " + h.first_line;
    ev += settings_named(s, std::string(sig->cause) + " " + sig->remedy);
    std::string msg = sig->title;
    if (as_consequence > 0 && as_cause == 0 && c.first_cause && !c.only_consequences)
      msg += " (a consequence of the first cause, " + s.failures[*c.first_cause].id + ")";
    out.push_back(make_finding(std::string("nccllog.") + sig->id, sig->severity,
                               h.hosts.empty() ? "log" : core::join(h.hosts, ",", 4), msg, ev, sig->remedy, kDocs));
  }
}

// "during bootstrap (TCP rendezvous)", or what is said when the log does not show the phase.
std::string during(Phase p) {
  if (p == Phase::Unknown) return "(the log does not show in which phase)";
  return std::string("during ") + phase_info(p).name;
}

std::string phase_of_traces(const LogSummary& s, const ProcessInfo** who) {
  for (const auto& p : s.processes)
    if (p.first_error_code && !trace_fallback(s, p)) {
      *who = &p;
      if (p.first_error_trace && p.first_error_trace->rfind("bootstrap", 0) == 0)
        return during(Phase::Bootstrap);
      // The failing call's file says where it was when the process's lines do not.
      if (p.phase == Phase::Unknown && p.first_error_trace)
        if (auto hint = phase_hint("", *p.first_error_trace)) return during(*hint);
      return during(p.phase);
    }
  return "";
}

std::string transport_verdict(const LogSummary& s, const Totals& t) {
  std::string v;
  if (t.net > 0) {
    if (t.socket == t.net) {
      v = t.net == 1 ? "no RDMA: the one network connection on TCP sockets (NET/Socket)"
                     : "no RDMA: all " + std::to_string(t.net) + " network connections on TCP sockets (NET/Socket)";
    } else if (t.socket > 0) {
      v = "RDMA on " + std::to_string(t.rdma) + " of " + std::to_string(t.net) + " network connections, " +
          std::to_string(t.socket) + " on TCP sockets";
    } else {
      v = (t.net == 1 ? std::string("RDMA in use on the one network connection")
                      : "RDMA in use on all " + std::to_string(t.net) + " network connections") +
          ", GPUDirect RDMA on " +
          std::to_string(t.gdr) + "/" + std::to_string(t.rdma);
    }
    auto hcas = used_devices(s, false);
    if (t.rdma > 0 && !hcas.empty()) v += " over " + core::join(hcas, ",", 8);
    auto socks = used_devices(s, true);
    if (t.socket > 0 && !socks.empty()) {
      v += " over " + core::join(socks, ",", 4);
      if (auto odd = first_suspicious_socket_if(s)) v += " (" + *odd + ")";
    }
    if (t.local > 0) v += "; intra-node: " + transport_mix(s, false);
  } else if (t.local > 0) {
    bool all_p2p = true;
    for (const auto& c : s.comms)
      for (const auto& tc : c.transports)
        if (!tc.network && tc.transport.rfind("P2P/", 0) != 0) all_p2p = false;
    v = std::string(all_p2p ? "intra-node only: GPU peer-to-peer (P2P) on all " : "intra-node only: ") +
        (all_p2p ? std::to_string(t.local) + " connections (" + transport_mix(s, false) + ")" : transport_mix(s, false));
  }
  return v;
}

}  // namespace

std::string finding_id(const std::string& signature_id) { return "nccllog." + signature_id; }

Totals totals(const LogSummary& s) {
  Totals t;
  for (const auto& c : s.comms) {
    t.net += c.net_connections;
    t.rdma += c.net_rdma_connections;
    t.gdr += c.net_gdr_connections;
    t.socket += c.net_socket_connections;
    t.local += c.local_connections;
    for (const auto& r : c.ranks) {
      ++t.ranks;
      if (r.init_complete) ++t.ranks_complete;
      if (r.init_started) ++t.ranks_started;
    }
  }
  return t;
}

std::span<const SummaryRule> summary_rules() { return kSummaryRules; }

void to_json(json& j, const Causality& c) {
  std::vector<json> rules;
  for (const char* r : c.rule) rules.push_back(r ? json(r) : json(nullptr));
  j = json{{"first_cause", c.first_cause},
           {"only_consequences", c.only_consequences},
           {"hang", c.hang},
           {"consequences", c.consequences},
           {"causes", c.causes},
           {"order", c.order},
           {"follows", c.follows},
           {"consequence_rule", rules},
           {"cause_rules", c.rules_applied},
           {"notes", c.notes}};
}

Causality reason(const LogSummary& s) {
  Causality c;
  const auto& f = s.failures;
  const std::size_t n = f.size();
  c.order.resize(n);
  for (std::size_t i = 0; i < n; ++i) c.order[i] = i;
  // Timestamps order lines across processes; without one on every line, reading order (within a
  // file it is the process's own order) is all there is.
  if (n > 0 && std::all_of(f.begin(), f.end(), [](const Failure& x) { return x.time.has_value(); }))
    std::stable_sort(c.order.begin(), c.order.end(), [&](std::size_t a, std::size_t b) { return *f[a].time < *f[b].time; });
  c.follows.assign(n, -1);
  c.rule.assign(n, nullptr);
  for (std::size_t i = 0; i < n; ++i)
    if (const ConsequenceRule* r = match_consequence(f[i])) c.rule[i] = r->id;
  for (int pass = 0; pass < 2 && !c.first_cause; ++pass)
    for (std::size_t i : c.order)
      if (!c.rule[i] && (pass == 1 || f[i].severity == Severity::Fail)) {
        c.first_cause = i;
        break;
      }
  if (!c.first_cause && n > 0) {
    c.first_cause = c.order[0];
    c.only_consequences = true;
  }
  // A collective timeout that comes before every cause (in time, when every line has a time;
  // or with no cause at all) is where the job stopped: NCCL's errors after it are the abort's.
  if (n > 0 && f[c.order[0]].id == "collective_timeout" &&
      (c.only_consequences ||
       std::all_of(f.begin(), f.end(), [](const Failure& x) { return x.time.has_value(); }))) {
    c.first_cause = c.order[0];
    c.only_consequences = false;
    c.hang = true;
    c.rule[c.order[0]] = nullptr;
  }
  // The same WARN again on the same process (an async event NCCL prints per poll) is that failure
  // repeated, not another cause.
  {
    std::set<std::tuple<std::string, std::string, long>> seen;
    for (std::size_t i : c.order) {
      if (c.rule[i] || f[i].host.empty()) continue;
      if (!seen.insert({f[i].id, f[i].host, f[i].pid}).second && i != *c.first_cause) c.rule[i] = "repeated";
    }
  }
  std::map<std::pair<std::string, long>, std::size_t> last_cause;  // (host, pid) -> failure
  for (std::size_t i : c.order) {
    if (!c.rule[i]) {
      ++c.causes;
      if (!f[i].host.empty()) last_cause[{f[i].host, f[i].pid}] = i;
      continue;
    }
    if (c.only_consequences && i == *c.first_cause) continue;
    auto it = f[i].host.empty() ? last_cause.end() : last_cause.find({f[i].host, f[i].pid});
    c.follows[i] = static_cast<long>(it != last_cause.end() ? it->second : *c.first_cause);
  }
  if (!c.first_cause) return c;
  for (long x : c.follows) c.consequences += x == static_cast<long>(*c.first_cause);
  const Failure& cause = f[*c.first_cause];
  CauseContext ctx{s, cause, process_of(s, cause.host, cause.pid)};
  for (const CauseRule& r : cause_rules()) {
    if (!r.applies(ctx)) continue;
    c.rules_applied.push_back(r.id);
    c.notes.push_back(r.note(ctx));
    c.remedies.push_back(r.remedy(ctx));
  }
  const char* phase_remedy = phase_info(cause.phase).remedy;
  if (phase_remedy_applies(cause.id) && !c.hang && phase_remedy[0] != '\0') c.remedies.push_back(phase_remedy);
  return c;
}

Diagnosis diagnose(const LogSummary& s) {
  Diagnosis d;
  const Totals t = totals(s);
  d.causality = reason(s);
  const Causality& c = d.causality;
  const RuleInput in{s, t, c};
  for (const SummaryRule& r : kSummaryRules) r.apply(in, d.findings);
  catalog_findings(s, c, d.findings);
  const std::uint64_t nccl_lines = nccl_line_count(s);
  if (nccl_lines > 0 && s.channel_lines == 0 && worst(d.findings) < Severity::Fail) {
    d.findings.push_back(
        make_finding("nccllog.no_transport_lines", Severity::Info, "input",
                     "no \"Channel ... via\" lines: transports cannot be judged",
                     std::to_string(nccl_lines) + " NCCL lines, none naming a transport",
                     "Use NCCL_DEBUG=INFO with NCCL_DEBUG_SUBSYS unset or including INIT (and NET).", kDocs));
  }
  std::stable_sort(d.findings.begin(), d.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.severity > b.severity; });

  // --- the first cause, first
  const Failure* cause = c.first_cause ? &s.failures[*c.first_cause] : nullptr;
  // The job failed when any failure line is of severity fail; the cause may be a WARN the
  // catalog does not know, as long as failures follow it.
  const bool failed = cause && std::any_of(s.failures.begin(), s.failures.end(),
                                           [](const Failure& f) { return f.severity == Severity::Fail; });
  std::string v;
  if (failed) {
    std::string where = failure_where(*cause);
    std::string msg = failure_title(*cause) + (where.empty() ? "" : " on " + where);
    std::string head = "NCCL failed " + during(cause->phase) + ": " + msg;
    if (c.only_consequences) {
      // Only a framework's lines (no NCCL WARN at all): NCCL's own words are missing, not a peer's.
      const bool framework_only = std::none_of(s.failures.begin(), s.failures.end(), [](const Failure& f) {
        return f.line.find("NCCL WARN") != std::string::npos || !f.source.empty();
      });
      head += framework_only ? " (the cause is not in these lines: the log has no NCCL WARN; run with NCCL_DEBUG=WARN "
                               "or INFO to see it)"
                             : " (a consequence; the failing peer's log is not among the inputs)";
    }
    if (c.hang) {
      head += " with no NCCL error before it: a hang (a rank that never reached this collective, "
              "collectives issued from two threads on one communicator, or ranks out of step)";
      if (std::string split = watchdog_groups(s); !split.empty()) head += "; " + split;
    }
    if (c.consequences > 0)
      head += "; " + std::to_string(c.consequences) + " later error(s) follow from it";
    for (const auto& note : c.notes) head += "; " + note;
    std::string ev = cause->input + ": " + cause->line;
    if (c.causes > 1) ev += "; " + std::to_string(c.causes - 1) + " other cause(s) after it";
    const Signature* sig = signature_by_id(cause->id);
    std::string remedy = core::join(c.remedies, " ", 8);
    if (sig) remedy = remedy.empty() ? sig->remedy : remedy + " " + sig->remedy;
    d.findings.insert(d.findings.begin(),
                      make_finding("nccllog.first_cause", Severity::Fail, where.empty() ? "log" : where,
                                   "first cause: " + msg + " (" + during(cause->phase) + ")" +
                                       (c.consequences > 0 ? "; " + std::to_string(c.consequences) +
                                                                 " later error(s) follow from it"
                                                           : ""),
                                   ev, remedy, kDocs));
    v = head;
    std::string tv = transport_verdict(s, t);
    // A failure while connecting: the Channel lines name connections NCCL set out to make, which
    // need not have worked.
    if (!tv.empty())
      v += (cause->phase == Phase::Connect ? "; channels listed before the failure: " : "; transports: ") + tv;
  } else if (nccl_lines == 0) {
    v = "no NCCL log lines found (run with NCCL_DEBUG=INFO)";
  } else {
    v = transport_verdict(s, t);
    if (v.empty()) {
      const ProcessInfo* who = nullptr;
      std::string phase = phase_of_traces(s, &who);
      if (who) {
        v = "NCCL failed " + phase + ": " + nccl_result_name(*who->first_error_code) + " returned" +
            (who->first_error_trace ? " from " + *who->first_error_trace : "") + " on " + proc_name(*who) +
            " with no WARN naming the cause";
        if (who->bootstrap_if) v += "; bootstrap interface " + *who->bootstrap_if;
      } else if (std::string facts = excerpt_facts(s); !facts.empty()) {
        v = facts;
      } else {
        v = "no transport lines in the log (NCCL_DEBUG_SUBSYS without INIT?)";
      }
    }
    for (const FallbackRule* r : fallbacks_in(s)) v += std::string("; ") + r->note;
  }
  if (t.ranks > 0) {
    v += "; Init COMPLETE on " + std::to_string(t.ranks_complete) + "/" + std::to_string(t.ranks) + " ranks";
  }
  d.verdict = v;
  return d;
}

}  // namespace fabscope::nccllog
