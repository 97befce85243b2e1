#pragma once
// The node x node grid of the cluster heat map, as values: one cell per (sender block, receiver
// block). Up to max_blocks nodes each block is one node; past that, nodes are grouped into equal
// runs of consecutive ranks so the grid never exceeds max_blocks x max_blocks cells, whatever the
// cluster size. A block cell keeps the lowest, median and highest bandwidth of its directions and
// carries the outlier marks of any pair inside it, so aggregation never hides a slow link or a
// slow node. Pure: rendering (render_cluster.cpp) only draws it.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "report/model.hpp"

namespace fabscope::report {

struct HeatBlock {
  int first = 0, last = 0;       // ranks, inclusive
  std::vector<int> slow_nodes;   // ranks of slow nodes inside it
};

struct HeatCell {
  int row = 0, col = 0;          // block indexes: row sends, col receives
  std::size_t directions = 0;    // directions of pairs inside the block that have a value
  std::size_t failed = 0;        // directions whose pair failed (no value)
  double min_gbps = 0, median_gbps = 0, max_gbps = 0;  // over `directions` (0 when none)
  std::vector<std::pair<int, int>> slow_links;  // slow links inside it, (a, b) with a < b
  bool slow_node = false;        // its row or column block holds a slow node
  std::string error;             // the first failed pair's reason
  std::map<std::string, std::size_t> engines;  // per-pair engine names, where given
  std::string engine_reason;     // one node per cell: the pair's reason for its engine
};

struct HeatGrid {
  int world = 0;
  int block = 1;                 // ranks per block (the last block may hold fewer)
  std::vector<HeatBlock> blocks;
  std::vector<HeatCell> cells;   // only cells with a value or a failed pair, row-major
  double max_gbps = 0;           // the largest value in the matrix
};

HeatGrid build_heat_grid(const ClusterDoc& c, int max_blocks = 64);

// The scale of the heat map: `bins` equal steps from 0 to a rounded-up maximum.
struct HeatScale {
  double top_gbps = 1;
  int bins = 8;
  int bin(double gbps) const;  // 0 .. bins-1
};
HeatScale heat_scale(double max_gbps, int bins = 8);

// Viridis at `bins` evenly spaced points: sequential, readable in grey and with the common
// colour-vision deficiencies (dark = slow).
const char* viridis(int i, int bins);

}  // namespace fabscope::report
