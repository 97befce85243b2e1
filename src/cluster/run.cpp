#include "cluster/run.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace fabscope::cluster {

namespace {

std::string rank_name(const RunOptions& o, int r) {
  if (r >= 0 && static_cast<std::size_t>(r) < o.node_names.size() && !o.node_names[static_cast<std::size_t>(r)].empty())
    return o.node_names[static_cast<std::size_t>(r)];
  return "rank" + std::to_string(r);
}

}  // namespace

std::optional<ClusterInput> run_cluster(Exchange& ex, NodeSummary mine, PairEngine* engine, const RunOptions& opts) {
  mine.rank = ex.rank();
  if (engine) mine.pair_address = engine->address();
  const auto gathered = ex.gather(json(mine).dump());

  ClusterInput in;
  in.launcher = ex.launcher();
  in.world = ex.world();
  in.pairs = opts.pairs;
  std::vector<bool> present(static_cast<std::size_t>(ex.world()), false);
  std::vector<std::string> addresses(static_cast<std::size_t>(ex.world()));
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
      addresses[r] = s.pair_address;
      in.nodes.push_back(std::move(s));
    }
  }
  if (opts.pairs.mode == PairsMode::None || !engine) return ex.rank() == 0 ? std::optional(in) : std::nullopt;

  // The plan: the ranks that joined, their addresses and the schedule's parameters. Every rank
  // computes the same rounds from it (schedule.hpp), so no pair list is ever sent.
  json plan;
  PairsSpec spec = opts.pairs;
  if (ex.rank() == 0) {
    std::vector<int> joined;
    std::vector<std::string> addr;
    for (std::size_t r = 0; r < present.size(); ++r)
      if (present[r] && !addresses[r].empty()) joined.push_back(static_cast<int>(r)), addr.push_back(addresses[r]);
    // More random rounds than the tournament has: every round.
    if (spec.mode == PairsMode::Random && spec.rounds > tournament_rounds(static_cast<int>(joined.size())))
      spec = {PairsMode::All, 0};
    plan = {{"joined", joined}, {"addresses", addr}, {"mode", pairs_name(spec)}, {"seed", opts.seed}};
  }
  plan = json::parse(ex.broadcast(plan.dump()), nullptr, false);
  std::vector<int> joined;
  std::vector<std::string> addr;
  try {
    if (plan.is_discarded()) throw Error("not JSON");
    joined = plan.at("joined").get<std::vector<int>>();
    addr = plan.at("addresses").get<std::vector<std::string>>();
    spec = parse_pairs(plan.at("mode").get<std::string>());
    if (addr.size() != joined.size()) throw Error("addresses and ranks differ in number");
  } catch (const std::exception& e) {
    throw Error(std::string("cluster: rank 0 sent a malformed pair plan: ") + e.what());
  }
  const auto seed = plan.at("seed").get<std::uint64_t>();
  const int n = static_cast<int>(joined.size());
  const Schedule schedule = n >= 2 ? Schedule(n, spec, seed) : Schedule(0, {PairsMode::None, 0}, 0);
  const auto me_it = std::find(joined.begin(), joined.end(), ex.rank());
  const int me = me_it == joined.end() ? -1 : static_cast<int>(me_it - joined.begin());
  in.pairs = opts.pairs;
  in.rounds = schedule.size();
  in.engine = engine->name();
  in.pair_seconds = std::chrono::duration<double>(opts.pair_duration).count();
  for (std::size_t k = 0; k < schedule.size(); ++k) {
    json report = json::object();
    const int peer = me >= 0 ? schedule.peer(k, me) : -1;
    if (peer >= 0) {
      PairSide side = engine->run(addr[static_cast<std::size_t>(peer)], me < peer, opts.pair_duration);
      report = {{"peer", joined[static_cast<std::size_t>(peer)]}, {"rx_gbps", side.rx_gbps}, {"error", side.error}};
    }
    // The gather is also the barrier between rounds: no node starts round k+1 before all
    // pairs of round k are done.
    auto reports = ex.gather(report.dump());
    if (ex.rank() != 0) continue;
    for (auto [ia, ib] : schedule.round(k)) {
      const int a = joined[static_cast<std::size_t>(ia)], b = joined[static_cast<std::size_t>(ib)];
      PairResult pr;
      pr.a = a;
      pr.b = b;
      auto take = [&](int who, std::optional<double>& into) {
        const auto& blob = reports[static_cast<std::size_t>(who)];
        if (!blob) {
          pr.error += (pr.error.empty() ? "" : "; ") + rank_name(opts, who) + " was lost during the round";
          return;
        }
        json j = json::parse(*blob, nullptr, false);
        if (j.is_discarded() || !j.is_object() || !j.contains("peer") || j["peer"] != (who == a ? b : a)) {
          pr.error += (pr.error.empty() ? "" : "; ") + rank_name(opts, who) + " reported nothing for the pair";
          return;
        }
        if (j.contains("rx_gbps") && j["rx_gbps"].is_number()) into = j["rx_gbps"].get<double>();
        if (j.contains("error") && j["error"].is_string() && !j["error"].get<std::string>().empty())
          pr.error += (pr.error.empty() ? "" : "; ") + rank_name(opts, who) + ": " + j["error"].get<std::string>();
      };
      take(b, pr.a_to_b_gbps);  // b received what a sent
      take(a, pr.b_to_a_gbps);
      if (!pr.error.empty()) pr.a_to_b_gbps.reset(), pr.b_to_a_gbps.reset();
      in.pair_results.push_back(pr);
    }
  }
  return ex.rank() == 0 ? std::optional(in) : std::nullopt;
}

}  // namespace fabscope::cluster
