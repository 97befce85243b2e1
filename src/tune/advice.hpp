#pragma once
// Bucket-size advice from a measured bus-bandwidth curve. PyTorch DDP all-reduces gradients in
// buckets of bucket_cap_mb MiB (default 25); a bucket below the size where all-reduce reaches
// most of its peak pays latency on every bucket, a much larger one delays the overlap of
// communication with the backward pass. The advice is the smallest measured size reaching 90% of
// the peak bus bandwidth. The same rule on all-gather / reduce-scatter curves tells which FSDP
// unit sizes are latency-bound.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/collectives.hpp"

namespace fabscope::tune {

struct CurvePoint {
  std::uint64_t bytes = 0;
  double busbw_gbytes_per_s = 0;
};

struct BucketAdvice {
  bench::Collective collective = bench::Collective::AllReduce;
  std::uint64_t knee_bytes = 0;     // smallest measured size with busbw >= 90% of the peak
  double knee_busbw = 0;
  double peak_busbw = 0;
  std::uint64_t peak_bytes = 0;
  bool still_rising = false;        // the knee is the largest size measured
  int bucket_cap_mb = 0;            // DDP (all-reduce only): knee rounded up to whole MiB, >= 1
  std::string advice;               // one or two sentences with the numbers
};

// nullopt when the curve is empty or flat at zero (one rank).
std::optional<BucketAdvice> bucket_advice(bench::Collective c, const std::vector<CurvePoint>& curve,
                                          double fraction = 0.9);

}  // namespace fabscope::tune
