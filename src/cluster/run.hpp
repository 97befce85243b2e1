#pragma once
// One `fabscope cluster` run on every rank: gather the node summaries on rank 0, then the pair
// rounds (rank 0 broadcasts each round; every rank runs its pair; rank 0 gathers the rates, which
// also keeps the rounds apart), then rank 0 judges. Non-zero ranks return nullopt.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cluster/exchange.hpp"
#include "cluster/pair_engine.hpp"
#include "cluster/result.hpp"

namespace fabscope::cluster {

struct RunOptions {
  PairsSpec pairs;
  std::uint64_t seed = 1;
  std::chrono::milliseconds pair_duration{2000};
  std::vector<std::string> node_names;  // by rank, for nodes that never join ("" unknown)
};

// engine may be null when pairs.mode is None.
std::optional<ClusterInput> run_cluster(Exchange& ex, NodeSummary mine, PairEngine* engine, const RunOptions& opts);

}  // namespace fabscope::cluster
