#include "report/heatmap.hpp"

#include <algorithm>
#include <cmath>


namespace fabscope::report {

HeatGrid build_heat_grid(const cluster::SavedResult& c, int max_blocks, const std::vector<HeatGroup>& groups) {
  HeatGrid g;
  g.world = c.world;
  if (c.world <= 0 || max_blocks < 1) return g;
  // The drawing order of the ranks, and each rank's group.
  std::vector<int> order, group_of(static_cast<std::size_t>(c.world), -1);
  for (std::size_t k = 0; k < groups.size(); ++k)
    for (int r : groups[k].ranks)
      if (r >= 0 && r < c.world && group_of[static_cast<std::size_t>(r)] < 0) {
        group_of[static_cast<std::size_t>(r)] = static_cast<int>(k);
        order.push_back(r);
      }
  for (int r = 0; r < c.world; ++r)
    if (group_of[static_cast<std::size_t>(r)] < 0) order.push_back(r);
  g.groups = groups;
  std::vector<int> block_of(static_cast<std::size_t>(c.world), 0);
  auto add_block = [&](std::size_t from, std::size_t to) {  // order[from, to)
    HeatBlock b;
    b.ranks.assign(order.begin() + static_cast<std::ptrdiff_t>(from), order.begin() + static_cast<std::ptrdiff_t>(to));
    b.first = b.ranks.front(), b.last = b.ranks.back();
    if (groups.empty()) b.first = *std::min_element(b.ranks.begin(), b.ranks.end());
    b.group = group_of[static_cast<std::size_t>(b.ranks.front())];
    for (int r : b.ranks) block_of[static_cast<std::size_t>(r)] = static_cast<int>(g.blocks.size());
    g.blocks.push_back(std::move(b));
  };
  std::size_t group_count = groups.size() + 1;  // the groups and the ranks in none
  if (c.world > max_blocks && !groups.empty() && group_count <= static_cast<std::size_t>(max_blocks)) {
    g.by_group = true;
    g.block = 0;
    for (std::size_t i = 0; i < order.size();) {
      std::size_t j = i;
      while (j < order.size() && group_of[static_cast<std::size_t>(order[j])] == group_of[static_cast<std::size_t>(order[i])]) ++j;
      add_block(i, j);
      g.block = std::max(g.block, static_cast<int>(j - i));
      i = j;
    }
  } else {
    g.block = (c.world + max_blocks - 1) / max_blocks;
    for (std::size_t i = 0; i < order.size(); i += static_cast<std::size_t>(g.block))
      add_block(i, std::min(order.size(), i + static_cast<std::size_t>(g.block)));
  }
  auto blk = [&](int rank) { return static_cast<std::size_t>(block_of[static_cast<std::size_t>(rank)]); };
  for (const auto& s : c.slow_nodes) g.blocks[blk(s.rank)].slow_nodes.push_back(s.rank);

  // Accumulate per cell; cells are few (at most max_blocks^2) but the values many.
  const std::size_t n = g.blocks.size();
  std::vector<std::vector<double>> values(n * n);
  std::vector<HeatCell> cells(n * n);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t k = 0; k < n; ++k) {
      cells[r * n + k].row = static_cast<int>(r);
      cells[r * n + k].col = static_cast<int>(k);
    }
  for (const auto& p : c.pairs) {
    for (int dir = 0; dir < 2; ++dir) {
      int from = dir ? p.b : p.a, to = dir ? p.a : p.b;
      const auto& v = dir ? p.b_to_a_gbps : p.a_to_b_gbps;
      HeatCell& cell = cells[blk(from) * n + blk(to)];
      if (v) {
        values[blk(from) * n + blk(to)].push_back(*v);
        g.max_gbps = std::max(g.max_gbps, *v);
      } else if (!p.error.empty()) {
        ++cell.failed;
        if (cell.error.empty()) cell.error = p.error;
      }
      if (!p.engine.empty() && (v || !p.error.empty())) ++cell.engines[p.engine];
      if (g.block == 1) cell.engine_reason = p.engine_reason;
    }
  }
  for (const auto& l : c.slow_links) {
    cells[blk(l.a) * n + blk(l.b)].slow_links.emplace_back(l.a, l.b);
    if (blk(l.a) != blk(l.b)) cells[blk(l.b) * n + blk(l.a)].slow_links.emplace_back(l.a, l.b);
  }
  for (std::size_t i = 0; i < n * n; ++i) {
    HeatCell& cell = cells[i];
    auto& v = values[i];
    cell.directions = v.size();
    if (!v.empty()) {
      auto [lo, hi] = std::minmax_element(v.begin(), v.end());
      cell.min_gbps = *lo;
      cell.max_gbps = *hi;
      auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
      std::nth_element(v.begin(), mid, v.end());
      double m = *mid;
      if (v.size() % 2 == 0) m = (m + *std::max_element(v.begin(), mid)) / 2;
      cell.median_gbps = m;
    }
    cell.slow_node = !g.blocks[static_cast<std::size_t>(cell.row)].slow_nodes.empty() ||
                     !g.blocks[static_cast<std::size_t>(cell.col)].slow_nodes.empty();
    if (cell.directions || cell.failed || !cell.slow_links.empty()) g.cells.push_back(std::move(cell));
  }
  return g;
}

