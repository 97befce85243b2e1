#include "cluster/run.hpp"

#include <algorithm>

#include "cluster/pair_plan.hpp"
#include "cluster/pair_round.hpp"
#include "core/error.hpp"

namespace fabscope::cluster {

namespace {

// Rank 0's reading of one rank's summary: a malformed one becomes a summary carrying the error.
NodeSummary read_summary(const std::string& blob, int rank, const RunOptions& opts) {
  NodeSummary s;
  try {
    json j = json::parse(blob, nullptr, false);
    if (j.is_discarded()) throw Error("not JSON");
    s = summary_from_json(j);
    if (s.rank != rank) throw Error("claims rank " + std::to_string(s.rank));
  } catch (const std::exception& e) {
    s = NodeSummary{};
    s.rank = rank;
    s.name = rank_name(opts, rank);
    s.error = "rank " + std::to_string(rank) + " sent a malformed summary: " + e.what();
  }
  return s;
}

// This node's summary, with the engines it offers, gathered on rank 0 into in.nodes (and
// in.missing for the ranks that sent none). Rank 0 gets what every rank offers, by rank; the
// other ranks an empty list.
std::vector<Offer> gather_summaries(Exchange& ex, NodeSummary mine, const PairEngines& engines,
                                    const RunOptions& opts, ClusterInput& in) {
  mine.rank = ex.rank();
  if (engines.tcp) mine.pair_address = engines.tcp->address();
  if (engines.rdma) mine.rdma_address = engines.rdma->address();
  mine.rdma_note = engines.rdma_note;
  mine.nccl_device = engines.nccl ? engines.nccl_device : "";
  mine.nccl_note = engines.nccl_note;
  const auto gathered = ex.gather(json(mine).dump());
  std::vector<Offer> offers(static_cast<std::size_t>(ex.world()));
  if (ex.rank() != 0) return offers;
  for (std::size_t r = 0; r < gathered.size(); ++r) {
    const int rank = static_cast<int>(r);
    if (!gathered[r]) {
      in.missing.push_back({rank_name(opts, rank), ex.why_missing(rank)});
      continue;
    }
    NodeSummary s = read_summary(*gathered[r], rank, opts);
    offers[r] = {s.error.empty(),
                 {s.name.empty() ? rank_name(opts, rank) : s.name, s.pair_address, s.rdma_address, s.rdma_note,
                  s.nccl_device, s.nccl_note}};
    in.nodes.push_back(std::move(s));
  }
  return offers;
}

// --engine nccl: the round's pair tokens (every initiator's ncclUniqueId) gathered on rank 0 and
// broadcast by rank; returns what this rank's pair runs with: the initiator its own token, the
// responder its peer's ("" when there is none: run_my_pair reports the pair then).
std::string exchange_pair_tokens(Exchange& ex, const RoundPlan& p, int me, int peer, const PairEngines& engines) {
  const std::string mine = my_pair_token(p, me, peer, engines);
  const auto gathered = ex.gather(mine);
  json by_rank = json::array();
  for (const auto& t : gathered) by_rank.push_back(t ? *t : "");
  const json got = json::parse(ex.broadcast(by_rank.dump()), nullptr, false);
  if (me < 0 || peer < 0) return "";
  if (me < peer) return mine;
  const auto r = static_cast<std::size_t>(p.joined[static_cast<std::size_t>(peer)]);
  if (!got.is_array() || r >= got.size() || !got[r].is_string()) return "";
  return got[r].get<std::string>();
}

// The pair rounds: rank 0's plan, then each round's pairs, their reports gathered on rank 0
// into in.pair_results.
void run_rounds(Exchange& ex, const std::vector<Offer>& offers, const PairEngines& engines, const RunOptions& opts,
                ClusterInput& in) {
  const json plan = ex.rank() == 0 ? make_plan(offers, engines.mode, opts) : json();
  const RoundPlan p = read_plan(ex.broadcast(plan.dump()));
  if (engines.tcp) engines.tcp->set_secret(p.pair_secret);
  if (engines.rdma) engines.rdma->set_secret(p.pair_secret);
  if (engines.nccl) engines.nccl->set_secret(p.pair_secret);
  const int n = static_cast<int>(p.joined.size());
  const Schedule schedule = n >= 2 ? Schedule(n, p.spec, p.seed) : Schedule(0, {PairsMode::None, 0}, 0);
  const auto me_it = std::find(p.joined.begin(), p.joined.end(), ex.rank());
  const int me = me_it == p.joined.end() ? -1 : static_cast<int>(me_it - p.joined.begin());
  in.pairs = opts.pairs;
  in.rounds = schedule.size();
  in.pair_seconds = std::chrono::duration<double>(opts.pair_duration).count();
  for (std::size_t k = 0; k < schedule.size(); ++k) {
    const int peer = me >= 0 ? schedule.peer(k, me) : -1;
    const std::string token = engines.mode == EngineMode::Nccl ? exchange_pair_tokens(ex, p, me, peer, engines) : "";
    const json report = run_my_pair(p, me, peer, engines, opts.pair_duration, token);
    // The gather and a broadcast after it are the barrier between rounds: no node starts round
    // k+1 before all pairs of round k are done. A gather alone lets the other ranks run ahead
    // (they send and go on): a node then knocked on a peer still testing someone else, and the
    // rdma server took the early connection for its current peer's.
    const auto reports = ex.gather(report.dump());
    ex.broadcast("next round");
    if (ex.rank() != 0) continue;
    for (auto [ia, ib] : schedule.round(k))
      in.pair_results.push_back(pair_result(p, engines.mode, ia, ib, reports, opts));
  }
}

}  // namespace

std::string rank_name(const RunOptions& o, int r) {
  if (r >= 0 && static_cast<std::size_t>(r) < o.node_names.size() && !o.node_names[static_cast<std::size_t>(r)].empty())
    return o.node_names[static_cast<std::size_t>(r)];
  return "rank" + std::to_string(r);
}

std::optional<ClusterInput> run_cluster(Exchange& ex, NodeSummary mine, const PairEngines& engines,
                                        const RunOptions& opts) {
  ClusterInput in;
  const std::vector<Offer> offers = gather_summaries(ex, std::move(mine), engines, opts, in);
  in.launcher = ex.launcher();
  in.world = ex.world();
  in.pairs = opts.pairs;
  in.engine_mode = to_string(engines.mode);
  if (opts.pairs.mode != PairsMode::None) run_rounds(ex, offers, engines, opts, in);
  return ex.rank() == 0 ? std::optional(std::move(in)) : std::nullopt;
}

}  // namespace fabscope::cluster
