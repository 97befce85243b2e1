#pragma once
// The node x node grid of the cluster heat map, as values: one cell per (sender block, receiver
// block). Up to max_blocks nodes each block is one node; past that, nodes are grouped into equal
// runs of consecutive ranks so the grid never exceeds max_blocks x max_blocks cells, whatever the
// cluster size. A block cell keeps the lowest, median and highest bandwidth of its directions and
// carries the outlier marks of any pair inside it, so aggregation never hides a slow link or a
// slow node. Pure: rendering (render_cluster.cpp) only draws it.
//
// With groups (the ranks under each leaf switch of a fabric input, topology.hpp) the ranks are
// drawn in group order (then by rank) instead of rank order, ranks in no group last, so the
// nodes of one bad leaf make one block. Up to max_blocks nodes each block is still one node;
// past that, one block per group while there are at most max_blocks groups (else runs of
// consecutive nodes in that order, the groups' bounds not kept).
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "report/model.hpp"

namespace fabscope::report {

struct HeatBlock {
  int first = 0, last = 0;       // ranks, inclusive (rank order); with groups the first and last rank of `ranks`
  std::vector<int> slow_nodes;   // ranks of slow nodes inside it
  std::vector<int> ranks;        // the ranks inside it, in drawing order
  int group = -1;                // index into the groups given (-1: none, or ranks in no group)
  bool consecutive() const { return ranks.size() == static_cast<std::size_t>(last - first + 1) && ranks.front() == first; }
};

struct HeatGroup {
  std::string name;              // the leaf switch's name
  std::vector<int> ranks;        // ascending
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
  int block = 1;                 // ranks per block (the last block may hold fewer; per group: the largest)
  std::vector<HeatGroup> groups; // as given (empty: rank order)
  bool by_group = false;         // past max_blocks nodes, one block per group
  std::vector<HeatBlock> blocks;
  std::vector<HeatCell> cells;   // only cells with a value or a failed pair, row-major
  double max_gbps = 0;           // the largest value in the matrix
};

HeatGrid build_heat_grid(const cluster::SavedResult& c, int max_blocks = 64, const std::vector<HeatGroup>& groups = {});

// The scale of the heat map: `bins` equal steps from 0 to a rounded-up maximum.
struct HeatScale {
  double top_gbps = 1;
  int bins = 8;
  int bin(double gbps) const;  // 0 .. bins-1
};
HeatScale heat_scale(double max_gbps, int bins = 8);

// The geometry of a drawn heat map (the cluster's and the mesh's): cells of 10 to 40 px so the
// grid stays near 640 px whatever its size, a font that follows the cell, room for the row labels
// on the left and the column labels on top (sized to the longest label, in characters), and an
// optional column of labels on the right.
struct HeatFrame {
  double cs = 0, font = 0;  // cell size, label font size
  double left = 0, top = 0; // where the grid starts
  double w = 0, h = 0;      // the viewBox
};
HeatFrame heat_frame(int rows, int cols, std::size_t longest_label_chars, bool right_labels);
// Characters of a UTF-8 label (a dash or an ellipsis counts as one).
std::size_t heat_label_chars(const std::string& utf8);
// A label cut to 14 characters with an ellipsis.
std::string heat_cut_label(const std::string& n);

// Viridis at `bins` evenly spaced points: sequential, readable in grey and with the common
// colour-vision deficiencies (dark = slow).
const char* viridis(int i, int bins);

}  // namespace fabscope::report
