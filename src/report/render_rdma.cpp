// The RDMA section: per `fabscope rdma` input, bandwidth against message size (bw tests) with
// the port's rate as the limit line, latency percentiles against size (lat tests: min, median,
// p99, max), and every number in a table.
#include <algorithm>
#include <cmath>
#include <set>

#include "report/html.hpp"
#include "report/render.hpp"
#include "report/svg.hpp"

namespace fabscope::report {

namespace {

std::string endpoint(const rdma::Endpoint& e) {
  std::string s = rdma_host(e);
  if (!e.device.empty()) s += " " + e.device + ":" + std::to_string(e.port);
  if (!e.netdev.empty()) s += " (" + e.netdev + ")";
  return s;
}

std::string what(const rdma::Result& d) {
  std::string s = std::string(rdma::to_string(d.options.op)) + " " + rdma::to_string(d.options.test);
  if (d.options.qps > 1) s += ", " + std::to_string(d.options.qps) + " QPs";
  if (d.options.bidirectional) s += ", bidirectional";
  return s;
}

std::string verdict_html(const std::string& v) {
  std::string level = v.rfind("OK:", 0) == 0 ? "good" : v.rfind("WARN:", 0) == 0 ? "fair" : v.rfind("FAIL:", 0) == 0 ? "low" : "";
  if (level.empty()) return esc(v);
  return "<span class=\"verdict-" + level + "\">" + esc(v) + "</span>";
}

LineChart bw_chart(const std::vector<const Input*>& runs, int k) {
  LineChart c;
  c.id = "plot-rdma-bw-" + std::to_string(k);
  c.title = "RDMA bandwidth against message size";
  c.x_label = "message size (bytes, log scale)";
  c.y_label = "bandwidth (Gb/s)";
  std::vector<RunLimit> limits;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const rdma::Result& d = runs[i]->rdma;
    PlotSeries s;
    s.label = runs[i]->label + " " + rdma::to_string(d.options.op) + " (" + d.role + ")";
    s.colour = s.marker = static_cast<int>(i);
    for (const auto& z : d.sizes) {
      if (z.bytes == 0) continue;
      s.points.push_back({static_cast<double>(z.bytes), z.gbps,
                          runs[i]->label + ", " + format_bytes(z.bytes) + ": " + fmt(z.gbps, 3) + " Gb/s, " +
                              fmt(z.mib_per_s, 1) + " MiB/s, " + fmt(z.msg_rate_mpps, 4) + " Mpps, " +
                              std::to_string(z.iterations) + " messages in " + fmt(z.seconds, 3) + " s"});
    }
    if (s.points.empty()) continue;
    std::pair<double, double> span{s.points.front().x, s.points.front().x};
    for (const auto& p : s.points) span = {std::min(span.first, p.x), std::max(span.second, p.x)};
    c.series.push_back(std::move(s));
    // A software device's rate (rxe, siw) is nominal: no limit line that would only squash the curve.
    if (d.local.rate_gbps && *d.local.rate_gbps > 0 && !d.local.software) {
      double lim = *d.local.rate_gbps * (d.options.bidirectional ? 2 : 1);
      limits.push_back({runs[i]->label, static_cast<int>(i), lim,
                        "port rate " + fmt(lim, 0) + " Gb/s" + (d.options.bidirectional ? " (both directions)" : ""), span});
    }
  }
  // A port's rate belongs to the runs on that port: drawn for them, not across every run.
  c.ref_lines = limit_lines(limits, c.series.size());
  return c;
}

LineChart lat_chart(const Input& in, int k) {
  const rdma::Result& d = in.rdma;
  LineChart c;
  c.id = "plot-rdma-lat-" + std::to_string(k);
  c.title = in.label + ": latency percentiles against message size";
  c.x_label = "message size (bytes, log scale)";
  c.y_label = std::string(d.options.op == rdma::Op::Read ? "round-trip" : "one-way") + " latency (log scale)";
  c.y_log10 = true;
  const char* names[] = {"min", "median", "p99", "max"};
  for (int q = 0; q < 4; ++q) {
    PlotSeries s;
    s.label = in.label + " " + names[q];
    s.colour = q;
    s.marker = q;
    s.dashed = q == 0 || q == 3;
    for (const auto& z : d.sizes) {
      if (z.bytes == 0 || !z.latency) continue;
      const auto& l = *z.latency;
      double v = q == 0 ? l.min_us : q == 1 ? l.median_us : q == 2 ? l.p99_us : l.max_us;
      s.points.push_back({static_cast<double>(z.bytes), v,
                          in.label + ", " + format_bytes(z.bytes) + ", " + names[q] + ": " + fmt(v, 2) +
                              " \xC2\xB5s (min " + fmt(l.min_us, 2) + ", median " + fmt(l.median_us, 2) + ", p99 " +
                              fmt(l.p99_us, 2) + ", max " + fmt(l.max_us, 2) + ", mean " + fmt(l.mean_us, 2) + ")"});
    }
    if (!s.points.empty()) c.series.push_back(std::move(s));
  }
  return c;
}

std::string rdma_numbers_table(const Input& in) {
  const rdma::Result& d = in.rdma;
  std::string o = "<div class=\"scroll\"><table class=\"numbers rdma-sizes\" data-run=\"" + esc(in.label) +
                  "\" data-sizes=\"" + std::to_string(d.sizes.size()) +
                  "\"><thead><tr><th>size</th><th>Gb/s</th><th>MiB/s</th><th>Mpps</th><th>messages</th>"
                  "<th>min (\xC2\xB5s)</th><th>median</th><th>p99</th><th>max</th><th>data checked</th>"
                  "</tr></thead><tbody>";
  for (const auto& z : d.sizes) {
    o += "<tr><td class=\"num\" title=\"" + std::to_string(z.bytes) + " B\">" + esc(format_size(z.bytes)) +
         "</td><td class=\"num\">" + fmt(z.gbps, 3) + "</td><td class=\"num\">" + fmt(z.mib_per_s, 1) +
         "</td><td class=\"num\">" + fmt(z.msg_rate_mpps, 4) + "</td><td class=\"num\">" + std::to_string(z.iterations) +
         "</td>";
    if (z.latency)
      o += "<td class=\"num\">" + fmt(z.latency->min_us, 2) + "</td><td class=\"num\">" + fmt(z.latency->median_us, 2) +
           "</td><td class=\"num\">" + fmt(z.latency->p99_us, 2) + "</td><td class=\"num\">" +
           fmt(z.latency->max_us, 2) + "</td>";
    else
      o += "<td class=\"num\" colspan=\"4\">bw test: no latency</td>";
    o += "<td>" + std::string(!z.data_verified ? "n/a" : *z.data_verified ? "pattern found" : "<b class=\"sev sev-fail\">WRONG</b>") +
         "</td></tr>";
  }
  o += "</tbody></table></div>";
  return o;
}

}  // namespace

