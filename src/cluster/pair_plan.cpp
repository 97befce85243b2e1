#include "cluster/pair_plan.hpp"

#include <algorithm>

#include "cluster/message.hpp"
#include "core/error.hpp"
#include "core/socket.hpp"

namespace fabscope::cluster {

json make_plan(const std::vector<Offer>& offers, EngineMode mode, const RunOptions& opts) {
  std::vector<int> joined;
  json offered = json::array();
  for (std::size_t r = 0; r < offers.size(); ++r) {
    const auto& o = offers[r].endpoints;
    const bool explicit_engine = mode == EngineMode::Rdma || mode == EngineMode::Nccl;
    if (!offers[r].present || (o.tcp_address.empty() && o.rdma_address.empty() && !explicit_engine)) continue;
    joined.push_back(static_cast<int>(r));
    offered.push_back({o.name, o.tcp_address, o.rdma_address, o.rdma_note, o.nccl_device, o.nccl_note});
  }
  PairsSpec spec = opts.pairs;
  // More random rounds than the tournament has: every round.
  if (spec.mode == PairsMode::Random && spec.rounds > tournament_rounds(static_cast<int>(joined.size())))
    spec = {PairsMode::All, 0};
  // The pair secret: a stranger on the network cannot take a pair's place (pair_engine.hpp).
  return {{"joined", joined}, {"offers", offered}, {"mode", pairs_name(spec)}, {"seed", opts.seed},
          {"pair_secret", net::random_secret()}};
}

RoundPlan read_plan(const std::string& text) {
  const json plan = json::parse(text, nullptr, false);
  try {
    if (plan.is_discarded()) throw Error("not JSON");
    PairPlan p = parse_plan(plan);
    RoundPlan out;
    out.joined = std::move(p.joined);
    for (auto& v : p.offers) out.offers.push_back({v[0], v[1], v[2], v[3], v[4], v[5]});
    out.spec = parse_pairs(p.mode);
    out.seed = p.seed;
    out.pair_secret = p.pair_secret;
    return out;
  } catch (const std::exception& e) {
    throw Error(std::string("cluster: rank 0 sent a malformed pair plan: ") + e.what());
  }
}

EngineChoice pair_choice(const RoundPlan& plan, EngineMode mode, int i, int j) {
  const int lo = std::min(i, j), hi = std::max(i, j);
  return choose_pair_engine(mode, plan.offers[static_cast<std::size_t>(lo)], plan.offers[static_cast<std::size_t>(hi)]);
}

}  // namespace fabscope::cluster
