#pragma once
// The pair plan of run_cluster (run.hpp): rank 0 writes it from what every node that joined
// offers and broadcasts it once; every rank reads it back and computes the same rounds and
// engine choices from it (schedule.hpp, engine_choice.hpp), so no pair list is ever sent.
// The wire form is message.hpp's PairPlan. Internal to the cluster library.
#include <cstdint>
#include <string>
#include <vector>

#include "cluster/engine_choice.hpp"
#include "cluster/run.hpp"
#include "cluster/schedule.hpp"
#include "core/json.hpp"

namespace fabscope::cluster {

// One gathered rank: whether its summary came without an error, and what it offers.
struct Offer {
  bool present = false;
  PairEndpoints endpoints;
};

// Rank 0: the ranks that joined and offer an engine (under --engine rdma or nccl, every one that
// joined: a node without RDMA or NCCL is reported, not left out), what each offers, the pairs mode
// (more random rounds than the tournament has: every round), the seed and a fresh pair secret.
json make_plan(const std::vector<Offer>& offers, EngineMode mode, const RunOptions& opts);

// The plan as every rank uses it; schedule indexes are positions in joined.
struct RoundPlan {
  std::vector<int> joined;            // the rank at each schedule index
  std::vector<PairEndpoints> offers;  // by schedule index
  PairsSpec spec;
  std::uint64_t seed = 0;
  std::string pair_secret;
};

// Every rank: the broadcast text read back. Throws Error ("rank 0 sent a malformed pair plan").
RoundPlan read_plan(const std::string& text);

// The engine of the pair of schedule indexes i and j, the same whichever end asks.
EngineChoice pair_choice(const RoundPlan& plan, EngineMode mode, int i, int j);

}  // namespace fabscope::cluster
