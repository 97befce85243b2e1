#pragma once
// One round of run_cluster's pairs (run.hpp): every rank runs its pair of the round, if it has
// one, and reports it; rank 0 makes each pair's result from the reports of its two ends.
// A report is a JSON object: {} without a pair, else {peer, rx_gbps, tx_gbps, wall_s, error}.
// Internal to the cluster library.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "cluster/pair_plan.hpp"
#include "cluster/run.hpp"
#include "core/json.hpp"

namespace fabscope::cluster {

// This rank's report: me and peer are schedule indexes (peer -1: no pair this round). The lower
// index initiates. token: the pair's rendezvous from the exchange (nccl: the initiator's
// ncclUniqueId in hex), used as the peer's address by engines that have one.
json run_my_pair(const RoundPlan& plan, int me, int peer, const PairEngines& engines,
                 std::chrono::milliseconds duration, const std::string& token = "");

// What this rank sends before its pair of the round runs: its engine's pair_token when the pair
// runs on an engine that has one and this end makes it (nccl, the initiator); "" otherwise.
std::string my_pair_token(const RoundPlan& plan, int me, int peer, const PairEngines& engines);

// Rank 0 (pure): the result of the pair of schedule indexes ia, ib from every rank's report
// (nullopt: the rank was lost). A lost or mismatched report, or an error either end reports,
// makes the pair's error and leaves it without rates.
PairResult pair_result(const RoundPlan& plan, EngineMode mode, int ia, int ib,
                       const std::vector<std::optional<std::string>>& reports, const RunOptions& opts);

}  // namespace fabscope::cluster
