// The benchmark section: per collective, bus bandwidth against size (log2 axis) with each
// run's out-of-place and in-place curves and the path's theoretical limit, the time of one
// operation (log-log), a table of the runs and, folded, every number.
#include <algorithm>
#include <map>
#include <set>

#include "report/html.hpp"
#include "report/render.hpp"
#include "report/svg.hpp"

namespace fabscope::report {

namespace {

std::string point_title(const std::string& label, const BenchRow& row, const Placement& p, const char* placement) {
  return label + ", " + format_bytes(row.size_bytes) + " (" + std::to_string(row.size_bytes) + " B), " +
         placement + ": busbw " + fmt(p.busbw_gbytes_per_s, 2) + " GB/s, algbw " + fmt(p.algbw_gbytes_per_s, 2) +
         " GB/s, " + fmt(p.time_us, 2) + " \xC2\xB5s";
}


struct Group {
  std::string collective;
  std::vector<const Input*> runs;
};

LineChart chart(const Group& g, bool time) {
  LineChart c;
  c.id = std::string(time ? "plot-time-" : "plot-busbw-") + slug(g.collective);
  c.title = g.collective + (time ? ": time of one operation against message size"
                                 : ": bus bandwidth against message size");
  c.x_label = "message size (bytes, log scale)";
  c.y_label = time ? "time per operation (log scale)" : "bus bandwidth (GB/s)";
  c.y_log10 = time;
  std::vector<RunLimit> limits;
  std::size_t plotted_runs = 0;
  for (std::size_t i = 0; i < g.runs.size(); ++i) {
    const Input& in = *g.runs[i];
    const BenchRun& b = in.bench;
    // bench -N repeats the sweep: one curve per repetition, so none is averaged away.
    std::vector<int> cycles;
    for (const auto& row : b.rows)
      if (std::find(cycles.begin(), cycles.end(), row.cycle) == cycles.end()) cycles.push_back(row.cycle);
    for (int cycle : cycles)
    for (int placement = 0; placement < 2; ++placement) {
      PlotSeries s;
      s.label = in.label + (cycles.size() > 1 ? " cycle " + std::to_string(cycle) : std::string()) +
                (placement ? " in-place" : " out-of-place");
      s.colour = static_cast<int>(i);
      s.marker = static_cast<int>(i);
      s.dashed = placement == 1;
      for (const auto& row : b.rows) {
        if (row.cycle != cycle) continue;
        const Placement* p = placement ? (row.in_place ? &*row.in_place : nullptr) : &row.out_of_place;
        if (!p || row.size_bytes == 0) continue;  // no place for 0 bytes on a log axis
        if (time && p->time_us <= 0) continue;
        s.points.push_back({static_cast<double>(row.size_bytes), time ? p->time_us : p->busbw_gbytes_per_s,
                            point_title(in.label, row, *p, placement ? "in-place" : "out-of-place")});
      }
      if (!s.points.empty()) c.series.push_back(std::move(s));
    }
    if (!std::any_of(b.rows.begin(), b.rows.end(), [](const BenchRow& row) { return row.size_bytes > 0; })) continue;
    ++plotted_runs;
    // A limit is the run's hardware (NVLink of 2x H200, a NIC): drawn for the runs that have it.
    if (!time && b.limit_gbytes_per_s) {
      std::string label = (b.limit_path.empty() ? std::string("path") : b.limit_path) + " limit " +
                          fmt(*b.limit_gbytes_per_s, 0) + " GB/s" +
                          (b.limit_description.empty() ? "" : " (" + b.limit_description + ")");
      std::uint64_t lo = UINT64_MAX, hi = 0;
      for (const auto& row : b.rows)
        if (row.size_bytes > 0) lo = std::min(lo, row.size_bytes), hi = std::max(hi, row.size_bytes);
      limits.push_back({in.label, static_cast<int>(i), *b.limit_gbytes_per_s, label,
                        std::pair(static_cast<double>(lo), static_cast<double>(hi))});
    }
  }
  c.ref_lines = limit_lines(limits, plotted_runs);
  return c;
}

std::string runs_table(const Group& g) {
  std::string o = "<div class=\"scroll\"><table class=\"runs\"><thead><tr><th>run</th><th>source</th>"
                  "<th>ranks</th><th>sizes</th><th>peak busbw</th><th>limit</th><th>verdict</th></tr></thead><tbody>";
  for (const Input* in : g.runs) {
    const BenchRun& b = in->bench;
    const BenchPeak peak = bench_peak(b);
    std::string ranks = b.nranks ? std::to_string(*b.nranks) : "?";
    if (b.nodes) ranks += " on " + std::to_string(*b.nodes) + (*b.nodes == 1 ? " node" : " nodes");
    std::string sizes = b.rows.empty() ? "" : format_size(b.rows.front().size_bytes) + " .. " +
                                                  format_size(b.rows.back().size_bytes) + " (" +
                                                  std::to_string(b.rows.size()) + ")";
    std::string limit = b.limit_gbytes_per_s ? fmt(*b.limit_gbytes_per_s, 0) + " GB/s " + b.limit_path : "not known";
    o += "<tr class=\"run\" data-run=\"" + esc(in->label) + "\" data-sizes=\"" + std::to_string(b.rows.size()) +
         "\"><td><span class=\"mono\">" + esc(in->label) + "</span></td><td>" + esc(b.source) +
         (b.tool_version.empty() ? "" : " " + esc(b.tool_version)) + "</td><td class=\"num\">" + esc(ranks) +
         "</td><td>" + esc(sizes) + "</td><td class=\"num\">" +
         (peak.known ? fmt(peak.busbw_gbytes_per_s, 2) + " GB/s at " + esc(format_size(peak.size_bytes))
                     : std::string("none (one rank)")) +
         "</td><td>" + esc(limit) + "</td><td>" +
         (b.verdict.empty() ? std::string("<span class=\"muted\">no limit known: no verdict</span>")
                            : "<span class=\"verdict-" + esc(b.verdict_level) + "\">" + esc(b.verdict) + "</span>") +
         "</td></tr>";
  }
  o += "</tbody></table></div>";
  return o;
}

std::string numbers_table(const Input& in) {
  const BenchRun& b = in.bench;
  std::string o = "<details><summary>Every size of " + esc(in.label) + " (" + std::to_string(b.rows.size()) +
                  ")</summary><div class=\"scroll\"><table class=\"numbers\"><thead><tr><th>size</th>"
                  "<th>time (\xC2\xB5s)</th><th>algbw (GB/s)</th><th>busbw (GB/s)</th><th>#wrong</th>"
                  "<th>in-place time (\xC2\xB5s)</th><th>algbw (GB/s)</th><th>busbw (GB/s)</th><th>#wrong</th>"
                  "</tr></thead><tbody>";
  auto cells = [](const Placement* p) {
    if (!p) return std::string("<td class=\"num\">N/A</td><td class=\"num\">N/A</td><td class=\"num\">N/A</td>"
                               "<td class=\"num\">N/A</td>");
    return "<td class=\"num\">" + fmt(p->time_us, 2) + "</td><td class=\"num\">" + fmt(p->algbw_gbytes_per_s, 2) +
           "</td><td class=\"num\">" + fmt(p->busbw_gbytes_per_s, 2) + "</td><td class=\"num\">" +
           (p->wrong ? std::to_string(*p->wrong) : std::string("N/A")) + "</td>";
  };
  for (const auto& row : b.rows)
    o += "<tr><td class=\"num\" title=\"" + std::to_string(row.size_bytes) + " B\">" + esc(format_size(row.size_bytes)) +
         "</td>" + cells(&row.out_of_place) + cells(row.in_place ? &*row.in_place : nullptr) + "</tr>";
  o += "</tbody></table></div></details>";
  return o;
}

}  // namespace

std::string render_bench(const Report& r) {
  std::vector<Group> groups;
  for (const auto& in : r.inputs) {
    if (in.kind != InputKind::Bench) continue;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) { return g.collective == in.bench.collective; });
    if (it == groups.end()) {
      groups.push_back({in.bench.collective, {}});
      it = groups.end() - 1;
    }
    it->runs.push_back(&in);
  }
  if (groups.empty()) return "";
  std::string o = "<section id=\"bench\"><h2>Benchmarks</h2><p class=\"muted\">Bus bandwidth (busbw) is what "
                  "each rank's busiest link carries, comparable with the link rate whatever the rank count "
                  "(nccl-tests' definition). Solid lines: out-of-place; dashed: in-place. A dashed "
                  "horizontal line is a run's theoretical path limit where the run knows it, named "
                  "after its run and in its colour (one black line when every run on the plot shares it).</p>";
  for (const auto& g : groups) {
    std::string id = "bench-" + slug(g.collective);
    o += "<div class=\"collective\" id=\"" + esc(id) + "\"><h3>" + esc(g.collective) + "</h3>";
    LineChart bw = chart(g, false);
    o += "<figure>" + render_line_chart(bw) + "<figcaption>" + render_legend(bw) + "Bus bandwidth of " +
         esc(g.collective) + " against message size; zero-byte rows are not plotted.</figcaption></figure>";
    LineChart t = chart(g, true);
    o += "<figure>" + render_line_chart(t) + "<figcaption>" + render_legend(t) +
         "Time of one operation: the flat part at small sizes is latency, the slope at large sizes "
         "bandwidth.</figcaption></figure>";
    o += runs_table(g);
    for (const Input* in : g.runs) o += numbers_table(*in);
    o += "</div>";
  }
  o += "</section>";
  return o;
}

}  // namespace fabscope::report
