#include "rdma/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/table.hpp"
#include "rdma/findings.hpp"

namespace fabscope::rdma {

LatencyStats latency_stats(std::vector<double> s) {
  LatencyStats st;
  if (s.empty()) return st;
  std::sort(s.begin(), s.end());
  auto rank = [&](double p) {
    // nearest rank: the smallest sample with at least p of the samples at or below it
    auto k = static_cast<std::size_t>(std::ceil(p * static_cast<double>(s.size())));
    return s[std::min(s.size() - 1, k == 0 ? 0 : k - 1)];
  };
  st.min_us = s.front();
  st.max_us = s.back();
  st.median_us = rank(0.5);
  st.p99_us = rank(0.99);
  st.mean_us = std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(s.size());
  return st;
}

void fill_rates(SizeResult& r) {
  if (r.seconds <= 0) {
    r.gbps = r.mib_per_s = r.msg_rate_mpps = 0;
    return;
  }
  r.gbps = static_cast<double>(r.total_bytes) * 8.0 / r.seconds / 1e9;
  r.mib_per_s = static_cast<double>(r.total_bytes) / r.seconds / 1048576.0;
  r.msg_rate_mpps = static_cast<double>(r.iterations) / r.seconds / 1e6;
}

std::optional<double> efficiency(const Result& r) {
  if (r.options.test != Test::Bw || r.sizes.empty()) return std::nullopt;
  auto rate = r.local.rate_gbps;
  if (r.remote.rate_gbps && (!rate || *r.remote.rate_gbps < *rate)) rate = r.remote.rate_gbps;
  if (!rate || *rate <= 0) return std::nullopt;
  double best = 0;
  for (const auto& s : r.sizes) best = std::max(best, s.gbps);
  return best / (*rate * (r.options.bidirectional ? 2.0 : 1.0));
}

void judge(Result& r) {
  r.efficiency = efficiency(r);
  if (r.local.active_mtu && r.remote.active_mtu && *r.local.active_mtu != *r.remote.active_mtu)
    r.findings.push_back(mtu_mismatch(r.local, r.remote));
  if (!r.completed) {
    r.verdict = "FAIL: the test did not complete (see the findings)";
    return;
  }
  if (r.options.test == Test::Lat) {
    if (r.sizes.empty() || !r.sizes.front().latency) {
      r.verdict = "no latency measured";
      return;
    }
    const auto& s = r.sizes.front();
    r.verdict = "OK: " + std::string(to_string(r.options.op)) + " latency " +
                core::format_double(s.latency->median_us, 2) + " us median, " +
                core::format_double(s.latency->p99_us, 2) + " us p99 at " + std::to_string(s.bytes) + " B";
    return;
  }
  double best = 0;
  for (const auto& s : r.sizes) best = std::max(best, s.gbps);
  std::string bw = core::format_double(best, 2) + " Gb/s";
  if (!r.efficiency) {
    r.verdict = "OK: " + bw + " (the port's rate is unknown: efficiency not judged)";
    return;
  }
  std::string pct = core::format_double(*r.efficiency * 100, 0) + "%";
  bool software = r.local.software || r.remote.software;
  if (software) {
    r.verdict = "OK: " + bw + ", " + pct + " of the nominal rate of a software device (not judged)";
    return;
  }
  // A healthy RC WRITE stream reaches 90-97% of the link rate at 64 KiB and above; below 80%
  // something costs bandwidth (PCIe, NUMA, congestion, a degraded link).
  if (*r.efficiency >= 0.8) {
    r.verdict = "OK: " + bw + ", " + pct + " of the port's rate";
  } else {
    r.verdict = "WARN: " + bw + " is " + pct + " of the port's rate";
    r.findings.push_back(low_bandwidth(r, best));
  }
}

}  // namespace fabscope::rdma
