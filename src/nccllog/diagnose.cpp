#include "nccllog/diagnose.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/strings.hpp"
#include "nccllog/signatures.hpp"

namespace fabscope::nccllog {

namespace {

constexpr const char* kDocs = "docs/nccllog.md";

std::string proc_name(const ProcessInfo& p) { return p.host + ":" + std::to_string(p.pid); }

std::vector<std::string> hosts_where(const LogSummary& s, bool (*pred)(const ProcessInfo&)) {
  std::vector<std::string> out;
  for (const auto& p : s.processes)
    if (pred(p) && std::find(out.begin(), out.end(), p.host) == out.end()) out.push_back(p.host);
  return out;
}

std::string nic_list(const LogSummary& s) {
  std::vector<std::string> nics;
  for (const auto& p : s.processes)
    for (const auto& n : p.ib_nics) {
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
  for (const auto& p : s.processes) {
    auto it = p.env.find(name);
    if (it != p.env.end() && it->second == value) return true;
  }
  return false;
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

Diagnosis diagnose(const LogSummary& s) {
  Diagnosis d;
  const Totals t = totals(s);
  std::uint64_t nccl_lines = 0, cut = 0;
  for (const auto& in : s.inputs) {
    nccl_lines += in.nccl_lines;
    cut += in.cut_lines;
  }
  const bool any_ib_nics =
      std::any_of(s.processes.begin(), s.processes.end(), [](const ProcessInfo& p) { return !p.ib_nics.empty(); });

  // --- network transports
  if (t.socket > 0) {
    std::string ev = "NET/Socket on " + std::to_string(t.socket) + " of " + std::to_string(t.net) +
                     " network connections";
    if (env_says(s, "NCCL_IB_DISABLE", "1")) ev += "; NCCL_IB_DISABLE=1 set by environment";
    if (any_ib_nics) {
      d.findings.push_back(make_finding(
          "nccllog.net_socket_with_rdma_nics", Severity::Fail, "network",
          "network traffic on TCP sockets although NET/IB listed RDMA devices",
          ev + "; NET/IB listed " + nic_list(s),
          "Find why those ranks did not use IB: NCCL_IB_DISABLE / NCCL_NET=Socket in their environment, an "
          "NCCL_IB_HCA filter that matches nothing on some nodes, or ports down there (fabscope check).",
          kDocs));
    } else {
      auto no_dev = hosts_where(s, [](const ProcessInfo& p) { return p.ib_no_device; });
      if (!no_dev.empty()) ev += "; \"NET/IB : No device found\" on " + core::join(no_dev, ", ", 8);
      d.findings.push_back(make_finding(
          "nccllog.net_socket_no_rdma", Severity::Warn, "network",
          "network traffic on TCP sockets: no RDMA device was usable", ev,
          "If the nodes have InfiniBand/RoCE NICs: load the drivers (mlx5_ib, ib_uverbs), install rdma-core "
          "in the image, expose /dev/infiniband to containers, and check NCCL_IB_HCA. Without RDMA NICs, "
          "expect a fraction of the bandwidth.",
          kDocs));
    }
  }
  if (t.rdma > 0 && t.gdr < t.rdma) {
    d.findings.push_back(make_finding(
        "nccllog.gdrdma_absent", Severity::Warn, "network",
        "GPUDirect RDMA not used on " + std::to_string(t.rdma - t.gdr) + " of " + std::to_string(t.rdma) +
            " RDMA connections (data staged through host memory)",
        "GDRDMA on " + std::to_string(t.gdr) + "/" + std::to_string(t.rdma) + " RDMA connections; " +
            transport_mix(s, true),
        "Load nvidia_peermem (or use a driver and kernel with dma-buf), keep GPU and NIC under the same "
        "PCIe switch, check NCCL_NET_GDR_LEVEL and NCCL_NET_GDR_READ, and that ACS is off (fabscope check).",
        kDocs));
  }
  {
    auto failed = hosts_where(s, [](const ProcessInfo& p) {
      return std::find(p.failed_plugins.begin(), p.failed_plugins.end(), "IB") != p.failed_plugins.end();
    });
    if (!failed.empty()) {
      auto no_dev = hosts_where(s, [](const ProcessInfo& p) { return p.ib_no_device; });
      d.findings.push_back(make_finding(
          "nccllog.ib_init_failed", t.net > 0 && any_ib_nics ? Severity::Warn : Severity::Info,
          core::join(failed, ", ", 8),
          "the NET/IB transport failed to initialise" +
              std::string(no_dev.empty() ? "" : " (\"NET/IB : No device found\")"),
          "\"Failed to initialize NET plugin IB\" on " + core::join(failed, ", ", 8),
          "Nothing to do on nodes without RDMA NICs; otherwise check that ibv_devinfo lists the HCAs inside "
          "the job's environment and that NCCL_IB_HCA matches them.",
          kDocs));
    }
  }

  // --- initialisation
  {
    std::vector<std::string> incomplete;
    for (const auto& c : s.comms)
      for (const auto& r : c.ranks)
        if ((r.init_started || r.nnodes) && !r.init_complete)
          incomplete.push_back("rank " + std::to_string(r.rank) + " on " + r.host + ":" + std::to_string(r.pid) +
                               " (comm " + c.key + ")");
    if (!incomplete.empty()) {
      d.findings.push_back(make_finding(
          "nccllog.init_incomplete", Severity::Fail, "communicator",
          std::to_string(incomplete.size()) + " rank(s) never reached Init COMPLETE",
          core::join(incomplete, "; ", 8),
          "Read the first WARN of those ranks (listed in this report); a rank that stops without one is "
          "usually waiting for a peer that failed or was never started.",
          kDocs));
    }
    std::vector<std::string> errs;
    for (const auto& p : s.processes)
      if (p.first_error_code)
        errs.push_back(proc_name(p) + " " + nccl_result_name(*p.first_error_code) + " (" +
                       std::to_string(*p.first_error_code) + ")");
    if (!errs.empty()) {
      d.findings.push_back(
          make_finding("nccllog.nccl_call_failed", Severity::Fail, "process",
                       "NCCL calls returned an error in " + std::to_string(errs.size()) + " process(es)",
                       core::join(errs, "; ", 8),
                       "The WARN lines just before the \"file:line -> N\" trace name the cause; see the "
                       "matching findings.",
                       kDocs));
    }
    for (const auto& c : s.comms) {
      std::set<int> seen;
      for (const auto& r : c.ranks)
        if (r.rank >= 0) seen.insert(r.rank);
      if (c.nranks > 0 && !seen.empty() && static_cast<int>(seen.size()) < c.nranks) {
        d.findings.push_back(make_finding(
            "nccllog.ranks_missing", Severity::Info, "comm " + c.key,
            "the log shows " + std::to_string(seen.size()) + " of " + std::to_string(c.nranks) +
                " ranks of this communicator",
            "ranks seen: " + std::to_string(seen.size()) + ", nranks " + std::to_string(c.nranks),
            "Pass every rank's log (NCCL_DEBUG_FILE=/shared/nccl.%h.%p) to judge the whole job.", kDocs));
      }
    }
  }

  // --- versions
  if (s.versions.size() > 1) {
    std::vector<std::string> per;
    for (const auto& v : s.versions) {
      std::vector<std::string> hosts;
      for (const auto& p : s.processes)
        if (p.nccl_version == v && std::find(hosts.begin(), hosts.end(), p.host) == hosts.end())
          hosts.push_back(p.host);
      per.push_back(v + (hosts.empty() ? "" : " on " + core::join(hosts, ",", 4)));
    }
    d.findings.push_back(make_finding(
        "nccllog.version_mismatch", Severity::Fail, "job", "ranks run different NCCL versions",
        core::join(per, "; ", 8),
        "Use one NCCL build everywhere (same container image; no system libnccl shadowing the framework's).",
        kDocs));
  }

  // --- catalog of WARN/error lines
  for (const auto& h : s.hits) {
    const Signature* sig = nullptr;
    for (const auto& x : signatures())
      if (h.id == x.id) sig = &x;
    if (!sig) continue;
    std::string ev = std::to_string(h.count) + "x";
    if (!h.hosts.empty()) ev += " on " + core::join(h.hosts, ",", 4);
    if (h.wc_status) ev += "; status " + std::to_string(*h.wc_status) + " = " + wc_status_name(*h.wc_status);
    ev += "; first at " + h.first_input + ": " + h.first_line;
    d.findings.push_back(make_finding(std::string("nccllog.") + sig->id, sig->severity,
                                      h.hosts.empty() ? "log" : core::join(h.hosts, ",", 4), sig->title, ev,
                                      sig->remedy, kDocs));
  }
  if (s.unknown_warnings > 0) {
    d.findings.push_back(
        make_finding("nccllog.unknown_warning", Severity::Warn, "log",
                     std::to_string(s.unknown_warnings) + " NCCL WARN line(s) not in the catalog",
                     core::join(s.unknown_samples, " | ", 5),
                     "Read them in context; known causes are listed in docs/nccllog.md.", kDocs));
  }

  // --- the input itself
  if (nccl_lines == 0) {
    d.findings.push_back(
        make_finding("nccllog.no_nccl_lines", Severity::Warn, "input", "no NCCL log lines in the input",
                     std::to_string(s.inputs.size()) + " input(s), 0 lines with NCCL INFO/WARN",
                     "Run the job with NCCL_DEBUG=INFO (and NCCL_DEBUG_FILE=/path/nccl.%h.%p for one "
                     "file per rank).",
                     kDocs));
  } else if (s.channel_lines == 0 && worst(d.findings) < Severity::Fail) {
    d.findings.push_back(
        make_finding("nccllog.no_transport_lines", Severity::Info, "input",
                     "no \"Channel ... via\" lines: transports cannot be judged",
                     std::to_string(nccl_lines) + " NCCL lines, none naming a transport",
                     "Use NCCL_DEBUG=INFO with NCCL_DEBUG_SUBSYS unset or including INIT (and NET).", kDocs));
  }
  if (cut > 0) {
    d.findings.push_back(
        make_finding("nccllog.lines_cut", Severity::Info, "input",
                     std::to_string(cut) + " over-long line(s) were cut", "cut at the line cap",
                     "None needed; NCCL's own lines are below 1 KiB, so cut lines are other output.", kDocs));
  }
  if (s.dropped_entities > 0) {
    d.findings.push_back(
        make_finding("nccllog.entities_dropped", Severity::Info, "input",
                     "more processes or ranks than the analyzer keeps; extra ones were not tracked",
                     std::to_string(s.dropped_entities) + " lines not attributed",
                     "Analyze fewer files at a time.", kDocs));
  }

  std::stable_sort(d.findings.begin(), d.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.severity > b.severity; });

  // --- verdict
  std::string v;
  if (nccl_lines == 0) {
    v = "no NCCL log lines found (run with NCCL_DEBUG=INFO)";
  } else if (t.net > 0) {
    if (t.socket == t.net) {
      v = "no RDMA: all " + std::to_string(t.net) + " network connections on TCP sockets (NET/Socket)";
    } else if (t.socket > 0) {
      v = "RDMA on " + std::to_string(t.rdma) + " of " + std::to_string(t.net) + " network connections, " +
          std::to_string(t.socket) + " on TCP sockets";
    } else {
      v = "RDMA in use on all " + std::to_string(t.net) + " network connections, GPUDirect RDMA on " +
          std::to_string(t.gdr) + "/" + std::to_string(t.rdma);
    }
    if (t.local > 0) v += "; intra-node: " + transport_mix(s, false);
  } else if (t.local > 0) {
    bool all_p2p = true;
    for (const auto& c : s.comms)
      for (const auto& tc : c.transports)
        if (!tc.network && tc.transport.rfind("P2P/", 0) != 0) all_p2p = false;
    v = std::string(all_p2p ? "intra-node only: GPU peer-to-peer (P2P) on all " : "intra-node only: ") +
        (all_p2p ? std::to_string(t.local) + " connections (" + transport_mix(s, false) + ")"
                 : transport_mix(s, false));
  } else {
    // Name the cause, not its consequence: a catalog WARN beats "a call returned an error".
    const Finding* first_fail = nullptr;
    for (const auto& f : d.findings)
      if (f.severity == Severity::Fail && f.id != "nccllog.nccl_call_failed" && f.id != "nccllog.init_incomplete") {
        first_fail = &f;
        break;
      }
    for (const auto& f : d.findings)
      if (!first_fail && f.severity == Severity::Fail) first_fail = &f;
    v = first_fail ? "NCCL failed: " + first_fail->message + " (no transport lines in the log)"
                   : "no transport lines in the log (NCCL_DEBUG_SUBSYS without INIT?)";
  }
  if (t.ranks > 0) {
    v += "; Init COMPLETE on " + std::to_string(t.ranks_complete) + "/" + std::to_string(t.ranks) + " ranks";
  }
  d.verdict = v;
  return d;
}

}  // namespace fabscope::nccllog
