#pragma once
// `fabscope tune` after flag parsing, over any Measurer: for each collective and size, successive
// halving over the candidates, then the verification pass against NCCL's default. Pure over the
// Measurer (tests run it on the simulated model).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/collectives.hpp"
#include "tune/env_search.hpp"
#include "tune/halving.hpp"
#include "tune/space.hpp"
#include "tune/verify.hpp"

namespace fabscope::tune {

struct TuneOptions {
  std::vector<bench::Collective> collectives{bench::Collective::AllReduce};
  std::vector<std::uint64_t> sizes;  // ascending
  SpaceSpec space;
  HalvingRule halving;
  VerifyRule verify;
  // > 0: search and verify under this compute load (the table is written for it), then verify
  // each written choice idle too, so the report shows both.
  double compute_load_pct = 0;
};

struct SizeOutcome {
  std::uint64_t bytes = 0;
  HalvingResult search;
  Verdict verdict;        // best vs NCCL's default (not run when the search kept the default)
  Choice written;         // what the table says for this size: best when verified, else default
  double default_busbw = 0;  // GB/s, from the verification means (or the search when not run)
  double written_busbw = 0;
  std::optional<Verdict> idle;  // with a compute load: the written choice against the default, idle
};

struct CollectiveOutcome {
  bench::Collective collective = bench::Collective::AllReduce;
  std::vector<Choice> candidates;
  std::vector<SizeOutcome> sizes;
};

struct TuneResult {
  // env_search and compute_load were added to version 1 (additive: readers of the first layout
  // still read it; src/core/json.hpp bumps the version on incompatible change only).
  static constexpr int kSchemaVersion = 1;
  int nranks = 0;
  int nnodes = 0;
  bool simulated = false;
  std::string source;  // "simulated model, seed 7" | "NCCL 2.28.3, 8 ranks on 1 node (local)"
  std::vector<CollectiveOutcome> collectives;
  std::int64_t measurements = 0;
  std::optional<EnvSearchResult> env;   // the environment-only settings, when searched
  double compute_load_pct = 0;          // > 0: measured under that compute load
  double compute_load_busy_share = -1;  // measured share of the time the load ran; < 0 unknown
};

using Progress = std::function<void(bench::Collective, const SizeOutcome&)>;

TuneResult run_tune(Measurer& m, const TuneOptions& o, const Progress& progress = {});

}  // namespace fabscope::tune
