#include "cluster/run.hpp"

#include <algorithm>

#include "cluster/message.hpp"
#include "core/error.hpp"
#include "core/socket.hpp"

namespace fabscope::cluster {

namespace {

std::string rank_name(const RunOptions& o, int r) {
  if (r >= 0 && static_cast<std::size_t>(r) < o.node_names.size() && !o.node_names[static_cast<std::size_t>(r)].empty())
    return o.node_names[static_cast<std::size_t>(r)];
  return "rank" + std::to_string(r);
}

}  // namespace

std::optional<ClusterInput> run_cluster(Exchange& ex, NodeSummary mine, const PairEngines& engines,
                                        const RunOptions& opts) {
  mine.rank = ex.rank();
  if (engines.tcp) mine.pair_address = engines.tcp->address();
  if (engines.rdma) mine.rdma_address = engines.rdma->address();
  mine.rdma_note = engines.rdma_note;
  const auto gathered = ex.gather(json(mine).dump());

  ClusterInput in;
  in.launcher = ex.launcher();
  in.world = ex.world();
  in.pairs = opts.pairs;
  in.engine_mode = to_string(engines.mode);
  std::vector<bool> present(static_cast<std::size_t>(ex.world()), false);
  std::vector<PairEndpoints> offers(static_cast<std::size_t>(ex.world()));
  if (ex.rank() == 0) {
    for (std::size_t r = 0; r < gathered.size(); ++r) {
      const int rank = static_cast<int>(r);
      if (!gathered[r]) {
        std::string why = ex.why_missing(rank);
        in.missing.push_back({rank_name(opts, rank), why});
        continue;
      }
      NodeSummary s;
      try {
        json j = json::parse(*gathered[r], nullptr, false);
        if (j.is_discarded()) throw Error("not JSON");
        s = summary_from_json(j);
        if (s.rank != rank) throw Error("claims rank " + std::to_string(s.rank));
      } catch (const std::exception& e) {
        s = NodeSummary{};
        s.rank = rank;
        s.name = rank_name(opts, rank);
        s.error = "rank " + std::to_string(rank) + " sent a malformed summary: " + e.what();
      }
      present[r] = s.error.empty();
      offers[r] = {s.name.empty() ? rank_name(opts, rank) : s.name, s.pair_address, s.rdma_address, s.rdma_note};
      in.nodes.push_back(std::move(s));
    }
  }
  if (opts.pairs.mode == PairsMode::None) return ex.rank() == 0 ? std::optional(in) : std::nullopt;

  // The plan: the ranks that joined, what each offers and the schedule's parameters. Every rank
  // computes the same rounds and engine choices from it (schedule.hpp, engine_choice.hpp), so no
  // pair list is ever sent.
  json plan;
  PairsSpec spec = opts.pairs;
  if (ex.rank() == 0) {
    std::vector<int> joined;
    json offered = json::array();
    for (std::size_t r = 0; r < present.size(); ++r) {
      const auto& o = offers[r];
      if (!present[r] || (o.tcp_address.empty() && o.rdma_address.empty() && engines.mode != EngineMode::Rdma))
        continue;
      joined.push_back(static_cast<int>(r));
      offered.push_back({o.name, o.tcp_address, o.rdma_address, o.rdma_note});
    }
    // More random rounds than the tournament has: every round.
    if (spec.mode == PairsMode::Random && spec.rounds > tournament_rounds(static_cast<int>(joined.size())))
      spec = {PairsMode::All, 0};
    // The pair secret: a stranger on the network cannot take a pair's place (pair_engine.hpp).
    plan = {{"joined", joined}, {"offers", offered}, {"mode", pairs_name(spec)}, {"seed", opts.seed},
            {"pair_secret", net::random_secret()}};
  }
  plan = json::parse(ex.broadcast(plan.dump()), nullptr, false);
  std::vector<int> joined;
  std::vector<PairEndpoints> offer;
  std::uint64_t seed = 0;
  try {
    if (plan.is_discarded()) throw Error("not JSON");
    PairPlan p = parse_plan(plan);
    joined = std::move(p.joined);
    for (auto& v : p.offers) offer.push_back({v[0], v[1], v[2], v[3]});
    spec = parse_pairs(p.mode);
    seed = p.seed;
    if (engines.tcp) engines.tcp->set_secret(p.pair_secret);
    if (engines.rdma) engines.rdma->set_secret(p.pair_secret);
  } catch (const std::exception& e) {
    throw Error(std::string("cluster: rank 0 sent a malformed pair plan: ") + e.what());
  }
  const int n = static_cast<int>(joined.size());
  const Schedule schedule = n >= 2 ? Schedule(n, spec, seed) : Schedule(0, {PairsMode::None, 0}, 0);
  const auto me_it = std::find(joined.begin(), joined.end(), ex.rank());
  const int me = me_it == joined.end() ? -1 : static_cast<int>(me_it - joined.begin());
  auto choice = [&](int i, int j) {
    const int lo = std::min(i, j), hi = std::max(i, j);
    return choose_pair_engine(engines.mode, offer[static_cast<std::size_t>(lo)], offer[static_cast<std::size_t>(hi)]);
  };
  in.pairs = opts.pairs;
  in.rounds = schedule.size();
  in.pair_seconds = std::chrono::duration<double>(opts.pair_duration).count();
  for (std::size_t k = 0; k < schedule.size(); ++k) {
    json report = json::object();
    const int peer = me >= 0 ? schedule.peer(k, me) : -1;
    if (peer >= 0) {
      const EngineChoice c = choice(me, peer);
      PairEngine* engine = c.engine == "rdma" ? engines.rdma : c.engine == "tcp" ? engines.tcp : nullptr;
      PairSide side;
      const auto t0 = std::chrono::steady_clock::now();
      if (engine) {
        const auto& o = offer[static_cast<std::size_t>(peer)];
        side = engine->run(c.engine == "rdma" ? o.rdma_address : o.tcp_address, me < peer, opts.pair_duration);
      } else if (!c.engine.empty()) {
        side.error = "this node has no " + c.engine + " engine";
      }
      const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      report = {{"peer", joined[static_cast<std::size_t>(peer)]}, {"rx_gbps", side.rx_gbps},
                {"tx_gbps", side.tx_gbps}, {"wall_s", wall_s}, {"error", side.error}};
    }
    // The gather and a broadcast after it are the barrier between rounds: no node starts round
    // k+1 before all pairs of round k are done. A gather alone lets the other ranks run ahead
    // (they send and go on): a node then knocked on a peer still testing someone else, and the
    // rdma server took the early connection for its current peer's.
    auto reports = ex.gather(report.dump());
    ex.broadcast("next round");
    if (ex.rank() != 0) continue;
    for (auto [ia, ib] : schedule.round(k)) {
      const int a = joined[static_cast<std::size_t>(ia)], b = joined[static_cast<std::size_t>(ib)];
      const EngineChoice c = choice(ia, ib);
      PairResult pr;
      pr.a = a;
      pr.b = b;
      pr.engine = c.engine;
      pr.engine_reason = c.reason;
      if (c.engine.empty()) {
        pr.error = c.reason;  // nothing ran: neither side had an engine both offer
        in.pair_results.push_back(pr);
        continue;
      }
      auto read = [&](int who) -> std::optional<json> {
        const auto& blob = reports[static_cast<std::size_t>(who)];
        if (!blob) {
          pr.error += (pr.error.empty() ? "" : "; ") + rank_name(opts, who) + " was lost during the round";
          return std::nullopt;
        }
        json j = json::parse(*blob, nullptr, false);
        if (j.is_discarded() || !j.is_object() || !j.contains("peer") || j["peer"] != (who == a ? b : a)) {
          pr.error += (pr.error.empty() ? "" : "; ") + rank_name(opts, who) + " reported nothing for the pair";
          return std::nullopt;
        }
        if (j.contains("error") && j["error"].is_string() && !j["error"].get<std::string>().empty())
          pr.error += (pr.error.empty() ? "" : "; ") + rank_name(opts, who) + ": " + j["error"].get<std::string>();
        return j;
      };
      auto rate = [](const std::optional<json>& j, const char* key) -> std::optional<double> {
        if (j && j->contains(key) && (*j)[key].is_number()) return (*j)[key].get<double>();
        return std::nullopt;
      };
      const auto ja = read(a), jb = read(b);
      // a -> b: what b received (tcp) or what a wrote (rdma WRITE).
      pr.a_to_b_gbps = rate(jb, "rx_gbps");
      if (!pr.a_to_b_gbps) pr.a_to_b_gbps = rate(ja, "tx_gbps");
      pr.b_to_a_gbps = rate(ja, "rx_gbps");
      if (!pr.b_to_a_gbps) pr.b_to_a_gbps = rate(jb, "tx_gbps");
      // The pair took as long as its slower side.
      for (const auto& j : {ja, jb})
        if (auto w = rate(j, "wall_s"); w && (!pr.wall_seconds || *w > *pr.wall_seconds)) pr.wall_seconds = w;
      if (!pr.error.empty()) pr.a_to_b_gbps.reset(), pr.b_to_a_gbps.reset();
      in.pair_results.push_back(pr);
    }
  }
  return ex.rank() == 0 ? std::optional(in) : std::nullopt;
}

}  // namespace fabscope::cluster
