#include "tune/advice.hpp"

#include <algorithm>
#include <cstdio>

#include "bench/sizes.hpp"

namespace fabscope::tune {

std::optional<BucketAdvice> bucket_advice(bench::Collective c, const std::vector<CurvePoint>& curve_in,
                                          double fraction) {
  std::vector<CurvePoint> curve = curve_in;
  std::sort(curve.begin(), curve.end(), [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
  BucketAdvice a;
  a.collective = c;
  for (const auto& p : curve)
    if (p.busbw_gbytes_per_s > a.peak_busbw) {
      a.peak_busbw = p.busbw_gbytes_per_s;
      a.peak_bytes = p.bytes;
    }
  if (curve.empty() || a.peak_busbw <= 0) return std::nullopt;
  for (const auto& p : curve)
    if (p.busbw_gbytes_per_s >= fraction * a.peak_busbw) {
      a.knee_bytes = p.bytes;
      a.knee_busbw = p.busbw_gbytes_per_s;
      break;
    }
  a.still_rising = a.knee_bytes == curve.back().bytes;
  const std::uint64_t mib = 1u << 20;
  a.bucket_cap_mb = static_cast<int>(std::max<std::uint64_t>(1, (a.knee_bytes + mib - 1) / mib));
  char buf[400];
  const int pct = static_cast<int>(fraction * 100 + 0.5);
  if (c == bench::Collective::AllReduce) {
    std::snprintf(buf, sizeof buf,
                  "DDP bucket_cap_mb=%d: all-reduce reaches %.0f GB/s, %d%% of its peak %.0f GB/s "
                  "(at %s), from %s; smaller buckets are latency-bound (PyTorch's default is 25)",
                  a.bucket_cap_mb, a.knee_busbw, pct, a.peak_busbw, bench::size_label(a.peak_bytes).c_str(),
                  bench::size_label(a.knee_bytes).c_str());
  } else {
    std::snprintf(buf, sizeof buf,
                  "FSDP: %s reaches %.0f GB/s, %d%% of its peak %.0f GB/s (at %s), from %s; units "
                  "whose %s is smaller are latency-bound",
                  std::string(bench::describe(c).name).c_str(), a.knee_busbw, pct, a.peak_busbw,
                  bench::size_label(a.peak_bytes).c_str(), bench::size_label(a.knee_bytes).c_str(),
                  std::string(bench::describe(c).name).c_str());
  }
  a.advice = buf;
  if (a.still_rising)
    a.advice += "; the curve still rises at the largest size measured: measure larger sizes (-e)";
  return a;
}

}  // namespace fabscope::tune
