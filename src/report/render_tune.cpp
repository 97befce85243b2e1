// The tuning section: per collective, the verified gain of the choice written to the tuner
// table over NCCL's default at each measured size, bus bandwidth of both, the per-size table
// and the table rows (size buckets) written, then the bucket advice.
#include <algorithm>

#include "report/html.hpp"
#include "report/render.hpp"
#include "report/svg.hpp"

namespace fabscope::report {

namespace {

std::string pct(double speedup) { return (speedup >= 1 ? "+" : "") + fmt((speedup - 1) * 100, 1) + "%"; }

// The speedup of a size with its 95% interval, "+3.1% [+1.2%, +5.0%]"; "" when not verified.
std::string gain_text(const tune::Verdict& v) {
  if (v.pairs <= 0) return "";
  return pct(v.speedup) + " [" + pct(v.speedup_lo) + ", " + pct(v.speedup_hi) + "]";
}

}  // namespace

std::string render_tune(const Report& r) {
  std::string o;
  int k = 0;
  for (const auto& in : r.inputs) {
    if (in.kind != InputKind::Tune) continue;
    const tune::TuneResult& t = in.tune.run;
    if (o.empty())
      o = "<section id=\"tune\"><h2>Tuning</h2><p class=\"muted\">What <code>fabscope tune</code> wrote to the tuner "
          "table, against NCCL's own choice. The speedup is NCCL's default time over the tuned time, each the "
          "mean of alternating pairs; a choice is kept only when the lower end of its 95% confidence interval "
          "is above 1, so no written row is slower than the default beyond the noise.</p>";
    ++k;
    o += "<div class=\"tune\" id=\"tune-" + std::to_string(k) + "\"><h3>" + esc(in.label) + "</h3>";
    if (t.simulated)
      o += "<p class=\"simulated\">SIMULATED: no GPU was measured (" + esc(t.source) +
           "). The numbers come from fabscope tune's model and say nothing about a machine.</p>";
    else if (!t.source.empty())
      o += "<p class=\"muted\">" + esc(t.source) + "</p>";
    for (const auto& c : t.collectives) {
      const std::string name(bench::describe(c.collective).name);
      std::string id = "tune-" + std::to_string(k) + "-" + slug(name);
      o += "<h3 id=\"" + esc(id) + "\">" + esc(name) + " <span class=\"muted\">(" +
           std::to_string(c.candidates.empty() ? 0 : c.candidates.size() - 1) +
           " candidates besides NCCL's default per size)</span></h3>";
      LineChart gain;
      gain.id = "plot-" + id + "-gain";
      gain.title = name + ": speedup of the written choice over NCCL's default, per size";
      gain.x_label = "message size (bytes, log scale)";
      gain.y_label = "speedup (default time / tuned time)";
      gain.y_from_zero = false;
      PlotSeries kept{in.label + " tuned (written)", 2, 0, false, {}};
      PlotSeries not_kept{in.label + " not faster (default kept)", 1, 1, false, {}};
      for (const auto& z : c.sizes) {
        if (z.verdict.pairs <= 0 || z.bytes == 0) continue;
        std::string title = in.label + ", " + name + " " + format_bytes(z.bytes) + ": " + tune::label(z.written) +
                            ", speedup " + gain_text(z.verdict) + (z.verdict.keep_tuned ? "" : ", default kept");
        (z.verdict.keep_tuned ? kept : not_kept).points.push_back({static_cast<double>(z.bytes), z.verdict.speedup, title});
      }
      for (auto* s : {&kept, &not_kept}) {
        s->markers_only = true;
        if (!s->points.empty()) gain.series.push_back(std::move(*s));
      }
      gain.ref_lines.push_back({1.0, "NCCL default (1.0)", 6});
      o += "<figure>" + render_line_chart(gain) + "<figcaption>" + render_legend(gain) +
           "Gain per size: points above the line are sizes where the written choice beat NCCL's default; "
           "sizes not verified are not plotted.</figcaption></figure>";

      LineChart bw;
      bw.id = "plot-" + id + "-busbw";
      bw.title = name + ": bus bandwidth with NCCL's default and with the tuner table";
      bw.x_label = "message size (bytes, log scale)";
      bw.y_label = "bus bandwidth (GB/s)";
      PlotSeries def{in.label + " NCCL default", 0, 0, true, {}};
      PlotSeries tuned{in.label + " with the table", 2, 1, false, {}};
      for (const auto& z : c.sizes) {
        if (z.bytes == 0) continue;
        def.points.push_back({static_cast<double>(z.bytes), z.default_busbw,
                              name + " " + format_bytes(z.bytes) + ": NCCL default " + fmt(z.default_busbw, 2) + " GB/s"});
        tuned.points.push_back({static_cast<double>(z.bytes), z.written_busbw,
                                name + " " + format_bytes(z.bytes) + ": " + tune::label(z.written) + " " +
                                    fmt(z.written_busbw, 2) + " GB/s"});
      }
      for (auto* s : {&def, &tuned})
        if (!s->points.empty()) bw.series.push_back(std::move(*s));
      o += "<figure>" + render_line_chart(bw) + "<figcaption>" + render_legend(bw) +
           "Bus bandwidth at each measured size, NCCL's default against what the table sets.</figcaption></figure>";

      o += "<details><summary>Every size of " + esc(name) + " (" + std::to_string(c.sizes.size()) +
           ")</summary><div class=\"scroll\"><table class=\"tune-sizes\"><thead><tr><th>size</th>"
           "<th>default busbw (GB/s)</th><th>written</th><th>tuned busbw (GB/s)</th><th>speedup [95% CI]</th>"
           "<th>why</th></tr></thead><tbody>";
      for (const auto& z : c.sizes) {
        const std::string g = gain_text(z.verdict);
        o += std::string("<tr class=\"tune-size") + (z.verdict.keep_tuned ? " kept" : "") + "\"><td class=\"num\">" +
             esc(format_size(z.bytes)) + "</td><td class=\"num\">" + fmt(z.default_busbw, 2) +
             "</td><td class=\"mono\">" + esc(tune::label(z.written)) + "</td><td class=\"num\">" +
             fmt(z.written_busbw, 2) + "</td><td class=\"num\">" + (g.empty() ? std::string("-") : g) + "</td><td>" +
             esc(z.verdict.reason) + "</td></tr>";
      }
      o += "</tbody></table></div></details>";
    }
    if (!in.tune.table.empty()) {
      o += "<h3>Tuner table written (size buckets)</h3><div class=\"scroll\"><table class=\"tune-table\"><thead><tr>"
           "<th>collective</th><th>from</th><th>to</th><th>choice</th></tr></thead><tbody>";
      for (const auto& row : in.tune.table)
        o += "<tr class=\"tune-row\"><td>" + esc(tune::table_name(row.collective)) + "</td><td class=\"num\" title=\"" +
             std::to_string(row.min_bytes) + " B\">" + esc(format_size(row.min_bytes)) +
             "</td><td class=\"num\" title=\"" + std::to_string(row.max_bytes) + " B\">" +
             esc(format_size(row.max_bytes)) + "</td><td class=\"mono\">" + esc(tune::label(row.choice)) + "</td></tr>";
      o += "</tbody></table></div><p class=\"muted\">Sizes outside every row are left to NCCL.</p>";
    }
    if (!in.tune.advice.empty()) {
      o += "<h3>Bucket advice</h3><ul class=\"advice\">";
      for (const auto& a : in.tune.advice) o += "<li>" + esc(a.advice) + "</li>";
      o += "</ul>";
    }
    o += "</div>";
  }
  if (!o.empty()) o += "</section>";
  return o;
}

}  // namespace fabscope::report