HeatScale heat_scale(double max_gbps, int bins) {
  HeatScale s;
  s.bins = std::max(bins, 1);
  if (!(max_gbps > 0)) return s;
  // A top that divides into `bins` readable steps (12.5 for 100 in 8 bins), the smallest that
  // covers the maximum.
  double raw = max_gbps / s.bins;
  double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = 10 * mag;
  for (double m : {1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 7.5, 8.0, 10.0})
    if (m * mag * s.bins >= max_gbps) {
      step = m * mag;
      break;
    }
  s.top_gbps = step * s.bins;
  return s;
}

int HeatScale::bin(double gbps) const {
  if (!(gbps > 0)) return 0;
  int b = static_cast<int>(std::floor(gbps / top_gbps * bins));
  return std::clamp(b, 0, bins - 1);
}

HeatFrame heat_frame(int rows, int cols, std::size_t longest_label_chars, bool right_labels) {
  HeatFrame f;
  const int n = std::max({rows, cols, 1});
  f.cs = std::clamp(640.0 / n, 10.0, 40.0);
  f.font = std::clamp(f.cs * 0.8, 7.0, 12.0);
  const double label = std::clamp(static_cast<double>(longest_label_chars) * f.font * 0.62, 24.0, 120.0);
  f.left = label + 6;
  f.top = label + 6;
  const double right = right_labels ? std::clamp(14 * f.font * 0.62, 24.0, 120.0) + 8 : 0;
  f.w = f.left + f.cs * cols + 8 + right;
  f.h = f.top + f.cs * rows + 8;
  return f;
}

std::size_t heat_label_chars(const std::string& utf8) {
  std::size_t chars = 0;
  for (unsigned char ch : utf8) chars += (ch & 0xC0) != 0x80;
  return chars;
}

std::string heat_cut_label(const std::string& n) { return n.size() > 14 ? n.substr(0, 13) + "\xE2\x80\xA6" : n; }

const char* viridis(int i, int bins) {
  // matplotlib's viridis (van der Walt & Smith) at 9 evenly spaced points; a bin takes the
  // nearest one, so any bin count spans the whole map from dark to light.
  static const char* v[] = {"#440154", "#472d7b", "#3b528b", "#2c728e", "#21918c",
                            "#28ae80", "#5ec962", "#addc30", "#fde725"};
  constexpr int kN = sizeof v / sizeof v[0];
  if (bins <= 1) return v[kN / 2];
  int k = static_cast<int>(std::lround(static_cast<double>(std::clamp(i, 0, bins - 1)) * (kN - 1) / (bins - 1)));
  return v[k];
}

}  // namespace fabscope::report
