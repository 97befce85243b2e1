#pragma once
// A simulated machine for the search: a latency + bandwidth cost model per algorithm, protocol
// and channel count, with multiplicative Gaussian noise that shrinks with the measuring budget,
// from a fixed seed. Its "NCCL default" is deliberately not always the fastest choice (too few
// channels for large messages, LL128 switched on too late), as NCCL's cost model is on real
// machines, so the search has something to find and something to leave alone.
// Used by the unit tests and by `fabscope tune --simulate SEED` (a dry run of the whole command
// without GPUs: outputs are labelled as simulated).
#include <cstdint>
#include <random>
#include <vector>

#include "tune/env_space.hpp"
#include "tune/measure.hpp"

namespace fabscope::tune {

struct SimModel {
  int nranks = 8;
  int nnodes = 1;
  double link_gbytes_per_s = 360;     // peak bus bandwidth of the path
  double per_channel_gbytes_per_s = 21;
  int default_channels = 16;          // what "NCCL" uses when the choice leaves channels open
  double noise_rel = 0.03;            // relative noise of a 1 ms measurement
  std::vector<int> unavailable_algos; // algorithms NCCL "cannot run" here (applied = false)
  EnvAssignment env;                  // the environment-only settings the process started with
  double compute_load_pct = 0;        // share of the SMs a concurrent kernel keeps busy
};

// The simulated effect of the environment-only settings on one call (a time factor): a larger
// NCCL_BUFFSIZE helps large messages (8 MiB: 12% faster from 16 MiB on) but 16 MiB also slows the
// mid sizes by 4% (a setting the 2% rule must refuse); smaller buffers and fewer NCCL_NTHREADS
// slow large messages; the network settings do nothing on the model's single node.
double sim_env_factor(const EnvAssignment& env, std::uint64_t bytes);
// The simulated effect of a compute load: fewer free SMs make many channels worth less.
double sim_load_factor(double compute_load_pct, int channels);

class SimMeasurer : public Measurer {
 public:
  SimMeasurer(SimModel model, std::uint64_t seed) : model_(model), rng_(seed) {}
  Measurement measure(bench::Collective c, std::uint64_t bytes, const Choice& choice,
                      double budget_s) override;
  int nranks() const override { return model_.nranks; }
  int nnodes() const override { return model_.nnodes; }
  void set_compute_load(double pct) override { model_.compute_load_pct = pct; }
  // The noise-free time of what NCCL would run for this choice.
  double true_time_us(bench::Collective c, std::uint64_t bytes, const Choice& choice) const;
  // What the simulated NCCL runs when left alone.
  Choice nccl_pick(bench::Collective c, std::uint64_t bytes) const;
  std::int64_t calls() const { return calls_; }
  double timed_s() const { return timed_s_; }

 private:
  SimModel model_;
  std::mt19937_64 rng_;
  std::int64_t calls_ = 0;
  double timed_s_ = 0;
};

}  // namespace fabscope::tune
