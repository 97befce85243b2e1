#pragma once
// Pure arithmetic over measurements: latency percentiles, rates, efficiency and the verdict.
#include <vector>

#include "rdma/types.hpp"

namespace fabscope::rdma {

// min / median / p99 / max / mean of samples (µs); nearest-rank percentiles, as perftest's
// "t_99.00" column. Empty samples give all zeros.
LatencyStats latency_stats(std::vector<double> samples_us);

// Fills gbps, mib_per_s and msg_rate_mpps from total_bytes, iterations and seconds.
void fill_rates(SizeResult& r);

// Best Gb/s over the sizes of a bw test divided by the port's rate (bidirectional: by twice
// the rate); nullopt for latency tests or an unknown rate.
std::optional<double> efficiency(const Result& r);

// The verdict sentence and the findings it implies (rdma.low_bandwidth, rdma.mtu_mismatch);
// called once the sizes are in. Software devices (rxe, siw) are not judged on efficiency.
void judge(Result& r);

}  // namespace fabscope::rdma
