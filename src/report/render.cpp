#include "report/render.hpp"

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "report/html.hpp"
#include "report/mesh.hpp"

namespace fabscope::report {

namespace {

// A node's name in tables: its hostname, or the input's label where the JSON has none (a
// capture taken with --root has no hostname file).
std::string node_name(const Input& in) {
  if (in.kind == InputKind::Cluster) return "cluster " + in.label;
  if (in.kind == InputKind::Fabric) return "fabric " + in.label;
  if (in.kind == InputKind::Mesh) return in.mesh.node;
  if (in.kind == InputKind::Job) return in.job.node;
  if (in.kind == InputKind::Rdma) return rdma_host(in.rdma.local).empty() ? in.label : rdma_host(in.rdma.local);
  return in.node.hostname.empty() ? in.label : in.node.hostname;
}

// The findings an input carries: node checks, cluster verdicts, an rdma run's findings.
const std::vector<Finding>* findings_of(const Input& in) {
  switch (in.kind) {
    case InputKind::Node: return &in.node.findings;
    case InputKind::Cluster: return &in.cluster.findings;
    case InputKind::Rdma: return &in.rdma.findings;
    case InputKind::Fabric: return in.fabric.judged ? &in.fabric.findings : nullptr;  // --save: not judged
    default: return nullptr;
  }
}

// Check ids break after '.' and '_' rather than anywhere, on narrow screens.
std::string breakable_id(const std::string& id) {
  std::string o;
  for (char c : id) {
    o += esc(std::string(1, c));
    if (c == '.' || c == '_') o += "<wbr>";
  }
  return o;
}

std::string sev_cell(const std::string& sev) {
  return "<td data-label=\"severity\" class=\"sev sev-" + esc(sev) + "\">" + esc(sev) + "</td>";
}

std::string node_verdict(const NodeDoc& n) {
  std::string counts = std::to_string(n.fail) + " fail, " + std::to_string(n.warn) + " warn, " +
                       std::to_string(n.info) + " info";
  if (!n.verdict.empty())
    return "<span class=\"verdict-" + esc(n.verdict) + "\">" + esc(n.verdict) + "</span> (" + counts + ")";
  return "<span class=\"sev sev-" + esc(n.worst) + "\">" + esc(n.worst) + "</span> (" + counts + ")";
}

std::string bench_verdict(const BenchRun& b) {
  const BenchPeak peak = bench_peak(b);
  std::string s = peak.known ? "peak busbw " + fmt(peak.busbw_gbytes_per_s, 1) + " GB/s at " + format_size(peak.size_bytes)
                             : std::string("no peak busbw (one rank crosses no link)");
  if (b.limit_gbytes_per_s && peak.known)
    s += ", " + fmt(100 * peak.busbw_gbytes_per_s / *b.limit_gbytes_per_s, 0) + "% of the " + esc(b.limit_path) + " limit";
  if (!b.verdict_level.empty() && b.verdict_level != "unknown")
    s = "<span class=\"verdict-" + esc(b.verdict_level) + "\">" + esc(b.verdict_level) + "</span>: " + s;
  if (b.wrong_total && *b.wrong_total > 0)
    s += ", <span class=\"sev sev-fail\">" + std::to_string(*b.wrong_total) + " wrong values</span>";
  return s;
}

std::string bench_versions(const BenchRun& b) {
  std::vector<std::string> v;
  if (!b.tool_version.empty()) v.push_back(b.source + " " + b.tool_version);
  else v.push_back(b.source);
  if (!b.nccl_version.empty()) v.push_back("NCCL " + b.nccl_version);
  if (!b.cuda_driver.empty()) v.push_back("CUDA driver " + b.cuda_driver);
  if (!b.nvidia_driver.empty()) v.push_back("NVIDIA driver " + b.nvidia_driver);
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

bool docs_path_is_linkable(const std::string& docs) {
  if (docs.size() > 200 || !docs.starts_with("docs/") || docs.find("..") != std::string::npos ||
      docs.find("//") != std::string::npos)
    return false;
  const auto hash = docs.find('#');
  const std::string page = docs.substr(0, hash);
  if (page.size() < 9 || !page.ends_with(".md")) return false;  // "docs/" NAME ".md"
  if (hash != std::string::npos && docs.find('#', hash + 1) != std::string::npos) return false;
  return std::all_of(docs.begin(), docs.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-' || c == '/' || c == '#';
  });
}

void check_docs_url(const std::string& url) {
  if (url.empty()) return;
  auto bad = [&](const std::string& why) {
    return UsageError("report: --docs-url '" + core::printable(url.substr(0, 100)) + "': " + why);
  };
  if (url.size() > 500) throw bad("longer than 500 characters");
  const bool url_safe = std::all_of(url.begin(), url.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("-._~/:%@+=,").find(c) != std::string_view::npos;
  });
  if (!url_safe) throw bad("only letters, digits and -._~/:%@+=, may appear (no quotes, spaces, '?', '#' or '<')");
  const auto colon = url.find(':');
  const auto slash = url.find('/');
  if (colon != std::string::npos && (slash == std::string::npos || colon < slash)) {
    const std::string scheme = core::lower(url.substr(0, colon));
    if (scheme != "http" && scheme != "https" && scheme != "file")
      throw bad("the scheme must be http, https or file (or give a relative path)");
    if (url.compare(colon, 3, "://") != 0) throw bad("expected " + scheme + "://");
  }
  if (url.back() != '/') throw bad("a prefix ends with '/' (the links are it + \"docs/checks.md#...\")");
}

std::string default_docs_url() { return FABSCOPE_DOCS_URL; }

std::string docs_href(const Report& r, const std::string& docs) {
  if (!docs_path_is_linkable(docs)) return "";
  // Absolute by default: a relative "docs/checks.md" resolves against wherever the HTML file is
  // opened from (a mail attachment, a ticket), where no docs/ lies.
  return (r.docs_url.empty() ? default_docs_url() : r.docs_url) + docs;
}

std::string render_summary(const Report& r) {
  std::string o = "<section id=\"summary\"><h2>Summary</h2><div class=\"scroll\"><table class=\"inputs cards\">"
                  "<thead><tr><th>input</th><th>what</th><th>node(s)</th><th>verdict</th>"
                  "<th>versions and setup</th></tr></thead><tbody>";
  for (const auto& in : r.inputs) {
    o += "<tr data-schema=\"" + esc(in.schema) + "\"><td data-label=\"input\"><span class=\"mono\">" + esc(in.file) + "</span>";
    if (in.label != in.file) o += "<br><span class=\"muted\">" + esc(in.label) + "</span>";
    o += "</td><td data-label=\"what\">" + esc(in.schema) + (in.schema_version ? " v" + std::to_string(in.schema_version) : "") + "</td>";
    if (in.kind == InputKind::Node) {
      const auto& n = in.node;
      o += "<td data-label=\"node\">" + esc(node_name(in)) + "</td><td data-label=\"verdict\">" + node_verdict(n) +
           "</td><td data-label=\"setup\">";
      std::vector<std::string> d;
      if (!n.transport.empty()) d.push_back("transport " + n.transport);
      if (n.gpus) d.push_back(std::to_string(*n.gpus) + " GPUs");
      if (n.rdma_devices) d.push_back(std::to_string(*n.rdma_devices) + " RDMA devices");
      if (!n.probe_notes.empty()) d.push_back(std::to_string(n.probe_notes.size()) + " values not read");
      std::string s;
      for (const auto& x : d) s += (s.empty() ? "" : ", ") + x;
      o += esc(s) + "</td>";
    } else if (in.kind == InputKind::Tune) {
      const tune::TuneResult& t = in.tune.run;
      int kept = 0, sizes = 0;
      double best = 1;
      for (const auto& c : t.collectives)
        for (const auto& z : c.sizes) {
          ++sizes;
          if (z.verdict.keep_tuned) {
            ++kept;
            best = std::max(best, z.verdict.speedup);
          }
        }
      std::string colls;
      for (const auto& c : t.collectives)
        colls += (colls.empty() ? "" : ", ") + std::string(bench::describe(c.collective).name);
      o += "<td data-label=\"nodes\">" + std::to_string(t.nranks) + " ranks on " + std::to_string(t.nnodes) +
           (t.nnodes == 1 ? " node" : " nodes") + "</td><td data-label=\"verdict\">" +
           (t.simulated ? "<b class=\"sev sev-warn\">SIMULATED</b> " : "") + std::to_string(kept) + " of " +
           std::to_string(sizes) + " sizes tuned" + (kept ? ", best +" + fmt((best - 1) * 100, 1) + "%" : std::string()) +
           ", " + std::to_string(in.tune.table.size()) + " table rows</td><td data-label=\"setup\">" + esc(colls) +
           "<br>" + esc(t.source) + "</td>";
    } else if (in.kind == InputKind::Cluster) {
      const auto& c = in.cluster;
      std::string verdict = "<span class=\"sev sev-" + esc(c.worst) + "\">" + esc(c.worst) + "</span> (" +
                            std::to_string(c.fail) + " fail, " + std::to_string(c.warn) + " warn, " +
                            std::to_string(c.info) + " info)";
      if (!c.slow_nodes.empty() || !c.slow_links.empty())
        verdict += ", " + std::to_string(c.slow_nodes.size()) + " slow nodes, " + std::to_string(c.slow_links.size()) +
                   " slow links";
      std::string versions;
      for (const auto& n : c.nodes)
        if (!n.fabscope_version.empty() && versions.find(n.fabscope_version) == std::string::npos)
          versions += (versions.empty() ? "fabscope " : ", ") + n.fabscope_version;
      o += "<td data-label=\"nodes\">" + std::to_string(c.nodes.size()) + " of " + std::to_string(c.world) +
           " nodes</td><td data-label=\"verdict\">" + verdict + "</td><td data-label=\"setup\">launcher " +
           esc(c.launcher) + ", pairs " + esc(c.pairs_mode) + (c.engine.empty() ? "" : " over " + esc(c.engine)) +
           "<br>" + esc(versions) + "</td>";
    } else if (in.kind == InputKind::Fabric) {
      const auto& f = in.fabric;
      std::size_t switches = 0, links = 0;
      for (const auto& n : f.subnet.nodes) switches += n.type == fabric::NodeType::Switch;
      for (std::size_t n = 0; n < f.subnet.nodes.size(); ++n)
        for (const auto& p : f.subnet.nodes[n].ports)
          links += p.remote_node >= 0 && std::pair(static_cast<int>(n), p.number) < std::pair(p.remote_node, p.remote_port);
      std::string verdict = "not judged (a --save file)";
      if (f.judged)
        verdict = "<span class=\"sev sev-" + esc(f.worst) + "\">" + esc(f.worst) + "</span> (" + std::to_string(f.fail) +
                  " fail, " + std::to_string(f.warn) + " warn, " + std::to_string(f.info) + " info)";
      o += "<td data-label=\"nodes\">" + std::to_string(switches) + " switches, " +
           std::to_string(f.subnet.nodes.size() - switches) + " other nodes</td><td data-label=\"verdict\">" + verdict +
           "</td><td data-label=\"setup\">swept from " + esc(f.subnet.source) +
           (f.subnet.swept_at.empty() ? "" : ", " + esc(f.subnet.swept_at)) + "<br>" + std::to_string(links) +
           " links, " + std::to_string(f.subnet.sms.size()) + " subnet managers</td>";
    } else if (in.kind == InputKind::Mesh) {
      const auto& m = in.mesh;
      std::size_t slow = 0, lossy = 0, silent = 0;
      std::vector<std::string> transports;
      for (const auto& s : m.series) {
        MeshPair p = judge_mesh_series(s);
        slow += p.slow, lossy += p.lossy, silent += p.no_answer;
        if (std::find(transports.begin(), transports.end(), s.transport) == transports.end()) transports.push_back(s.transport);
      }
      std::string tr;
      for (const auto& t : transports) tr += (tr.empty() ? "" : ", ") + t;
      std::string verdict = std::to_string(m.series.size()) + " peer series: " + std::to_string(slow) +
                            " with p99 above the bound, " + std::to_string(lossy) + " with loss above 0.01%, " +
                            std::to_string(silent) + " without an answer";
      o += "<td data-label=\"node\">" + esc(node_name(in)) + "</td><td data-label=\"verdict\">" + esc(verdict) +
           "</td><td data-label=\"setup\">probe mesh, " +
           (m.format == "text" ? "saved /metrics text" : "fabscope.metrics JSON") +
           (tr.empty() ? std::string() : ", transport " + esc(tr)) +
           (m.peers_listed ? ", " + fmt(*m.peers_listed, 0) + " peers listed" : std::string()) +
           "</td>";
    } else if (in.kind == InputKind::Job) {
      const auto& d = in.job;
      std::set<std::string> jobs, comms, hosts;
      for (const auto& k : d.ranks) {
        jobs.insert(k.job);
        comms.insert(k.job + " " + k.comm);
        if (!k.host.empty()) hosts.insert(k.host);
      }
      std::string js, hs;
      for (const auto& j : jobs) js += (js.empty() ? "" : ", ") + j;
      for (const auto& h : hosts) hs += (hs.empty() ? "" : ", ") + h;
      o += "<td data-label=\"node\">" + esc(node_name(in)) + (hs.empty() || hs == node_name(in) ? "" : "<br>" + esc(hs)) +
           "</td><td data-label=\"verdict\">" + std::to_string(d.ranks.size()) + " ranks of " +
           std::to_string(comms.size()) + (comms.size() == 1 ? " communicator" : " communicators") +
           "</td><td data-label=\"setup\">running " + (jobs.size() == 1 ? "job " : "jobs ") + esc(js) + ", " +
           (d.format == "text" ? "saved /metrics text" : "fabscope.metrics JSON") + "</td>";
    } else if (in.kind == InputKind::Rdma) {
      const auto& d = in.rdma;
      std::string host = rdma_host(d.local), peer = rdma_host(d.remote);
      o += "<td data-label=\"nodes\">" + esc(host) + " \xE2\x86\x94 " + esc(peer) + "</td><td data-label=\"verdict\">" +
           esc(d.verdict) + "</td><td data-label=\"setup\">" + esc(std::string(rdma::to_string(d.options.op)) + " " + rdma::to_string(d.options.test) + ", " + d.role) + ", " +
           esc(d.local.device) + (d.local.link_layer.empty() ? "" : " " + esc(d.local.link_layer)) +
           (d.local.software ? " (software RDMA)" : "") + "</td>";
    } else {
      const auto& b = in.bench;
      std::string setup = b.collective;
      if (!b.datatype.empty()) setup += " " + b.datatype;
      if (!b.op.empty() && b.op != "none") setup += " " + b.op;
      if (b.nranks) setup += ", " + std::to_string(*b.nranks) + " ranks";
      if (b.nodes) setup += " on " + std::to_string(*b.nodes) + (*b.nodes == 1 ? " node" : " nodes");
      if (!b.gpu_name.empty()) setup += ", " + b.gpu_name;
      o += "<td data-label=\"nodes\">" + esc(b.hosts.empty() ? "(not printed)" : b.hosts) +
           "</td><td data-label=\"verdict\">" + bench_verdict(b) + "</td><td data-label=\"setup\">" +
           esc(setup) + "<br>" + esc(bench_versions(b)) + (b.date_utc.empty() ? "" : ", " + esc(b.date_utc)) + "</td>";
    }
    o += "</tr>";
  }
  o += "</tbody></table></div></section>";
  return o;
}

std::string render_findings(const Report& r) {
  struct Row {
    const Finding* f;
    const Input* in;
  };
  std::vector<Row> rows;
  int nodes = 0;
  for (const auto& in : r.inputs) {
    const auto* fs = findings_of(in);
    if (!fs) continue;
    ++nodes;
    for (const auto& f : *fs) rows.push_back({&f, &in});
  }
  if (nodes == 0) return "";
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    if (a.f->severity != b.f->severity) return a.f->severity > b.f->severity;
    return a.f->id < b.f->id;
  });
  std::string o = "<section id=\"findings\" data-findings=\"" + std::to_string(rows.size()) +
                  "\"><h2>Findings</h2>";
  if (rows.empty()) {
    o += "<p>No findings: every check passed (" + std::to_string(nodes) + (nodes == 1 ? " input" : " inputs") +
         " with checks).</p>";
  } else {
    o += "<p class=\"muted\">Most severe first. The check id links to its description in the documentation: "
         "what it reads, why it matters and how to fix it.</p><div class=\"scroll\"><table class=\"findings cards\">"
         "<thead><tr><th>severity</th><th>check</th><th>node</th><th>subject</th><th>what</th><th>evidence</th>"
         "<th>remedy</th></tr></thead><tbody>";
    // At most kMaxFindingRows rows, most severe first: 800,000 findings once made a 339 MB page.
    // The rest are counted under the table; the inputs hold them all.
    const std::size_t shown = std::min(rows.size(), kMaxFindingRows);
    for (std::size_t k = 0; k < shown; ++k) {
      const auto& row = rows[k];
      const Finding& f = *row.f;
      std::string sev = to_string(f.severity);
      // The row's id is its place in the table (a check id repeats: three ports, three rows); the
      // check id is data-check, which no browser or validator takes for an element id.
      o += "<tr class=\"finding\" id=\"finding-" + std::to_string(k + 1) + "\" data-check=\"" + esc(f.id) +
           "\" data-severity=\"" + esc(sev) + "\">" + sev_cell(sev);
      std::string docs = f.docs.empty() ? docs_anchor(f.id) : f.docs;
      // An input's docs string is a link only when it is a path into our docs: a "javascript:" or
      // any other URL in a file is shown as text (the page promises no script and no network).
      const std::string href = docs_href(r, docs);
      if (!href.empty())
        o += "<td data-label=\"check\"><a class=\"mono\" href=\"" + esc(href) + "\">" + breakable_id(f.id) + "</a></td>";
      else
        o += "<td data-label=\"check\"><span class=\"mono\">" + breakable_id(f.id) +
             "</span><br><span class=\"muted\">docs: " + esc(docs.substr(0, 200)) + "</span></td>";
      o += "<td data-label=\"node\">" + esc(node_name(*row.in)) + "</td><td data-label=\"subject\" class=\"mono\">" +
           esc(f.subject) + "</td><td data-label=\"what\">" + esc(f.message) +
           "</td><td data-label=\"evidence\" class=\"mono\">" + esc(f.evidence) +
           "</td><td data-label=\"remedy\" class=\"mono\">" + esc(f.remedy) + "</td></tr>";
    }
    o += "</tbody></table></div>";
    if (shown < rows.size())
      o += "<p class=\"findings-cut\" data-not-shown=\"" + std::to_string(rows.size() - shown) + "\">" +
           std::to_string(rows.size() - shown) + " more findings are not shown: the page holds the first " +
           std::to_string(shown) + " of " + std::to_string(rows.size()) +
           ", most severe first (the JSON inputs hold them all).</p>";
  }
  for (const auto& in : r.inputs) {
    if (in.kind != InputKind::Node || in.node.next_steps.empty()) continue;
    o += "<h3>Next steps on " + esc(node_name(in)) + "</h3><ol class=\"next-steps\">";
    for (const auto& s : in.node.next_steps) o += "<li>" + esc(s) + "</li>";
    o += "</ol>";
  }
  for (const auto& in : r.inputs) {
    if (in.kind != InputKind::Node || in.node.probe_notes.empty()) continue;
    o += "<details><summary>Values not read on " + esc(node_name(in)) + " (" +
         std::to_string(in.node.probe_notes.size()) + ")</summary><ul class=\"mono\">";
    for (const auto& s : in.node.probe_notes) o += "<li>" + esc(s) + "</li>";
    o += "</ul></details>";
  }
  o += "</section>";
  return o;
}