// The kernel's hostname before anything sets it is "(none)" (a VM booted straight into an
// initramfs): no name, so the address stands for the host.
std::string rdma_host(const rdma::Endpoint& e) {
  if (e.host.empty() || e.host == "(none)") return e.address.empty() ? e.host : e.address;
  return e.host;
}

std::string render_rdma(const Report& r) {
  std::vector<const Input*> bw, lat;
  for (const auto& in : r.inputs)
    if (in.kind == InputKind::Rdma) (in.rdma.options.test == rdma::Test::Lat ? lat : bw).push_back(&in);
  if (bw.empty() && lat.empty()) return "";
  std::string o = "<section id=\"rdma\"><h2>RDMA point to point</h2><p class=\"muted\">fabscope rdma "
                  "between two hosts: bandwidth in Gb/s (10<sup>9</sup> bits per second) of each message "
                  "size, and latency percentiles over every round trip of a size.</p>";
  o += "<div class=\"scroll\"><table class=\"runs rdma-runs\"><thead><tr><th>run</th><th>test</th><th>this side</th>"
       "<th>peer</th><th>path MTU</th><th>sizes</th><th>verdict</th></tr></thead><tbody>";
  for (const auto* list : {&bw, &lat})
    for (const Input* in : *list) {
      const rdma::Result& d = in->rdma;
      o += "<tr class=\"run\" data-run=\"" + esc(in->label) + "\" data-sizes=\"" + std::to_string(d.sizes.size()) +
           "\"><td class=\"mono\">" + esc(in->label) + "</td><td>" + esc(what(d)) + ", " + esc(d.role) +
           ", " + esc(rdma::to_string(d.options.oob)) + "</td><td>" + esc(endpoint(d.local)) + "</td><td>" +
           esc(endpoint(d.remote)) + "</td><td class=\"num\">" +
           (d.path_mtu ? std::to_string(*d.path_mtu) + " B" : std::string("?")) + "</td><td class=\"num\">" +
           std::to_string(d.sizes.size()) + (d.options.sizes_bytes.size() > d.sizes.size() ? " of " + std::to_string(d.options.sizes_bytes.size()) : "") +
           "</td><td>" + (d.completed ? "" : "<b class=\"sev sev-fail\">not completed</b> ") + verdict_html(d.verdict) +
           "</td></tr>";
    }
  o += "</tbody></table></div>";
  int k = 0;
  if (!bw.empty()) {
    LineChart c = bw_chart(bw, ++k);
    o += "<h3>Bandwidth</h3>";
    if (!c.series.empty())  // else no run got through a size: the table says why
      o += "<figure>" + render_line_chart(c) + "<figcaption>" + render_legend(c) +
         "Bandwidth of each message size as this side measured it, first post to last completion. The "
         "dashed line is the port's rate where the probe read it (not for software RDMA, whose rate is "
         "nominal); a run's line is named after it unless every run on the plot has the same rate."
         "</figcaption></figure>";
    for (const Input* in : bw)
      o += "<details><summary>Every size of " + esc(in->label) + " (" + std::to_string(in->rdma.sizes.size()) +
           ")</summary>" + rdma_numbers_table(*in) + "</details>";
  }
  for (const Input* in : lat) {
    LineChart c = lat_chart(*in, ++k);
    o += "<h3>Latency: " + esc(in->label) + "</h3><figure>" + render_line_chart(c) + "<figcaption>" +
         render_legend(c) + "Minimum, median, 99th percentile and maximum of " +
         (in->rdma.options.op == rdma::Op::Read ? "the round trip" : "the one-way latency (half the round trip)") +
         " of each size.</figcaption></figure>" + rdma_numbers_table(*in);
  }
  o += "</section>";
  return o;
}

}  // namespace fabscope::report
