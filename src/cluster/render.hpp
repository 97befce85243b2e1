#pragma once
// Human output of `fabscope cluster`, fitting `width` columns (100 by default) at any node count:
// the consistency table shows only the attributes that differ and the nodes that differ in one
// of them; the pairwise matrix is numeric up to 10 nodes, then a heat map of one character per
// node, and beyond the width one character per block of nodes (its slowest pair).
#include <string>
#include <vector>

#include "cluster/outliers.hpp"
#include "cluster/result.hpp"

namespace fabscope::cluster {

std::string render_consistency(const Consistency& c, std::size_t width = 100);
std::string render_matrix(int n, const std::vector<PairResult>& pairs, const std::vector<std::string>& names,
                          double median_gbps, std::size_t width = 100);
// The suspects of --fabric, a table and the notes.
std::string render_localization(const Localization& l, const std::vector<std::string>& names,
                                std::size_t width = 100);
std::string render_text(const ClusterResult& r, bool drain_ran, std::size_t width = 100);

}  // namespace fabscope::cluster