Rendered render(const Report& r) {
  struct Part {
    const char* id;
    const char* title;
    std::string html;
  };
  std::vector<Part> parts = {
      {"summary", "Summary", render_summary(r)},
      {"findings", "Findings", render_findings(r)},
      {"bench", "Benchmarks", render_bench(r)},
      {"tune", "Tuning", render_tune(r)},
      {"fabric", "Fabric", render_fabric(r)},
      {"cluster", "Cluster", render_cluster(r)},
      {"mesh", "Mesh", render_mesh(r)},
      {"job", "Job", render_job(r)},
      {"rdma", "RDMA", render_rdma(r)},
  };
  Rendered out;
  std::string& o = out.html;
  o += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
       "<meta name=\"generator\" content=\"fabscope " FABSCOPE_VERSION "\">"
       "<title>" + esc(r.title) + "</title><style>" + stylesheet() + "</style></head>\n<body>";
  o += "<header><h1>" + esc(r.title) + "</h1><p>" + std::to_string(r.inputs.size()) +
       (r.inputs.size() == 1 ? " input" : " inputs");
  if (!r.generated_utc.empty()) o += ", written " + esc(r.generated_utc);
  o += " by fabscope " FABSCOPE_VERSION ".</p></header>\n<nav><ul>";
  for (const auto& p : parts)
    if (!p.html.empty()) o += std::string("<li><a href=\"#") + p.id + "\">" + p.title + "</a></li>";
  o += "</ul></nav>\n";
  for (const auto& p : parts) {
    if (p.html.empty()) continue;
    o += p.html + "\n";
    out.sections.push_back(p.id);
  }
  o += "<footer><p>One self-contained file: no script, no font or image from the network. Hover a point "
       "for its values. Sizes use powers of 1024 (KiB, MiB, GiB); bandwidths use 1 GB = 10<sup>9</sup> "
       "bytes, as nccl-tests does.</p></footer>\n</body></html>\n";
  return out;
}

}  // namespace fabscope::report
