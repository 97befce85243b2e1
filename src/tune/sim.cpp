#include "tune/sim.hpp"

#include <algorithm>
#include <cmath>

namespace fabscope::tune {

Choice SimMeasurer::nccl_pick(bench::Collective c, std::uint64_t bytes) const {
  // The right algorithm and protocol, but always default_channels channels: the fixed part of
  // NCCL's model that a search can improve on (more channels for large messages).
  Choice best{static_cast<int>(Algo::Ring), static_cast<int>(Proto::Simple), model_.default_channels};
  const bool tree_ok = c == bench::Collective::AllReduce;
  for (int a : {static_cast<int>(Algo::Ring), static_cast<int>(Algo::Tree)}) {
    if (a == static_cast<int>(Algo::Tree) && !tree_ok) continue;
    for (int p = 0; p < 3; ++p) {
      Choice ch{a, p, model_.default_channels};
      if (true_time_us(c, bytes, ch) < true_time_us(c, bytes, best)) best = ch;
    }
  }
  return best;
}

double SimMeasurer::true_time_us(bench::Collective c, std::uint64_t bytes, const Choice& choice) const {
  Choice ch = choice;
  if (ch.algo < 0) {
    const Choice pick = nccl_pick(c, bytes);  // explicit choices only: no recursion
    ch.algo = pick.algo;
    ch.proto = pick.proto;
  }
  if (ch.channels < 0) ch.channels = model_.default_channels;
  const int n = model_.nranks;
  // Protocol: per-hop latency (us) and the share of the bandwidth it delivers.
  static const double hop_us[3] = {0.6, 1.1, 2.5};
  static const double efficiency[3] = {0.45, 0.92, 1.0};
  const double eff = efficiency[ch.proto];
  double hops = 0, bw_share = 1;
  if (ch.algo == static_cast<int>(Algo::Tree)) {
    hops = 2 * std::ceil(std::log2(std::max(2, n)));
    bw_share = 0.85;
  } else {
    hops = 2.0 * (n - 1);
    bw_share = 1.0;
  }
  const double bw = std::min(model_.link_gbytes_per_s, model_.per_channel_gbytes_per_s * ch.channels) *
                    eff * bw_share;  // GB/s of bus bandwidth
  // bw is a bus bandwidth: the bytes the busiest link carries are the size scaled by the busbw
  // rule (busbw is linear in algbw), so the time is those bytes over bw.
  const double bus_bytes = bench::busbw_gbytes_per_s(c, static_cast<double>(bytes), n);
  const double launch_us = 4 + 0.01 * ch.channels;  // each channel is one more block to start
  return (launch_us + hops * hop_us[ch.proto] + bus_bytes / (bw * 1e3)) *
         sim_env_factor(model_.env, bytes) * sim_load_factor(model_.compute_load_pct, ch.channels);
}

double sim_env_factor(const EnvAssignment& env, std::uint64_t bytes) {
  double f = 1;
  const bool large = bytes >= (16u << 20);
  const bool mid = bytes >= (256u << 10) && !large;
  for (const auto& [k, v] : env.vars) {
    if (k == "NCCL_BUFFSIZE") {
      if (v == std::to_string(1 << 20)) f *= large ? 1.15 : 1.0;
      else if (v == std::to_string(2 << 20)) f *= large ? 1.07 : 1.0;
      else if (v == std::to_string(8 << 20)) f *= large ? 0.88 : 1.0;
      else if (v == std::to_string(16 << 20)) f *= large ? 0.90 : mid ? 1.04 : 1.0;
    } else if (k == "NCCL_NTHREADS") {
      if (v == "256") f *= large ? 1.03 : 1.0;
      else if (v == "128") f *= large ? 1.10 : 1.0;
    }
  }
  return f;
}

double sim_load_factor(double compute_load_pct, int channels) {
  // Each channel is a block that now shares its SM with the load: the more channels, the more
  // of them wait behind compute.
  return 1 + compute_load_pct / 100 * 0.004 * channels;
}

Measurement SimMeasurer::measure(bench::Collective c, std::uint64_t bytes, const Choice& choice,
                                 double budget_s) {
  ++calls_;
  timed_s_ += budget_s;
  Measurement m;
  if (choice.algo >= 0 && std::find(model_.unavailable_algos.begin(), model_.unavailable_algos.end(),
                                    choice.algo) != model_.unavailable_algos.end()) {
    m.applied = false;
    m.time_us = true_time_us(c, bytes, kNcclDefault);
    return m;
  }
  const double t = true_time_us(c, bytes, choice);
  const double sigma = model_.noise_rel / std::sqrt(std::max(budget_s, 1e-5) / 1e-3);
  std::normal_distribution<double> noise(0.0, sigma);
  m.time_us = t * std::max(0.5, 1 + noise(rng_));
  m.rel_ci = 1.96 * sigma;
  m.iterations = std::max<std::int64_t>(1, static_cast<std::int64_t>(budget_s * 1e6 / t));
  return m;
}

}  // namespace fabscope::tune
