// The cluster section: per `fabscope cluster` input, the node x node heat map of pairwise
// bandwidth (aggregated into blocks past 64 nodes) with slow links and slow nodes marked
// differently, the outliers as a table with their evidence, and the consistency table
// (node x attribute, odd values marked against the majority reference).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "report/heatmap.hpp"
#include "core/strings.hpp"
#include "report/html.hpp"
#include "report/render.hpp"
#include "report/topology.hpp"

namespace fabscope::report {

namespace {

constexpr int kMaxBlocks = 64;       // the heat map never has more than 64 x 64 cells
constexpr std::size_t kMaxRows = 500;  // outlier and failure tables list at most this many
constexpr int kNodeRowsFull = 64;    // up to this many nodes the consistency table lists all


// Three significant digits: a shaped NIC runs at 0.00178 Gb/s, a healthy one at 392 Gb/s.
std::string gbps_number(double v) {
  if (v >= 100) return fmt(v, 0);
  if (v >= 10) return fmt(v, 1);
  if (v >= 1) return fmt(v, 2);
  return core::format_double("%.3g", v);
}

std::string gbps(std::optional<double> v) { return v ? gbps_number(*v) + " Gb/s" : "n/a"; }
std::string gbps(double v) { return gbps(std::optional<double>(v)); }

// "0-3,8-11": a block's ranks as runs (the ranks under one leaf need not be consecutive).
std::string rank_runs(const std::vector<int>& ranks) {
  std::vector<int> r = ranks;
  std::sort(r.begin(), r.end());
  std::string o;
  for (std::size_t i = 0; i < r.size();) {
    std::size_t j = i;
    while (j + 1 < r.size() && r[j + 1] == r[j] + 1) ++j;
    o += (o.empty() ? "" : ",") + std::to_string(r[i]) + (j > i ? "-" + std::to_string(r[j]) : "");
    i = j + 1;
  }
  return o;
}

std::string group_name(const HeatGrid& g, const HeatBlock& b) {
  return b.group >= 0 ? g.groups[static_cast<std::size_t>(b.group)].name : "not placed in the fabric";
}

std::string block_name(const cluster::SavedResult& c, const HeatGrid& g, const HeatBlock& b) {
  if (b.ranks.size() == 1) return c.names[static_cast<std::size_t>(b.first)];
  if (g.by_group) return group_name(g, b) + " (" + std::to_string(b.ranks.size()) + " nodes, ranks " + rank_runs(b.ranks) + ")";
  if (!b.consecutive()) return "ranks " + rank_runs(b.ranks);
  return "ranks " + std::to_string(b.first) + "\xE2\x80\x93" + std::to_string(b.last);
}

std::string cut_label(const std::string& n) { return heat_cut_label(n); }

// Short label beside the grid: the node name (cut to 14 characters), the leaf, or the rank range.
std::string block_label(const cluster::SavedResult& c, const HeatGrid& g, const HeatBlock& b) {
  if (b.ranks.size() == 1) return cut_label(c.names[static_cast<std::size_t>(b.first)]);
  if (g.by_group) return cut_label(b.group >= 0 ? group_name(g, b) : "not placed");
  if (!b.consecutive()) return cut_label(rank_runs(b.ranks));
  return std::to_string(b.first) + "\xE2\x80\x93" + std::to_string(b.last);
}

// The data-ranks / data-from / data-to value: "3", "16-31", or runs "0-3,8-11" (leaf blocks),
// or the leaf's name where the runs would be long.
std::string rank_range(const HeatGrid& g, const HeatBlock& b) {
  if (b.ranks.size() == 1 || b.consecutive())
    return b.first == b.last ? std::to_string(b.first) : std::to_string(b.first) + "-" + std::to_string(b.last);
  std::string runs = rank_runs(b.ranks);
  return runs.size() <= 40 ? runs : esc(group_name(g, b));
}

std::string engines_text(const std::map<std::string, std::size_t>& e, bool one) {
  std::string s;
  for (const auto& [name, n] : e)
    s += (s.empty() ? "" : ", ") + name + (one ? std::string() : " " + std::to_string(n));
  return s;
}

const cluster::SavedSlowLink* find_link(const cluster::SavedResult& c, int a, int b) {
  for (const auto& l : c.slow_links)
    if (l.a == a && l.b == b) return &l;
  return nullptr;
}

const cluster::SavedSlowNode* find_node(const cluster::SavedResult& c, int rank) {
  for (const auto& s : c.slow_nodes)
    if (s.rank == rank) return &s;
  return nullptr;
}

std::string slow_node_evidence(const cluster::SavedResult& c, const cluster::SavedSlowNode& s) {
  return "SLOW NODE " + c.names[static_cast<std::size_t>(s.rank)] + ": " + std::to_string(s.slow_pairs) + " of " +
         std::to_string(s.pairs) + " pairs slow, its median " + gbps(s.median_gbps) + " against the cluster's " +
         gbps(c.median_gbps);
}

std::string slow_link_evidence(const cluster::SavedResult& c, const cluster::SavedSlowLink& l) {
  return "SLOW LINK " + c.names[static_cast<std::size_t>(l.a)] + " \xE2\x80\x93 " +
         c.names[static_cast<std::size_t>(l.b)] + ": " + gbps(l.gbps) + " (slower direction) below the threshold " +
         gbps(c.threshold_gbps) + "; their other pairs' medians " + gbps(l.a_median_gbps) + " and " +
         gbps(l.b_median_gbps);
}

std::string cell_title(const cluster::SavedResult& c, const HeatGrid& g, const HeatCell& cell) {
  const HeatBlock& from = g.blocks[static_cast<std::size_t>(cell.row)];
  const HeatBlock& to = g.blocks[static_cast<std::size_t>(cell.col)];
  std::string t = block_name(c, g, from) + " \xE2\x86\x92 " + block_name(c, g, to) + ": ";
  if (from.ranks.size() == 1 && to.ranks.size() == 1) {
    t += cell.directions ? gbps(cell.min_gbps) : "the pair failed: " + cell.error;
    if (!cell.engines.empty()) t += "; engine " + engines_text(cell.engines, true);
    if (!cell.engine_reason.empty()) t += " (" + cell.engine_reason + ")";
  } else {
    t += "lowest " + gbps(cell.min_gbps) + ", median " + gbps(cell.median_gbps) + ", highest " +
         gbps(cell.max_gbps) + " over " + std::to_string(cell.directions) + " measured directions";
    if (cell.failed) t += "; " + std::to_string(cell.failed) + " failed (" + cell.error + ")";
    if (!cell.engines.empty()) t += "; engines " + engines_text(cell.engines, false);
  }
  std::size_t listed = 0;
  for (const auto& [a, b] : cell.slow_links) {
    if (++listed > 3) {
      t += "\n... and " + std::to_string(cell.slow_links.size() - 3) + " more slow links (table below)";
      break;
    }
    if (const auto* l = find_link(c, a, b)) t += "\n" + slow_link_evidence(c, *l);
  }
  for (const HeatBlock* b : {&from, &to})
    for (int r : b->slow_nodes)
      if (const auto* s = find_node(c, r)) t += "\n" + slow_node_evidence(c, *s);
  return t;
}

std::string heat_map(const Input& in, int k, const HeatGrid& g, const HeatScale& scale) {
  // One node per row with the nodes ordered by leaf: the leaves' bounds are drawn across the
  // map and their names on the right.
  const bool bounds = !g.groups.empty() && !g.by_group && g.block == 1;
  const cluster::SavedResult& c = in.cluster;
  const int n = static_cast<int>(g.blocks.size());
  std::size_t longest = 0;  // label characters
  for (const auto& b : g.blocks)
    longest = std::max(longest, heat_label_chars(block_label(c, g, b)) + (b.slow_nodes.empty() ? 0 : 2));
  const HeatFrame f = heat_frame(n, n, longest, bounds);
  const double cs = f.cs, font = f.font, left = f.left, top = f.top, w = f.w, h = f.h;
  std::string o = "<svg class=\"heatmap\" id=\"heatmap-" + std::to_string(k) + "\" viewBox=\"0 0 " + coord(w) + " " +
                  coord(h) + "\" width=\"" + coord(w) + "\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\" data-blocks=\"" +
                  std::to_string(n) + "\" data-block-ranks=\"" + std::to_string(g.block) + "\"" +
                  (g.groups.empty() ? std::string() : " data-order=\"leaf\"") + "><title>" +
                  esc(in.label) + ": bandwidth of every measured direction, sender (row) to receiver (column), Gb/s"
                  "</title>";
  // Labels: rows (senders) on the left, columns (receivers) on top, rotated.
  o += "<g class=\"labels\" font-size=\"" + coord(font) + "\">";
  for (int i = 0; i < n; ++i) {
    const HeatBlock& b = g.blocks[static_cast<std::size_t>(i)];
    std::string cls = b.slow_nodes.empty() ? "node-label" : "node-label slow-node";
    std::string text = (b.slow_nodes.empty() ? "" : "\xE2\x96\xB2 ") + block_label(c, g, b);
    std::string about = b.ranks.size() == 1 ? " (rank " + std::to_string(b.first) + ")"
                        : g.by_group        ? std::string()
                                            : ": " + c.names[static_cast<std::size_t>(b.first)] + " \xE2\x80\xA6 " +
                                           c.names[static_cast<std::size_t>(b.last)];
    if (b.ranks.size() == 1 && !g.groups.empty()) about += ", under " + group_name(g, b);
    std::string tip = "<title>" + esc(block_name(c, g, b) + about) + "</title>";
    double mid = i * cs + cs / 2;
    o += "<text class=\"" + cls + "\" data-ranks=\"" + rank_range(g, b) + "\" x=\"" + coord(left - 4) + "\" y=\"" +
         coord(top + mid + font * 0.35) + "\" text-anchor=\"end\">" + tip + esc(text) + "</text>";
    o += "<text class=\"" + cls + "\" data-ranks=\"" + rank_range(g, b) + "\" transform=\"translate(" +
         coord(left + mid + font * 0.35) + " " + coord(top - 4) + ") rotate(-90)\">" + tip + esc(text) + "</text>";
  }
  o += "</g><rect class=\"frame\" x=\"" + coord(left) + "\" y=\"" + coord(top) + "\" width=\"" + coord(cs * n) +
       "\" height=\"" + coord(cs * n) + "\" fill=\"#f4f4f4\" stroke=\"#999\"/>";
  // Cells.
  o += "<g class=\"cells\">";
  for (const auto& cell : g.cells) {
    const HeatBlock& from = g.blocks[static_cast<std::size_t>(cell.row)];
    const HeatBlock& to = g.blocks[static_cast<std::size_t>(cell.col)];
    std::string outlier;
    if (!cell.slow_links.empty()) outlier = "slow-link";
    if (cell.slow_node) outlier += outlier.empty() ? "slow-node" : " slow-node";
    std::string cls = cell.directions ? "cell" : "cell failed";
    std::string fill = cell.directions ? viridis(scale.bin(cell.min_gbps), scale.bins) : "#bdbdbd";
    o += "<rect class=\"" + cls + "\" x=\"" + coord(left + cell.col * cs) + "\" y=\"" + coord(top + cell.row * cs) +
         "\" width=\"" + coord(cs) + "\" height=\"" + coord(cs) + "\" fill=\"" + fill + "\" data-from=\"" +
         rank_range(g, from) + "\" data-to=\"" + rank_range(g, to) + "\"";
    if (cell.directions) o += " data-gbps=\"" + gbps_number(cell.min_gbps) + "\"";
    if (!outlier.empty()) o += " data-outlier=\"" + outlier + "\"";
    if (cell.engines.size() == 1) o += " data-engine=\"" + esc(cell.engines.begin()->first) + "\"";
    o += "><title>" + esc(cell_title(c, g, cell)) + "</title></rect>";
  }
  o += "</g>";
  // Marks drawn over the cells: a slow node outlines its row and column (dashed), a slow link
  // crosses its cells (solid, with a white halo so it shows on dark and light cells alike).
  o += "<g class=\"marks\" fill=\"none\">";
  for (int i = 0; i < n; ++i) {
    const HeatBlock& b = g.blocks[static_cast<std::size_t>(i)];
    if (b.slow_nodes.empty()) continue;
    for (int axis = 0; axis < 2; ++axis) {
      double x = axis ? left + i * cs : left, y = axis ? top : top + i * cs;
      double ww = axis ? cs : cs * n, hh = axis ? cs * n : cs;
      o += "<rect class=\"mark-node\" data-ranks=\"" + rank_range(g, b) + "\" x=\"" + coord(x) + "\" y=\"" + coord(y) +
           "\" width=\"" + coord(ww) + "\" height=\"" + coord(hh) +
           "\" stroke=\"#D55E00\" stroke-width=\"2.5\" stroke-dasharray=\"6 3\"/>";
    }
  }
  const double sw = std::max(1.5, cs / 8);
  for (const auto& cell : g.cells) {
    if (!cell.failed && cell.slow_links.empty()) continue;
    double x0 = left + cell.col * cs + cs * 0.2, y0 = top + cell.row * cs + cs * 0.2, x1 = x0 + cs * 0.6,
           y1 = y0 + cs * 0.6;
    if (!cell.slow_links.empty()) {
      std::string d = "M" + coord(x0) + " " + coord(y0) + "L" + coord(x1) + " " + coord(y1);
      d += "M" + coord(x1) + " " + coord(y0) + "L" + coord(x0) + " " + coord(y1);
      o += "<path class=\"mark-link\" data-from=\"" + rank_range(g, g.blocks[static_cast<std::size_t>(cell.row)]) +
           "\" data-to=\"" + rank_range(g, g.blocks[static_cast<std::size_t>(cell.col)]) + "\" d=\"" + d +
           "\" stroke=\"#fff\" stroke-width=\"" + coord(sw * 2.2) + "\"/><path d=\"" + d +
           "\" stroke=\"#000\" stroke-width=\"" + coord(sw) + "\"/>";
    }
    if (cell.failed)  // a failed pair: one diagonal the other way (alone, or beside a cross)
      o += "<path class=\"mark-failed\" data-from=\"" + rank_range(g, g.blocks[static_cast<std::size_t>(cell.row)]) +
           "\" data-to=\"" + rank_range(g, g.blocks[static_cast<std::size_t>(cell.col)]) + "\" d=\"M" + coord(x0) + " " +
           coord(y1) + "L" + coord(x1) + " " + coord(y0) + "\" stroke=\"#000\" stroke-width=\"" + coord(sw * 0.7) +
           "\" stroke-dasharray=\"" + coord(sw) + " " + coord(sw) + "\"/>";
  }
  o += "</g>";
  if (bounds) {
    o += "<g class=\"leaf-bounds\" font-size=\"" + coord(font) + "\">";
    for (int i = 0; i < n;) {
      int j = i;
      const int grp = g.blocks[static_cast<std::size_t>(i)].group;
      while (j < n && g.blocks[static_cast<std::size_t>(j)].group == grp) ++j;
      if (i > 0) {  // the bound between two leaves, across and down the map
        o += "<path class=\"leaf-bound\" d=\"M" + coord(left) + " " + coord(top + i * cs) + "H" + coord(left + cs * n) +
             "M" + coord(left + i * cs) + " " + coord(top) + "V" + coord(top + cs * n) +
             "\" stroke=\"#fff\" stroke-width=\"2\"/>";
      }
      std::vector<int> ranks;
      for (int k = i; k < j; ++k) ranks.push_back(g.blocks[static_cast<std::size_t>(k)].first);
      const std::string name = grp >= 0 ? g.groups[static_cast<std::size_t>(grp)].name : "not placed";
      o += "<text class=\"leaf-label\" data-leaf=\"" + esc(name) + "\" x=\"" + coord(left + cs * n + 6) + "\" y=\"" +
           coord(top + (i + j) * cs / 2 + font * 0.35) + "\"><title>" +
           esc(name + ": " + std::to_string(j - i) + (j - i == 1 ? " node" : " nodes") + ", ranks " + rank_runs(ranks)) +
           "</title>" + esc(cut_label(name)) + "</text>";
      i = j;
    }
    o += "</g>";
  }
  o += "</svg>";
  return o;
}

std::string heat_legend(const HeatScale& s, bool aggregated) {
  std::string o = "<ul class=\"legend heat-legend\">";
  double step = s.top_gbps / s.bins;
  for (int i = 0; i < s.bins; ++i) {
    o += "<li><svg width=\"18\" height=\"14\" viewBox=\"0 0 18 14\" aria-hidden=\"true\"><rect width=\"18\" "
         "height=\"14\" fill=\"" + std::string(viridis(i, s.bins)) + "\"/></svg> " +
         esc(gbps_number(step * i) + "\xE2\x80\x93" + gbps_number(step * (i + 1))) + (i + 1 == s.bins ? " Gb/s" : "") + "</li>";
  }
  o += "<li><svg width=\"18\" height=\"14\" viewBox=\"0 0 18 14\" aria-hidden=\"true\"><rect width=\"18\" "
       "height=\"14\" fill=\"#f4f4f4\" stroke=\"#999\"/></svg> not measured</li>"
       "<li><svg width=\"18\" height=\"14\" viewBox=\"0 0 18 14\" aria-hidden=\"true\"><rect width=\"18\" "
       "height=\"14\" fill=\"#bdbdbd\"/><path d=\"M4 11L14 3\" stroke=\"#000\" stroke-dasharray=\"2 2\"/></svg> "
       "pair failed" + std::string(aggregated ? " (in the block)" : "") + "</li>"
       "<li><svg width=\"18\" height=\"14\" viewBox=\"0 0 18 14\" aria-hidden=\"true\"><rect width=\"18\" "
       "height=\"14\" fill=\"#2c728e\"/><path d=\"M4 2L14 12M14 2L4 12\" stroke=\"#fff\" stroke-width=\"3.5\"/>"
       "<path d=\"M4 2L14 12M14 2L4 12\" stroke=\"#000\" stroke-width=\"1.6\"/></svg> slow link" +
       std::string(aggregated ? " (in the block)" : "") +
       "</li><li><svg width=\"18\" height=\"14\" viewBox=\"0 0 18 14\" aria-hidden=\"true\"><rect x=\"1\" y=\"1\" "
       "width=\"16\" height=\"12\" fill=\"none\" stroke=\"#D55E00\" stroke-width=\"2\" stroke-dasharray=\"4 2\"/>"
       "</svg> \xE2\x96\xB2 slow node: its row and column</li></ul>";
  return o;
}

std::string outlier_tables(const cluster::SavedResult& c) {
  std::string o;
  if (c.judged)
    o += "<p>Pairs judged on their slower direction: median " + esc(gbps(c.median_gbps)) + ", MAD " +
         esc(gbps(c.mad_gbps)) + "; a pair below " + esc(gbps(c.threshold_gbps)) + " is slow.</p>";
  else if (!c.pairs.empty())
    o += "<p class=\"muted\">Too few measured pairs (" + std::to_string(c.measured) +
         ") to judge outliers: no slow link or slow node can be named.</p>";
  auto more = [](std::size_t n) {
    return n > kMaxRows ? "<p class=\"muted\">" + std::to_string(n - kMaxRows) +
                              " more not listed here; the JSON input has them all.</p>"
                        : std::string();
  };
  if (!c.slow_nodes.empty()) {
    o += "<div class=\"scroll\"><table class=\"outliers slow-nodes\"><thead><tr><th>slow node</th><th>rank</th>"
         "<th>slow pairs</th><th>its median</th><th>cluster median</th></tr></thead><tbody>";
    for (std::size_t i = 0; i < c.slow_nodes.size() && i < kMaxRows; ++i) {
      const auto& s = c.slow_nodes[i];
      o += "<tr class=\"outlier\" data-outlier=\"slow-node\" data-rank=\"" + std::to_string(s.rank) + "\"><td>\xE2\x96\xB2 " +
           esc(c.names[static_cast<std::size_t>(s.rank)]) + "</td><td class=\"num\">" + std::to_string(s.rank) +
           "</td><td class=\"num\">" + std::to_string(s.slow_pairs) + " of " + std::to_string(s.pairs) +
           "</td><td class=\"num\">" + esc(gbps(s.median_gbps)) + "</td><td class=\"num\">" + esc(gbps(c.median_gbps)) +
           "</td></tr>";
    }
    o += "</tbody></table></div>" + more(c.slow_nodes.size());
  }
  if (!c.slow_links.empty()) {
    o += "<div class=\"scroll\"><table class=\"outliers slow-links\"><thead><tr><th>slow link</th><th>ranks</th>"
         "<th>pair (slower direction)</th><th>median of each node's other pairs</th><th>threshold</th></tr></thead>"
         "<tbody>";
    for (std::size_t i = 0; i < c.slow_links.size() && i < kMaxRows; ++i) {
      const auto& l = c.slow_links[i];
      o += "<tr class=\"outlier\" data-outlier=\"slow-link\" data-a=\"" + std::to_string(l.a) + "\" data-b=\"" +
           std::to_string(l.b) + "\"><td>\xE2\x9C\x95 " + esc(c.names[static_cast<std::size_t>(l.a)]) + " \xE2\x80\x93 " +
           esc(c.names[static_cast<std::size_t>(l.b)]) + "</td><td class=\"num\">" + std::to_string(l.a) + ", " +
           std::to_string(l.b) + "</td><td class=\"num\">" + esc(gbps(l.gbps)) + "</td><td class=\"num\">" +
           esc(gbps(l.a_median_gbps)) + ", " + esc(gbps(l.b_median_gbps)) + "</td><td class=\"num\">" +
           esc(gbps(c.threshold_gbps)) + "</td></tr>";
    }
    o += "</tbody></table></div>" + more(c.slow_links.size());
  }
  std::vector<const cluster::PairResult*> failed;
  for (const auto& p : c.pairs)
    if (!p.error.empty()) failed.push_back(&p);
  if (!failed.empty()) {
    o += "<div class=\"scroll\"><table class=\"outliers failed-pairs\"><thead><tr><th>failed pair</th><th>ranks</th>"
         "<th>why</th></tr></thead><tbody>";
    for (std::size_t i = 0; i < failed.size() && i < kMaxRows; ++i) {
      const auto& p = *failed[i];
      o += "<tr class=\"failed\" data-a=\"" + std::to_string(p.a) + "\" data-b=\"" + std::to_string(p.b) + "\"><td>" +
           esc(c.names[static_cast<std::size_t>(p.a)]) + " \xE2\x80\x93 " + esc(c.names[static_cast<std::size_t>(p.b)]) +
           "</td><td class=\"num\">" + std::to_string(p.a) + ", " + std::to_string(p.b) + "</td><td class=\"mono\">" +
           esc(p.error) + "</td></tr>";
    }
    o += "</tbody></table></div>" + more(failed.size());
  }
  return o;
}

// One cell of the consistency table.
struct Cell {
  std::string html;
  bool odd = false;
  std::string key;
};

std::string td(const Cell& c) {
  if (!c.odd) return "<td>" + c.html + "</td>";
  return "<td class=\"odd\" data-key=\"" + esc(c.key) + "\">" + c.html + "</td>";
}

std::string consistency_table(const cluster::SavedResult& c) {
  if (c.attributes.empty()) return "";
  // The nodes shown: all of them in a small cluster, else those with a differing value or an
  // error (the others equal the majority row).
  std::vector<std::size_t> shown;
  for (std::size_t i = 0; i < c.nodes.size(); ++i) {
    const std::string& name = c.names[static_cast<std::size_t>(c.nodes[i].rank)];
    bool odd = !c.nodes[i].error.empty();
    for (const auto& a : c.attributes) odd = odd || std::find(a.odd.begin(), a.odd.end(), name) != a.odd.end();
    if (c.nodes.size() <= static_cast<std::size_t>(kNodeRowsFull) || odd) shown.push_back(i);
  }
  const std::size_t hidden = c.nodes.size() - shown.size();
  if (shown.size() > kMaxRows) shown.resize(kMaxRows);
  // columns[0] is the majority, then one per node shown; rows are the attributes.
  std::vector<std::string> heads = {"majority (nodes)"};
  std::vector<std::vector<Cell>> cols(1);
  for (const auto& a : c.attributes)
    cols[0].push_back({(a.reference.empty() ? std::string("\xE2\x80\x94") : esc(a.reference)) + " <span class=\"muted\">(" +
                           std::to_string(a.reference_count) + (a.tie ? ", tie" : "") + ")</span>",
                       false, a.key});
  for (std::size_t i : shown) {
    const auto& node = c.nodes[i];
    const std::string& name = c.names[static_cast<std::size_t>(node.rank)];
    heads.push_back(name);
    std::vector<Cell> col;
    for (const auto& a : c.attributes) {
      const std::string& v = a.values[i];
      bool odd = std::find(a.odd.begin(), a.odd.end(), name) != a.odd.end();
      if (!node.error.empty()) col.push_back({"<span class=\"muted\">(no value: " + esc(node.error) + ")</span>", true, a.key});
      else if (odd) col.push_back({"<span title=\"differs from the majority value " + esc(a.reference) + "\">\xE2\x89\xA0 " + esc(v) + "</span>", true, a.key});
      else col.push_back({v.empty() ? std::string("\xE2\x80\x94") : esc(v), false, a.key});
    }
    cols.push_back(std::move(col));
  }
  std::string o = "<h4>Consistency: the same facts on every node</h4><p class=\"muted\">The reference is the "
                  "majority value; a value that differs is marked \xE2\x89\xA0 and highlighted, an unknown one "
                  "is \xE2\x80\x94.";
  if (hidden) o += " " + std::to_string(hidden) + " nodes that agree with the majority on every attribute are not listed.";
  o += "</p><div class=\"scroll\">";
  // A few nodes read best as columns beside the majority; many as rows.
  if (cols.size() <= 9) {
    o += "<table class=\"consistency by-attribute\"><thead><tr><th>attribute</th>";
    for (std::size_t k = 0; k < heads.size(); ++k)
      o += k ? "<th data-node=\"" + esc(heads[k]) + "\">" + esc(heads[k]) + "</th>" : "<th>" + esc(heads[k]) + "</th>";
    o += "</tr></thead><tbody>";
    for (std::size_t j = 0; j < c.attributes.size(); ++j) {
      const auto& a = c.attributes[j];
      o += "<tr class=\"attribute\" data-key=\"" + esc(a.key) + "\"><th title=\"" + esc(a.key) + "\">" + esc(a.title) +
           "</th>";
      for (const auto& col : cols) o += td(col[j]);
      o += "</tr>";
    }
  } else {
    o += "<table class=\"consistency by-node\"><thead><tr><th>node</th>";
    for (const auto& a : c.attributes)
      o += "<th data-key=\"" + esc(a.key) + "\" title=\"" + esc(a.key) + "\">" + esc(a.title) + "</th>";
    o += "</tr></thead><tbody>";
    for (std::size_t k = 0; k < cols.size(); ++k) {
      o += k ? "<tr class=\"node\" data-node=\"" + esc(heads[k]) + "\"><th>" + esc(heads[k]) + "</th>"
             : "<tr class=\"reference\"><th>" + esc(heads[k]) + "</th>";
      for (const auto& cell : cols[k]) o += td(cell);
      o += "</tr>";
    }
  }
  o += "</tbody></table></div>";
  return o;
}

}  // namespace

std::string render_cluster(const Report& r) {
  std::string o;
  int k = 0;
  for (const auto& in : r.inputs) {
    if (in.kind != InputKind::Cluster) continue;
    const cluster::SavedResult& c = in.cluster;
    if (o.empty())
      o = "<section id=\"cluster\"><h2>Cluster</h2><p class=\"muted\">Each cell is the bandwidth from one "
          "node to another (row: sender, column: receiver) in Gb/s (10<sup>9</sup> bits per second), "
          "measured pair by pair while no other pair used either node. Darker is slower.</p>";
    ++k;
    o += "<div class=\"cluster\" id=\"cluster-" + std::to_string(k) + "\" data-world=\"" + std::to_string(c.world) +
         "\"><h3>" + esc(in.label) + ": " + std::to_string(c.nodes.size()) + " of " + std::to_string(c.world) +
         " nodes";
    if (!c.launcher.empty()) o += ", launcher " + esc(c.launcher);
    o += "</h3>";
    if (!c.missing.empty()) {
      o += "<p><span class=\"sev sev-fail\">missing</span> ";
      std::size_t i = 0;
      for (const auto& [name, why] : c.missing) {
        if (i++ >= 20) {
          o += " and " + std::to_string(c.missing.size() - 20) + " more";
          break;
        }
        o += (i > 1 ? ", " : "") + esc(name) + (why.empty() ? "" : " (" + esc(why) + ")");
      }
      o += "</p>";
    }
    std::map<std::string, std::size_t> engines;
    for (const auto& p : c.pairs)
      if (!p.engine.empty()) ++engines[p.engine];
    std::string how = "Pairs " + esc(c.pairs_mode.empty() ? "?" : c.pairs_mode) + ": " + std::to_string(c.pairs.size()) +
                      " pairs in " + std::to_string(c.rounds) + " rounds, " + std::to_string(c.measured) +
                      " measured, " + fmt(c.seconds_per_direction, 1) + " s per direction";
    if (engines.size() > 1)  // the detector compares like with like: one engine's pairs
      how += "; engine per pair: " + esc(engines_text(engines, false)) + ", outliers judged on the " +
             esc(c.engine) + " pairs";
    else if (!engines.empty()) how += "; engine " + esc(engines.begin()->first);
    else if (!c.engine.empty()) how += "; engine " + esc(c.engine);
    o += "<p>" + how + ".</p>";
    // With a fabric input that places the nodes, the map is ordered by leaf switch.
    std::vector<HeatGroup> groups;
    std::string why_not;
    const Input* fabric = c.pairs.empty() ? nullptr : fabric_for_cluster(r, c, &groups, &why_not);
    if (fabric) {
      std::size_t placed = 0;
      for (const auto& grp : groups) placed += grp.ranks.size();
      o += "<p class=\"leaf-order\">Ordered by leaf switch of the fabric " + esc(fabric->label) + " (" +
           std::to_string(groups.size()) + (groups.size() == 1 ? " leaf" : " leaves") + "; " + std::to_string(placed) +
           " of " + std::to_string(c.world) + " nodes placed by their InfiniBand LID, the others last), so the nodes "
           "of one bad leaf make one block.</p>";
    } else if (!c.pairs.empty() && !(groups = tor_groups(c)).empty()) {
      std::size_t placed = 0;
      for (const auto& grp : groups) placed += grp.ranks.size();
      o += "<p class=\"leaf-order\">Ordered by top-of-rack switch (" + std::to_string(groups.size()) +
           (groups.size() == 1 ? " switch" : " switches") + "; " + std::to_string(placed) + " of " +
           std::to_string(c.world) + " nodes placed by the LLDP neighbour they reported, the others last), so the "
           "nodes of one bad rack make one block.</p>";
    } else if (!why_not.empty()) {
      o += "<p class=\"muted\">In rank order: the fabric input does not place these nodes (" + esc(why_not) + ").</p>";
    }
    if (!c.pairs.empty()) {
      HeatGrid g = build_heat_grid(c, kMaxBlocks, groups);
      HeatScale s = heat_scale(g.max_gbps);
      o += "<figure>" + heat_map(in, k, g, s) + "<figcaption>" + heat_legend(s, g.block > 1);
      if (g.by_group)
        o += std::to_string(c.world) + " nodes in one block per leaf switch: each cell shows the lowest bandwidth "
             "among its block's directions (hover: lowest, median, highest) and carries the mark of any outlier "
             "inside it.";
      else if (g.block > 1)
        o += std::to_string(c.world) + " nodes in blocks of " + std::to_string(g.block) +
             (groups.empty() ? " consecutive ranks" : " nodes in leaf order") +
             ": each cell shows the lowest bandwidth among its block's directions (hover: "
             "lowest, median, highest) and carries the mark of any outlier inside it.";
      else
        o += "Hover a cell for its value and, for an outlier, the evidence.";
      o += "</figcaption></figure>";
      o += outlier_tables(c);
    }
    // Suspects are drawn and listed in the fabric section when a fabric input is the one they
    // were found in; else they are listed here.
    if (c.localization.attempted) {
      bool drawn = false;
      for (const auto& f : r.inputs)
        drawn = drawn || (f.kind == InputKind::Fabric && localization_mismatch(f.fabric.subnet, c.localization).empty());
      if (!drawn)
        o += "<h4>Suspects: where the slow pairs meet in the fabric</h4>" + suspects_table(c, in.label, 1) +
             "<p class=\"muted\">Give the fabric file the run was localized on (<code>fabscope fabric --save</code>) to see them "
             "in the topology picture.</p>";
    }
    o += consistency_table(c);
    if (!c.drain.empty()) {
      o += "<details><summary>Drain commands (" + std::to_string(c.drain.size()) + ")</summary><ul class=\"mono\">";
      for (const auto& d : c.drain) o += "<li>" + esc(d) + "</li>";
      o += "</ul></details>";
    }
    o += "</div>";
  }
  if (!o.empty()) o += "</section>";
  return o;
}

}  // namespace fabscope::report
