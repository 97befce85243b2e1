#pragma once
// Outlier detection over pairwise bandwidths, robust to the outliers themselves: the median and
// the median absolute deviation (MAD) of every measured pair. A pair is slow below
//   median - min(max(k * 1.4826 * MAD, min_drop * median), max_drop * median)
// (1.4826 * MAD estimates the standard deviation of normal noise; the relative floor keeps a
// near-zero MAD, as on a quiet fabric, from calling a 2 % dip slow; the ceiling keeps a noisy
// fabric from excusing a pair at less than half the median). Then
//   slow node  most of its measured pairs are slow (>= node_fraction, at least 2 pairs): the
//              node's NIC, cable or PCIe slot, not its peers;
//   slow link  a slow pair whose two nodes are not slow nodes: fine with everyone else, slow
//              with each other (a cable, a switch port, a route between them).
// Pure.
#include <optional>
#include <string>
#include <vector>

#include "core/finding.hpp"

namespace fabscope::cluster {

// A bandwidth as text: one decimal from 1 Gb/s up, three significant digits below (a node shaped
// to a few Mbit/s reads 0.00185, not 0.0); "-" when not finite.
std::string format_gbps(double v);

struct PairResult {
  int a = 0, b = 0;                   // ranks, a < b
  std::optional<double> a_to_b_gbps;  // measured a -> b
  std::optional<double> b_to_a_gbps;
  std::string error;                  // the measurement failed: why (both values then unset)
  std::string engine;                 // "rdma" | "tcp" | "" (not measured)
  std::string engine_reason;          // why that engine (engine_choice.hpp)
  std::optional<double> wall_seconds; // the pair's test from start to end, both directions and setup
  // The pair's figure: the slower direction (a link is as good as its worse direction).
  std::optional<double> value_gbps() const;
};

struct OutlierOptions {
  double mad_k = 4.0;
  double min_drop = 0.15;
  double max_drop = 0.5;
  double node_fraction = 0.75;
  std::size_t min_pairs = 3;  // fewer measured pairs: no statistics, no verdict
};

struct SlowNode {
  int rank = 0;
  std::size_t pairs = 0, slow_pairs = 0;
  double median_gbps = 0;  // of its own pairs
};

struct SlowLink {
  int a = 0, b = 0;
  double value_gbps = 0;
  double a_median_gbps = 0, b_median_gbps = 0;  // of each node's other pairs (NaN: none)
};

struct Outliers {
  std::size_t measured = 0;
  double median_gbps = 0, mad_gbps = 0, threshold_gbps = 0;
  bool judged = false;  // enough pairs for a verdict
  std::vector<SlowNode> slow_nodes;  // by rank
  std::vector<SlowLink> slow_links;  // by (a, b)
};

// n: node count (ranks 0..n-1). Pairs naming ranks outside it are ignored.
Outliers detect_outliers(int n, const std::vector<PairResult>& pairs, const OutlierOptions& opts = {});

// cluster.slow_node / cluster.slow_link / cluster.pair_failed findings with the evidence numbers.
std::vector<Finding> outlier_findings(const Outliers& o, const std::vector<PairResult>& pairs,
                                      const std::vector<std::string>& names);

double median_of(std::vector<double> v);  // NaN when empty

// The slow threshold of the rule above over any values (NaN: fewer than min_pairs).
double robust_threshold(std::vector<double> values, const OutlierOptions& opts = {});
// The same over every measured direction of the pairs (each direction a value of its own), for
// locating (localize.hpp): a fault on one of several spines slows one direction of many pairs,
// and taking each pair's slower direction would make most pairs look slow.
double direction_threshold(const std::vector<PairResult>& pairs, const OutlierOptions& opts = {});

}  // namespace fabscope::cluster
