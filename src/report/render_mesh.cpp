// The mesh section: from one probe mesh snapshot per node (`fabscope exporter --mesh`), the
// node x node heat map of the RTT's 99th percentile and median (row: prober, column: peer),
// drawn like the cluster's bandwidth map (heatmap.hpp's frame, viridis, dark = slow, marks as
// shapes), then the slowest and the lossiest pairs.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "report/heatmap.hpp"
#include "core/strings.hpp"
#include "report/html.hpp"
#include "report/mesh.hpp"
#include "report/render.hpp"

namespace fabscope::report {

namespace {

constexpr std::size_t kMaxMeshBlocks = 64;     // at most 64 x 65 cells (the last column: "_other")
constexpr std::size_t kMaxPairRows = 20;   // each table of pairs
constexpr int kBins = 9;                   // mesh_scale_edges_seconds() + 1

const char* scale_colour(double seconds) { return viridis(kBins - 1 - mesh_bin(seconds), kBins); }

std::string percent(double ratio) {
  if (ratio == 0) return "0%";
  return core::format_double("%.3g%%", ratio * 100);
}


std::string block_name(const MeshGrid& g, std::size_t col) {
  if (col == g.blocks.size()) return "_other";
  const auto& b = g.blocks[col];
  if (b.names.size() == 1) return g.names[b.names.front()];
  return g.names[b.names.front()] + " \xE2\x80\xA6 " + g.names[b.names.back()] + " (" + std::to_string(b.names.size()) +
         " nodes)";
}

std::string block_label(const MeshGrid& g, std::size_t col) {
  if (col == g.blocks.size()) return "_other";
  const auto& b = g.blocks[col];
  if (b.names.size() == 1) return heat_cut_label(g.names[b.names.front()]);
  return heat_cut_label(g.names[b.names.front()]) + "\xE2\x80\xA6";
}

std::string pair_text(const MeshGrid& g, const MeshPair& p) {
  std::string t = g.names[p.prober] + " \xE2\x86\x92 " + (p.peer == g.names.size() ? "_other" : p.peer_label) + " (" +
                  p.transport + "): ";
  if (p.p99_s)
    t += "p50 " + format_seconds(*p.p50_s) + ", p99 " + format_seconds(*p.p99_s) + " over " + count_text(p.rtt_count) +
         " answered probes";
  else
    t += "no RTT (no answered probe)";
  if (p.bound_s) t += std::string(p.slow ? "; ABOVE" : "; within") + " the " + p.transport + " bound " + format_seconds(*p.bound_s);
  if (p.loss)
    t += "; loss " + percent(*p.loss) + " (" + count_text(p.lost) + " lost of " + count_text(p.answered + p.lost) +
         " finished, " + count_text(p.sent) + " sent)" + (p.lossy ? ", above 0.01%" : "");
  if (p.up) t += *p.up == 1 ? "; up" : "; DOWN (the last probe was not answered)";
  if (p.peer == g.names.size()) t += "; the peers this node has no series of its own for, summed";
  return t;
}

std::string cell_title(const MeshGrid& g, const MeshCell& c) {
  const bool one = g.blocks[c.row].names.size() == 1 && (c.col == g.blocks.size() || g.blocks[c.col].names.size() == 1);
  std::string t;
  if (one) {
    for (std::size_t k : c.pairs) t += (t.empty() ? "" : "\n") + pair_text(g, g.pairs[k]);
    return t;
  }
  t = block_name(g, c.row) + " \xE2\x86\x92 " + block_name(g, c.col) + ": " + std::to_string(c.pairs.size()) + " series";
  if (c.p99_s) t += "; highest p99 " + format_seconds(*c.p99_s) + ", highest p50 " + format_seconds(*c.p50_s);
  t += "; " + count_text(c.rtt_count) + " answered probes";
  if (c.loss) t += "; highest loss " + percent(*c.loss);
  std::size_t listed = 0, marked = 0;
  for (std::size_t k : c.pairs) {
    const MeshPair& p = g.pairs[k];
    if (!(p.slow || p.lossy || p.no_answer)) continue;
    if (++marked <= 3) t += "\n" + pair_text(g, p), ++listed;
  }
  if (marked > listed) t += "\n... and " + std::to_string(marked - listed) + " more marked pairs (tables below)";
  return t;
}

std::string attr_range(const MeshGrid& g, std::size_t col) {
  if (col == g.blocks.size()) return "_other";
  const auto& b = g.blocks[col];
  if (b.names.size() == 1) return esc(g.names[b.names.front()]);
  return esc(g.names[b.names.front()] + " .. " + g.names[b.names.back()]);
}

std::string us_attr(double s) { return core::format_double("%.4g", s * 1e6); }

// One map: the cells coloured by p99 (`p99`) or by p50.
std::string mesh_map(const MeshGrid& g, int k, bool p99) {
  const int rows = static_cast<int>(g.blocks.size());
  const int cols = rows + (g.other ? 1 : 0);
  std::size_t longest = 0;
  for (int i = 0; i < cols; ++i) longest = std::max(longest, heat_label_chars(block_label(g, static_cast<std::size_t>(i))) + 2);
  const HeatFrame f = heat_frame(rows, cols, longest, false);
  const double cs = f.cs, left = f.left, top = f.top;
  const std::string which = p99 ? "p99" : "p50";
  std::string o = "<svg class=\"heatmap mesh-map\" id=\"mesh-" + std::to_string(k) + "-" + which + "\" viewBox=\"0 0 " +
                  coord(f.w) + " " + coord(f.h) + "\" width=\"" + coord(f.w) + "\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\""
                  " data-quantile=\"" + which + "\" data-blocks=\"" + std::to_string(rows) + "\" data-block-nodes=\"" +
                  std::to_string(g.block) + "\"><title>" + which + " round-trip time of the mesh probes, prober (row) to "
                  "peer (column)</title>";
  o += "<g class=\"labels\" font-size=\"" + coord(f.font) + "\">";
  for (int i = 0; i < cols; ++i) {
    const auto col = static_cast<std::size_t>(i);
    const bool other = col == g.blocks.size();
    const bool snap = !other && g.blocks[col].snapshot;
    std::string about = other ? "_other: the peers a node summed because it has series of its own for at most "
                                "--mesh-peer-limit peers"
                              : block_name(g, col) + (snap ? "" : ": no snapshot given (only a peer of the others)");
    std::string tip = "<title>" + esc(about) + "</title>";
    std::string text = (snap || other ? "" : "\xE2\x97\x8B ") + block_label(g, col);
    double mid = i * cs + cs / 2;
    if (!other)  // rows: the probers
      o += "<text class=\"node-label" + std::string(snap ? "" : " no-snapshot") + "\" data-node=\"" + attr_range(g, col) +
           "\" x=\"" + coord(left - 4) + "\" y=\"" + coord(top + mid + f.font * 0.35) + "\" text-anchor=\"end\">" + tip +
           esc(text) + "</text>";
    o += "<text class=\"node-label" + std::string(other ? " other" : "") + "\" data-node=\"" + attr_range(g, col) +
         "\" transform=\"translate(" + coord(left + mid + f.font * 0.35) + " " + coord(top - 4) + ") rotate(-90)\">" + tip +
         esc(text) + "</text>";
  }
  o += "</g><rect class=\"frame\" x=\"" + coord(left) + "\" y=\"" + coord(top) + "\" width=\"" + coord(cs * cols) +
       "\" height=\"" + coord(cs * rows) + "\" fill=\"#f4f4f4\" stroke=\"#999\"/>";
  // A row without a snapshot: nobody told us what that node saw.
  for (int i = 0; i < rows; ++i)
    if (!g.blocks[static_cast<std::size_t>(i)].snapshot)
      o += "<rect class=\"row-no-snapshot\" data-node=\"" + attr_range(g, static_cast<std::size_t>(i)) + "\" x=\"" +
           coord(left + 1) + "\" y=\"" + coord(top + i * cs + 1) + "\" width=\"" + coord(cs * cols - 2) + "\" height=\"" +
           coord(cs - 2) + "\" fill=\"none\" stroke=\"#999\" stroke-dasharray=\"2 3\"/>";
  o += "<g class=\"cells\">";
  for (const auto& c : g.cells) {
    const std::optional<double> v = p99 ? c.p99_s : c.p50_s;
    std::string cls = v ? "cell" : "cell no-answer";
    std::string fill = v ? scale_colour(*v) : "#bdbdbd";
    std::string marks;
    if (c.slow) marks = "slow";
    if (c.lossy) marks += marks.empty() ? "lossy" : " lossy";
    o += "<rect class=\"" + cls + "\" x=\"" + coord(left + static_cast<double>(c.col) * cs) + "\" y=\"" +
         coord(top + static_cast<double>(c.row) * cs) + "\" width=\"" + coord(cs) + "\" height=\"" + coord(cs) +
         "\" fill=\"" + fill + "\" data-from=\"" + attr_range(g, c.row) + "\" data-to=\"" + attr_range(g, c.col) +
         "\" data-series=\"" + std::to_string(c.pairs.size()) + "\"";
    if (c.p50_s) o += " data-p50-us=\"" + us_attr(*c.p50_s) + "\"";
    if (c.p99_s) o += " data-p99-us=\"" + us_attr(*c.p99_s) + "\"";
    if (c.loss) o += " data-loss=\"" + esc(percent(*c.loss)) + "\"";
    std::map<std::string, int> transports;
    for (std::size_t p : c.pairs) ++transports[g.pairs[p].transport];
    if (transports.size() == 1) o += " data-transport=\"" + esc(transports.begin()->first) + "\"";
    if (!marks.empty()) o += " data-mark=\"" + marks + "\"";
    o += "><title>" + esc(cell_title(g, c)) + "</title></rect>";
  }
  o += "</g><g class=\"marks\" fill=\"none\">";
  const double sw = std::max(1.5, cs / 8);
  for (const auto& c : g.cells) {
    const double x0 = left + static_cast<double>(c.col) * cs, y0 = top + static_cast<double>(c.row) * cs;
    const std::string ends = "\" data-from=\"" + attr_range(g, c.row) + "\" data-to=\"" + attr_range(g, c.col) + "\"";
    if (c.slow) {  // the cluster map's slow-link cross: black on a white halo
      double a = x0 + cs * 0.2, b = y0 + cs * 0.2, e = cs * 0.6;
      std::string d = "M" + coord(a) + " " + coord(b) + "L" + coord(a + e) + " " + coord(b + e) + "M" + coord(a + e) + " " +
                      coord(b) + "L" + coord(a) + " " + coord(b + e);
      o += "<path class=\"mark-slow" + ends + " d=\"" + d + "\" stroke=\"#fff\" stroke-width=\"" + coord(sw * 2.2) +
           "\"/><path d=\"" + d + "\" stroke=\"#000\" stroke-width=\"" + coord(sw) + "\"/>";
    }
    if (c.lossy)  // a vermillion dot on a white ring in the cell's upper right corner
      o += "<circle class=\"mark-loss" + ends + " cx=\"" + coord(x0 + cs * 0.78) + "\" cy=\"" + coord(y0 + cs * 0.22) +
           "\" r=\"" + coord(std::max(2.0, cs * 0.14)) + "\" fill=\"#D55E00\" stroke=\"#fff\" stroke-width=\"" +
           coord(std::max(1.0, cs / 16)) + "\"/>";
    if (c.no_answer)  // the cluster map's failed-pair diagonal
      o += "<path class=\"mark-no-answer" + ends + " d=\"M" + coord(x0 + cs * 0.2) + " " + coord(y0 + cs * 0.8) + "L" +
           coord(x0 + cs * 0.8) + " " + coord(y0 + cs * 0.2) + "\" stroke=\"#000\" stroke-width=\"" + coord(sw * 0.7) +
           "\" stroke-dasharray=\"" + coord(sw) + " " + coord(sw) + "\"/>";
  }
  o += "</g></svg>";
  return o;
}

std::string swatch(const std::string& inner) {
  return "<svg width=\"18\" height=\"14\" viewBox=\"0 0 18 14\" aria-hidden=\"true\">" + inner + "</svg> ";
}

std::string mesh_legend(bool aggregated) {
  static const char* beyond[kBins] = {"", " (above the rdma_ib bound, 5 \xC2\xB5s)", " (above the rdma_roce bound, 10 \xC2\xB5s)",
                                      "", "", "", "", " (above the tcp bound, 1 ms)", ""};
  const auto& e = mesh_scale_edges_seconds();
  std::string o = "<ul class=\"legend heat-legend mesh-legend\">";
  for (int i = 0; i < kBins; ++i) {
    std::string range = i == 0 ? "\xE2\x89\xA4 " + format_seconds(e[0])
                        : i == kBins - 1
                            ? "> " + format_seconds(e[static_cast<std::size_t>(kBins - 2)])
                            : format_seconds(e[static_cast<std::size_t>(i - 1)]) + "\xE2\x80\x93" + format_seconds(e[static_cast<std::size_t>(i)]);
    o += "<li data-bin=\"" + std::to_string(i) + "\">" +
         swatch("<rect width=\"18\" height=\"14\" fill=\"" + std::string(viridis(kBins - 1 - i, kBins)) + "\"/>") +
         esc(range) + (beyond[i][0] ? "<b>" + esc(beyond[i]) + "</b>" : std::string()) + "</li>";
  }
  o += "<li>" + swatch("<rect width=\"18\" height=\"14\" fill=\"#f4f4f4\" stroke=\"#999\"/>") + "not probed</li>";
  o += "<li>" + swatch("<rect width=\"18\" height=\"14\" fill=\"#bdbdbd\"/><path d=\"M4 11L14 3\" stroke=\"#000\" stroke-dasharray=\"2 2\"/>") +
       "no probe answered" + std::string(aggregated ? " (any in the block: the worst shown)" : "") + "</li>";
  o += "<li>" + swatch("<rect width=\"18\" height=\"14\" fill=\"#2c728e\"/><path d=\"M4 2L14 12M14 2L4 12\" stroke=\"#fff\" stroke-width=\"3.5\"/>"
                       "<path d=\"M4 2L14 12M14 2L4 12\" stroke=\"#000\" stroke-width=\"1.6\"/>") +
       "p99 above its transport's bound" + std::string(aggregated ? " (in the block)" : "") + "</li>";
  o += "<li>" + swatch("<rect width=\"18\" height=\"14\" fill=\"#2c728e\"/><circle cx=\"13\" cy=\"4\" r=\"3\" fill=\"#D55E00\" stroke=\"#fff\"/>") +
       "loss above 0.01%" + std::string(aggregated ? " (in the block)" : "") + "</li>";
  o += "<li>" + swatch("<rect x=\"1\" y=\"1\" width=\"16\" height=\"12\" fill=\"none\" stroke=\"#999\" stroke-dasharray=\"2 3\"/>") +
       "\xE2\x97\x8B no snapshot of this node (its row is empty)</li></ul>";
  return o;
}

std::string pair_row(const MeshGrid& g, const MeshPair& p) {
  const std::string peer = p.peer == g.names.size() ? "_other" : p.peer_label;
  std::string marks;
  if (p.no_answer) marks = "no answer";
  if (p.slow) marks += (marks.empty() ? "" : ", ") + std::string("p99 above bound");
  if (p.lossy) marks += (marks.empty() ? "" : ", ") + std::string("loss above 0.01%");
  if (p.up && *p.up == 0) marks += (marks.empty() ? "" : ", ") + std::string("down");
  return "<tr class=\"mesh-pair\" data-from=\"" + esc(g.names[p.prober]) + "\" data-to=\"" + esc(peer) +
         "\" data-transport=\"" + esc(p.transport) + "\"><td>" + esc(g.names[p.prober]) + " \xE2\x86\x92 " + esc(peer) +
         "</td><td>" + esc(p.transport) + "</td><td class=\"num\">" + (p.p50_s ? esc(format_seconds(*p.p50_s)) : "\xE2\x80\x94") +
         "</td><td class=\"num\">" + (p.p99_s ? esc(format_seconds(*p.p99_s)) : "\xE2\x80\x94") + "</td><td class=\"num\">" +
         (p.bound_s ? esc(format_seconds(*p.bound_s)) : "\xE2\x80\x94") + "</td><td class=\"num\">" +
         (p.loss ? esc(percent(*p.loss)) + " (" + count_text(p.lost) + " of " + count_text(p.answered + p.lost) + ")"
                 : std::string("\xE2\x80\x94")) +
         "</td><td class=\"num\">" + count_text(p.rtt_count) + " of " + count_text(p.sent) + "</td><td>" + esc(marks) +
         "</td></tr>";
}

std::string pair_table(const MeshGrid& g, const std::vector<std::size_t>& order, const std::string& cls,
                       const std::string& heading) {
  if (order.empty()) return "";
  std::string o = "<h4>" + heading + "</h4><div class=\"scroll\"><table class=\"mesh-pairs " + cls +
                  "\"><thead><tr><th>prober \xE2\x86\x92 peer</th><th>transport</th><th>p50</th><th>p99</th>"
                  "<th>bound</th><th>loss (lost of finished)</th><th>answered of sent</th><th>marks</th></tr></thead><tbody>";
  for (std::size_t i = 0; i < order.size() && i < kMaxPairRows; ++i) o += pair_row(g, g.pairs[order[i]]);
  o += "</tbody></table></div>";
  if (order.size() > kMaxPairRows)
    o += "<p class=\"muted\">" + std::to_string(order.size() - kMaxPairRows) + " more not listed.</p>";
  return o;
}

}  // namespace

std::string render_mesh(const Report& r) {
  std::vector<const Input*> inputs;
  for (const auto& in : r.inputs)
    if (in.kind == InputKind::Mesh) inputs.push_back(&in);
  if (inputs.empty()) return "";
  const MeshGrid g = build_mesh_grid(inputs, kMaxMeshBlocks);
  std::string o =
      "<section id=\"mesh\"><h2>Mesh</h2><p class=\"muted\">Round-trip time of the probes of <code>fabscope exporter "
      "--mesh</code>, from one snapshot per node (its saved <code>/metrics</code>): row: "
      "the node that probed, column: the peer it probed. The values are totals since each exporter started. p50 and "
      "p99 are interpolated in the RTT histogram's buckets as Prometheus' <code>histogram_quantile</code> does "
      "(linearly within the bucket holding the quantile); loss is lost \xC3\xB7 (answered + lost). Darker is slower; "
      "the colour steps break at the runbook's bounds (5 \xC2\xB5s rdma_ib, 10 \xC2\xB5s rdma_roce, 1 ms tcp).</p>";
  std::map<std::string, std::size_t> transports;
  std::size_t slow = 0, lossy = 0, silent = 0;
  for (const auto& p : g.pairs) {
    ++transports[p.transport];
    slow += p.slow, lossy += p.lossy, silent += p.no_answer;
  }
  std::string tr;
  for (const auto& [t, n] : transports) tr += (tr.empty() ? "" : ", ") + t + " " + std::to_string(n);
  o += "<div class=\"mesh\" id=\"mesh-1\" data-nodes=\"" + std::to_string(g.names.size()) + "\" data-snapshots=\"" +
       std::to_string(g.snapshots) + "\"><p>" + std::to_string(g.snapshots) + (g.snapshots == 1 ? " snapshot, " : " snapshots, ") +
       std::to_string(g.names.size()) + " nodes, " + std::to_string(g.pairs.size()) + " series" +
       (tr.empty() ? std::string() : " (" + esc(tr) + ")") + ": " + std::to_string(slow) + " with p99 above the bound, " +
       std::to_string(lossy) + " with loss above 0.01%, " + std::to_string(silent) + " without an answer.</p>";
  for (const auto& n : g.notes) o += "<p class=\"muted\">" + esc(n) + "</p>";
  if (!g.cells.empty() || !g.blocks.empty()) {
    const bool agg = g.block > 1;
    std::string caption = agg ? std::to_string(g.names.size()) + " nodes in blocks of " + std::to_string(g.block) +
                                    " in name order: a cell shows the highest value among its block's series and "
                                    "carries the mark of any series inside it (hover: the marked ones)."
                              : "Hover a cell for p50, p99, the answered probes, the loss and the transport.";
    o += "<figure><h4>p99 round-trip time</h4>" + mesh_map(g, 1, true) + "<figcaption>" + mesh_legend(agg) + caption +
         "</figcaption></figure>";
    o += "<figure><h4>Median (p50) round-trip time</h4>" + mesh_map(g, 1, false) +
         "<figcaption>The same scale and marks; a p99 far above its p50 is jitter, both high a slow path.</figcaption></figure>";
  }
  // The slowest pairs: no answer first, then p99 against its bound (1 ms for another transport).
  std::vector<std::size_t> by_p99, by_loss;
  for (std::size_t i = 0; i < g.pairs.size(); ++i) {
    if (g.pairs[i].p99_s || g.pairs[i].no_answer) by_p99.push_back(i);
    if (g.pairs[i].loss && *g.pairs[i].loss > 0) by_loss.push_back(i);
  }
  auto score = [&](std::size_t i) -> double {
    const MeshPair& p = g.pairs[i];
    if (!p.p99_s) return std::numeric_limits<double>::infinity();
    return *p.p99_s / p.bound_s.value_or(1e-3);
  };
  std::stable_sort(by_p99.begin(), by_p99.end(), [&](std::size_t a, std::size_t b) { return score(a) > score(b); });
  std::stable_sort(by_loss.begin(), by_loss.end(), [&](std::size_t a, std::size_t b) { return *g.pairs[a].loss > *g.pairs[b].loss; });
  o += pair_table(g, by_p99, "slowest", "Slowest pairs (p99 against its transport's bound)");
  o += pair_table(g, by_loss, "lossiest", "Lossiest pairs");
  o += "</div></section>";
  return o;
}

}  // namespace fabscope::report
