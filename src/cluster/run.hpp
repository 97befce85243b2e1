#pragma once
// One `fabscope cluster` run on every rank: gather the node summaries on rank 0, then the pair
// rounds (rank 0 broadcasts the plan once, pair_plan.hpp; every rank runs its pair of each round
// with the engine both ends offer; rank 0 gathers the rates, which also keeps the rounds apart,
// pair_round.hpp), then rank 0 judges. Non-zero ranks return nullopt. Under --engine nccl each
// round starts with one more gather and broadcast: every initiator's ncclUniqueId (pair_token)
// reaches its responder through the exchange, never over a connection of its own.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cluster/engine_choice.hpp"
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

// The engines this node offers (either may be null) and how a pair picks one.
struct PairEngines {
  EngineMode mode = EngineMode::Auto;
  PairEngine* tcp = nullptr;
  PairEngine* rdma = nullptr;
  std::string rdma_note;  // make_rdma_engine's note: the device, or why there is no rdma engine
  PairEngine* nccl = nullptr;  // --engine nccl only
  std::string nccl_device;     // make_nccl_engine's device, or ""
  std::string nccl_note;       // why there is no nccl engine
};

std::optional<ClusterInput> run_cluster(Exchange& ex, NodeSummary mine, const PairEngines& engines,
                                        const RunOptions& opts);

// A rank as reports name it: its --nodes name, else "rankN".
std::string rank_name(const RunOptions& o, int rank);

}  // namespace fabscope::cluster
