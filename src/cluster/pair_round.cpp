#include "cluster/pair_round.hpp"

namespace fabscope::cluster {

namespace {

void append_error(std::string& error, const std::string& text) { error += (error.empty() ? "" : "; ") + text; }

// What rank `who` reported about its pair with `other`, or nullopt (lost, or about another
// pair); its error, if any, joins error.
std::optional<json> read_report(const std::vector<std::optional<std::string>>& reports, int who, int other,
                                const RunOptions& opts, std::string& error) {
  const auto& blob = reports[static_cast<std::size_t>(who)];
  if (!blob) {
    append_error(error, rank_name(opts, who) + " was lost during the round");
    return std::nullopt;
  }
  json j = json::parse(*blob, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("peer") || j["peer"] != other) {
    append_error(error, rank_name(opts, who) + " reported nothing for the pair");
    return std::nullopt;
  }
  if (j.contains("error") && j["error"].is_string() && !j["error"].get<std::string>().empty())
    append_error(error, rank_name(opts, who) + ": " + j["error"].get<std::string>());
  return j;
}

std::optional<double> number_at(const std::optional<json>& j, const char* key) {
  if (j && j->contains(key) && (*j)[key].is_number()) return (*j)[key].get<double>();
  return std::nullopt;
}

}  // namespace

namespace {
PairEngine* engine_named(const PairEngines& engines, const std::string& name) {
  if (name == "rdma") return engines.rdma;
  if (name == "tcp") return engines.tcp;
  if (name == "nccl") return engines.nccl;
  return nullptr;
}
}  // namespace

std::string my_pair_token(const RoundPlan& plan, int me, int peer, const PairEngines& engines) {
  if (me < 0 || peer < 0) return "";
  PairEngine* engine = engine_named(engines, pair_choice(plan, engines.mode, me, peer).engine);
  return engine ? engine->pair_token(me < peer) : "";
}

json run_my_pair(const RoundPlan& plan, int me, int peer, const PairEngines& engines,
                 std::chrono::milliseconds duration, const std::string& token) {
  if (peer < 0) return json::object();
  const EngineChoice c = pair_choice(plan, engines.mode, me, peer);
  PairEngine* engine = engine_named(engines, c.engine);
  PairSide side;
  const auto t0 = std::chrono::steady_clock::now();
  if (engine && c.engine == "nccl" && token.empty()) {
    side.error = me < peer ? "could not make the NCCL unique id" : "no NCCL unique id came from the peer";
  } else if (engine) {
    const auto& o = plan.offers[static_cast<std::size_t>(peer)];
    side = engine->run(c.engine == "nccl" ? token : c.engine == "rdma" ? o.rdma_address : o.tcp_address, me < peer,
                       duration);
  } else if (!c.engine.empty()) {
    side.error = "this node has no " + c.engine + " engine";
  }
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {{"peer", plan.joined[static_cast<std::size_t>(peer)]}, {"rx_gbps", side.rx_gbps},
          {"tx_gbps", side.tx_gbps}, {"wall_s", wall_s}, {"error", side.error}};
}

PairResult pair_result(const RoundPlan& plan, EngineMode mode, int ia, int ib,
                       const std::vector<std::optional<std::string>>& reports, const RunOptions& opts) {
  const int a = plan.joined[static_cast<std::size_t>(ia)], b = plan.joined[static_cast<std::size_t>(ib)];
  const EngineChoice c = pair_choice(plan, mode, ia, ib);
  PairResult pr;
  pr.a = a;
  pr.b = b;
  pr.engine = c.engine;
  pr.engine_reason = c.reason;
  if (c.engine.empty()) {
    pr.error = c.reason;  // nothing ran: neither side had an engine both offer
    return pr;
  }
  const auto ja = read_report(reports, a, b, opts, pr.error);
  const auto jb = read_report(reports, b, a, opts, pr.error);
  // a -> b: what b received (tcp) or what a wrote (rdma WRITE).
  pr.a_to_b_gbps = number_at(jb, "rx_gbps");
  if (!pr.a_to_b_gbps) pr.a_to_b_gbps = number_at(ja, "tx_gbps");
  pr.b_to_a_gbps = number_at(ja, "rx_gbps");
  if (!pr.b_to_a_gbps) pr.b_to_a_gbps = number_at(jb, "tx_gbps");
  // The pair took as long as its slower side.
  for (const auto& j : {ja, jb})
    if (auto w = number_at(j, "wall_s"); w && (!pr.wall_seconds || *w > *pr.wall_seconds)) pr.wall_seconds = w;
  if (!pr.error.empty()) pr.a_to_b_gbps.reset(), pr.b_to_a_gbps.reset();
  return pr;
}

}  // namespace fabscope::cluster
