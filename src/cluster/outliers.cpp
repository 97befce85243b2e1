#include <cstdio>
#include "cluster/outliers.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "cluster/consistency.hpp"
#include "cluster/registry.hpp"
#include "core/strings.hpp"
#include "core/table.hpp"

namespace fabscope::cluster {

std::optional<double> PairResult::value_gbps() const {
  if (a_to_b_gbps && b_to_a_gbps) return std::min(*a_to_b_gbps, *b_to_a_gbps);
  if (a_to_b_gbps) return a_to_b_gbps;
  return b_to_a_gbps;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  double m = v[mid];
  if (v.size() % 2 == 0) m = (m + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid))) / 2;
  return m;
}

double robust_threshold(std::vector<double> values, const OutlierOptions& opts) {
  if (values.size() < opts.min_pairs) return std::numeric_limits<double>::quiet_NaN();
  const double median = median_of(values);
  for (auto& v : values) v = std::fabs(v - median);
  const double mad = median_of(std::move(values));
  return median - std::min(std::max(opts.mad_k * 1.4826 * mad, opts.min_drop * median), opts.max_drop * median);
}

double direction_threshold(const std::vector<PairResult>& pairs, const OutlierOptions& opts) {
  std::vector<double> values;
  for (const auto& p : pairs)
    for (const auto& v : {p.a_to_b_gbps, p.b_to_a_gbps})
      if (v && std::isfinite(*v)) values.push_back(*v);
  return robust_threshold(std::move(values), opts);
}

Outliers detect_outliers(int n, const std::vector<PairResult>& pairs, const OutlierOptions& opts) {
  Outliers o;
  const std::size_t nodes = n > 0 ? static_cast<std::size_t>(n) : 0;
  std::vector<double> values;
  values.reserve(pairs.size());
  for (const auto& p : pairs) {
    if (p.a < 0 || p.b < 0 || static_cast<std::size_t>(p.a) >= nodes || static_cast<std::size_t>(p.b) >= nodes) continue;
    if (auto v = p.value_gbps(); v && std::isfinite(*v)) values.push_back(*v);
  }
  o.measured = values.size();
  if (values.size() < opts.min_pairs) return o;
  o.judged = true;
  o.median_gbps = median_of(values);
  for (auto& v : values) v = std::fabs(v - o.median_gbps);
  o.mad_gbps = median_of(std::move(values));
  o.threshold_gbps =
      o.median_gbps - std::min(std::max(opts.mad_k * 1.4826 * o.mad_gbps, opts.min_drop * o.median_gbps),
                               opts.max_drop * o.median_gbps);  // robust_threshold's rule

  // Per node: its pair values and which are slow.
  std::vector<std::vector<double>> own(nodes);
  std::vector<std::size_t> slow(nodes, 0);
  for (const auto& p : pairs) {
    if (p.a < 0 || p.b < 0 || static_cast<std::size_t>(p.a) >= nodes || static_cast<std::size_t>(p.b) >= nodes) continue;
    auto v = p.value_gbps();
    if (!v || !std::isfinite(*v)) continue;
    for (int r : {p.a, p.b}) {
      own[static_cast<std::size_t>(r)].push_back(*v);
      if (*v < o.threshold_gbps) ++slow[static_cast<std::size_t>(r)];
    }
  }
  std::vector<bool> is_slow(nodes, false);
  for (std::size_t r = 0; r < nodes; ++r) {
    const std::size_t k = own[r].size();
    if (k >= 2 && static_cast<double>(slow[r]) >= opts.node_fraction * static_cast<double>(k)) {
      is_slow[r] = true;
      o.slow_nodes.push_back({static_cast<int>(r), k, slow[r], median_of(own[r])});
    }
  }
  for (const auto& p : pairs) {
    if (p.a < 0 || p.b < 0 || static_cast<std::size_t>(p.a) >= nodes || static_cast<std::size_t>(p.b) >= nodes) continue;
    auto v = p.value_gbps();
    if (!v || !std::isfinite(*v) || *v >= o.threshold_gbps) continue;
    if (is_slow[static_cast<std::size_t>(p.a)] || is_slow[static_cast<std::size_t>(p.b)]) continue;
    // The other pairs of each end, without this one.
    auto others = [&](int r) {
      std::vector<double> rest = own[static_cast<std::size_t>(r)];
      auto it = std::find(rest.begin(), rest.end(), *v);
      if (it != rest.end()) rest.erase(it);
      return median_of(std::move(rest));
    };
    o.slow_links.push_back({std::min(p.a, p.b), std::max(p.a, p.b), *v, others(p.a), others(p.b)});
  }
  std::sort(o.slow_links.begin(), o.slow_links.end(),
            [](const SlowLink& x, const SlowLink& y) { return std::pair(x.a, x.b) < std::pair(y.a, y.b); });
  return o;
}

