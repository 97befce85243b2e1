#include "nccllog/render.hpp"

#include <algorithm>
#include <sstream>

#include "core/finding_text.hpp"
#include "core/strings.hpp"
#include "core/table.hpp"

namespace fabscope::nccllog {

namespace {

std::string opt_str(const std::optional<std::string>& v) { return v ? *v : "-"; }

std::string driver(const std::optional<long>& v) {
  if (!v) return "-";
  // cudaDriverVersion 12080 = CUDA 12.8
  return std::to_string(*v / 1000) + "." + std::to_string((*v % 1000) / 10);
}

std::string nics(const ProcessInfo& p) {
  std::string out;
  for (const auto& n : p.ib_nics) out += (out.empty() ? "" : " ") + n.name + "/" + n.link_layer;
  if (out.empty() && p.ib_no_device) out = "IB: no device";
  return out.empty() ? "-" : out;
}

}  // namespace

std::string render_text(const LogSummary& s, const Diagnosis& d, const ReportOptions& opt) {
  std::ostringstream o;
  const std::size_t w = opt.width;
  o << core::wrap("verdict: " + d.verdict, w, "");
  std::uint64_t lines = 0, nccl = 0, cut = 0;
  for (const auto& in : s.inputs) {
    lines += in.lines;
    nccl += in.nccl_lines;
    cut += in.cut_lines;
  }
  const SeverityCounts n = count_severities(d.findings);
  std::string input = "input: " + std::to_string(s.inputs.size()) + " file(s), " + std::to_string(lines) + " lines, " +
                      std::to_string(nccl) + " NCCL lines";
  if (cut) input += ", " + std::to_string(cut) + " cut";
  input += "; " + std::to_string(s.processes.size()) + " process(es)";
  if (s.unprefixed) input += " (and lines without host:pid)";
  input += ", " + std::to_string(s.comms.size()) + " communicator(s)";
  o << core::wrap(input, w, "");
  o << "findings: " << n.fail << " fail, " << n.warn << " warn, " << n.info << " info\n";

  if (!d.findings.empty()) o << "\nFindings\n" << core::render_finding_blocks(d.findings, w);

  if (!s.comms.empty()) {
    o << "\nCommunicators\n";
    core::Table t({"comm", "ranks", "nodes", "init", "network (GDRDMA)", "intra-node"});
    t.align_right(1).align_right(2);
    for (const auto& c : s.comms) {
      long complete = 0;
      for (const auto& r : c.ranks) complete += r.init_complete ? 1 : 0;
      std::string net, local;
      for (const auto& tc : c.transports) {
        std::string item = tc.transport + " " + std::to_string(tc.connections);
        std::string& dst = tc.network ? net : local;
        dst += (dst.empty() ? "" : ", ") + item;
      }
      if (c.net_connections > 0)
        net += " (" + std::to_string(c.net_gdr_connections) + "/" + std::to_string(c.net_rdma_connections) + ")";
      if (c.nvls) local += (local.empty() ? "" : ", ") + std::string("NVLS");
      t.add({c.key, c.nranks > 0 ? std::to_string(c.nranks) : "?", c.nnodes ? std::to_string(*c.nnodes) : "?",
             c.ranks.empty() ? "-" : std::to_string(complete) + "/" + std::to_string(c.ranks.size()),
             net.empty() ? "-" : net, local.empty() ? "-" : local});
    }
    o << t.render(w);
  }

  if (!s.processes.empty()) {
    o << "\nProcesses\n";
    core::Table t({"host:pid", "NCCL", "CUDA", "bootstrap", "network", "RDMA NICs"});
    for (const auto& p : s.processes)
      t.add({host_pid(p.host, p.pid), opt_str(p.nccl_version), driver(p.cuda_driver),
             opt_str(p.bootstrap_if), opt_str(p.network), nics(p)});
    o << t.render(w);
  }

  // What NCCL turned on or off, once per distinct decision, with the hosts that said it.
  {
    struct Row {
      const Decision* d;
      std::vector<std::string> hosts;
      long lines = 0;
    };
    std::vector<Row> rows;
    auto add = [&](const ProcessInfo& p) {
      for (const auto& d : p.decisions) {
        auto it = std::find_if(rows.begin(), rows.end(), [&](const Row& r) {
          return r.d->feature == d.feature && r.d->enabled == d.enabled && r.d->scope == d.scope && r.d->reason == d.reason;
        });
        if (it == rows.end()) it = rows.insert(rows.end(), Row{&d, {}, 0});
        it->lines += d.count;
        const std::string h = p.host.empty() ? "(no host:pid)" : p.host;
        if (std::find(it->hosts.begin(), it->hosts.end(), h) == it->hosts.end()) it->hosts.push_back(h);
      }
    };
    for (const auto& p : s.processes) add(p);
    if (s.unprefixed) add(*s.unprefixed);
    if (!rows.empty()) {
      o << "\nDecisions NCCL reported\n";
      core::Table t({"feature", "state", "where", "why", "lines", "hosts"});
      t.align_right(4);
      for (const auto& r : rows) {
        const bool setting = r.d->feature.rfind("NCCL_", 0) == 0;
        const bool capability = r.d->feature == "DMA-BUF";  // a check of every init, not a choice
        t.add({r.d->feature, setting ? r.d->reason : capability ? "available" : (r.d->enabled ? "on" : "off"), r.d->scope.empty() ? "-" : r.d->scope,
               setting ? "set by the plugin" : (r.d->reason.empty() ? "-" : r.d->reason), std::to_string(r.lines),
               core::join(r.hosts, ",", 4)});
      }
      o << t.render(w);
    }
  }

  if (opt.hosts) {
    for (const auto& c : s.comms) {
      if (c.ranks.empty() && c.pairs.empty()) continue;
      o << "\nComm " << c.key << ": ranks\n";
      core::Table t({"rank", "host:pid", "dev", "nNodes", "localRanks", "init", "init_s"});
      t.align_right(0).align_right(2).align_right(3).align_right(4).align_right(6);
      for (const auto& r : c.ranks)
        t.add({std::to_string(r.rank), host_pid(r.host, r.pid), std::to_string(r.cuda_dev),
               r.nnodes ? std::to_string(*r.nnodes) : "-", r.local_ranks ? std::to_string(*r.local_ranks) : "-",
               r.init_complete ? "COMPLETE" : r.init_started ? "started" : "-",
               r.init_total_s ? core::format_double(*r.init_total_s, 2) : "-"});
      if (t.rows()) o << t.render(w);
      if (!c.pairs.empty()) {
        o << "Comm " << c.key << ": transport per peer pair (channels)\n";
        core::Table p({"from", "to", "transport", "channels"});
        p.align_right(0).align_right(1).align_right(3);
        for (const auto& pp : c.pairs)
          p.add({std::to_string(pp.from), std::to_string(pp.to), pp.transport, std::to_string(pp.channels)});
        o << p.render(w);
        if (c.pairs_dropped) o << "(" << c.pairs_dropped << " more pairs not kept)\n";
      }
    }
    bool any_env = false;
    for (const auto& p : s.processes) any_env = any_env || !p.env.empty();
    if (any_env) {
      o << "\nEnvironment overrides reported by NCCL\n";
      core::Table t({"host:pid", "variable", "value"});
      for (const auto& p : s.processes)
        for (const auto& [k, v] : p.env) t.add({host_pid(p.host, p.pid), k, v});
      o << t.render(w);
    }
  }
  // Host names, communicator keys, WARN text and variables are the log's text: no terminal
  // escape sequence in it reaches the terminal.
  return core::printable_lines(o.str());
}

json report_json(const LogSummary& s, const Diagnosis& d) {
  Severity worst_sev = worst(d.findings);
  return json{{"schema", "fabscope.nccllog"},
              {"schema_version", kSchemaVersion},
              {"verdict", d.verdict},
              {"severity", to_string(worst_sev)},
              {"exit_code", exit_code_for(d.findings)},
              {"findings", d.findings},
              {"causality", d.causality},
              {"summary", s}};
}

}  // namespace fabscope::nccllog