std::string format_gbps(double v) {
  if (!std::isfinite(v)) return "-";
  if (v == 0 || std::fabs(v) >= 1) return core::format_double(v, 1);
  return core::format_double("%.3g", v);
}

namespace {

// One decimal from 1 Gb/s up; below that three significant digits, so a node shaped to a few
// Mbit/s reads 0.00185 Gb/s, not 0.0.
std::string gbps(double v) { return std::isfinite(v) ? format_gbps(v) + " Gb/s" : "none"; }

std::string name_of(const std::vector<std::string>& names, int r) {
  if (r >= 0 && static_cast<std::size_t>(r) < names.size()) return names[static_cast<std::size_t>(r)];
  return "rank" + std::to_string(r);
}

}  // namespace

std::vector<Finding> outlier_findings(const Outliers& o, const std::vector<PairResult>& pairs,
                                      const std::vector<std::string>& names) {
  std::vector<Finding> out;
  const std::string stats = "pair median " + gbps(o.median_gbps) + ", MAD " + gbps(o.mad_gbps) + ", slow below " +
                            gbps(o.threshold_gbps) + " (" + std::to_string(o.measured) + " pairs)";
  for (const auto& s : o.slow_nodes) {
    const std::string n = name_of(names, s.rank);
    out.push_back(registered_finding(
        "cluster.slow_node", Severity::Fail, n,
        std::to_string(s.slow_pairs) + " of " + std::to_string(s.pairs) + " pairs of " + n +
            " are slow, whoever the peer: the node itself is slow",
        n + ": median of its pairs " + gbps(s.median_gbps) + "; " + stats,
        "on " + n + ": check the HCA port rate and errors (fabscope check), its PCIe link (lspci -vv: "
        "LnkSta), a traffic shaper (tc qdisc show), the cable and switch port; drain it until fixed"));
  }
  for (const auto& l : o.slow_links) {
    const std::string a = name_of(names, l.a), b = name_of(names, l.b);
    std::string dirs;
    for (const auto& p : pairs)
      if (std::min(p.a, p.b) == l.a && std::max(p.a, p.b) == l.b) {
        const bool swapped = p.a != l.a;
        auto ab = swapped ? p.b_to_a_gbps : p.a_to_b_gbps;
        auto ba = swapped ? p.a_to_b_gbps : p.b_to_a_gbps;
        dirs = a + "->" + b + " " + (ab ? gbps(*ab) : "n/a") + ", " + b + "->" + a + " " + (ba ? gbps(*ba) : "n/a");
        break;
      }
    out.push_back(registered_finding(
        "cluster.slow_link", Severity::Warn, a + "<->" + b,
        "the pair " + a + " and " + b + " is slow while both are fine with their other peers",
        dirs + "; other pairs median " + a + " " + gbps(l.a_median_gbps) + ", " + b + " " + gbps(l.b_median_gbps) +
            "; " + stats,
        "the path between " + a + " and " + b + ": the switch ports and cables on it (counters on the "
        "switch, ibnetdiscover/ibtracert or the leaf-spine route), ECMP hashing, PFC/ECN on RoCE"));
  }
  for (const auto& p : pairs) {
    if (p.error.empty()) continue;
    const std::string a = name_of(names, p.a), b = name_of(names, p.b);
    out.push_back(registered_finding("cluster.pair_failed", Severity::Fail, a + "<->" + b,
                                     "the bandwidth test between " + a + " and " + b + " did not complete", p.error,
                                     "run fabscope rdma between " + a + " and " + b +
                                         " by hand; check that both reach each other's address"));
  }
  return out;
}

}  // namespace fabscope::cluster
