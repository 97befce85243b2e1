#include "cluster/result.hpp"

#include <algorithm>
#include <cmath>

#include "cluster/registry.hpp"
#include "cluster/saved.hpp"

namespace fabscope::cluster {

namespace {

std::string reason_for(const std::set<std::string>& ids) {
  std::string reason = "fabscope:";
  for (const auto& id : ids) reason += " " + id;
  if (reason.size() > 200) reason = reason.substr(0, 197) + "...";
  return reason;
}

// auto: the nodes whose pairs fell back to tcp while others had RDMA (warn, one per node), or
// one note that no node offered RDMA at all.
std::vector<Finding> engine_fallback_findings(const ClusterInput& in) {
  std::vector<Finding> out;
  if (in.engine_mode != "auto") return out;
  std::set<int> on_tcp;
  for (const auto& p : in.pair_results)
    if (p.engine == "tcp") on_tcp.insert(p.a), on_tcp.insert(p.b);
  if (on_tcp.empty()) return out;
  std::size_t with_rdma = 0;
  for (const auto& n : in.nodes) with_rdma += !n.rdma_address.empty();
  if (with_rdma == 0) {
    std::string why = in.nodes.empty() ? "" : in.nodes.front().name + ": " + in.nodes.front().rdma_note;
    out.push_back(registered_finding(
        "cluster.pair_engine_fallback", Severity::Info, "pairs",
        "every pair ran over tcp: no node offers an RDMA endpoint", why,
        "where the nodes have RDMA: `fabscope rdma` between two of them says what is missing (device, "
        "ACTIVE port, RoCE v2 GID, libibverbs/librdmacm)"));
    return out;
  }
  for (const auto& n : in.nodes) {
    if (!n.rdma_address.empty() || !on_tcp.count(n.rank)) continue;
    const std::string name = n.name.empty() ? "rank" + std::to_string(n.rank) : n.name;
    out.push_back(registered_finding(
        "cluster.pair_engine_fallback", Severity::Warn, name,
        "the pairs of " + name + " ran over tcp, not RDMA: it offers no RDMA endpoint while " +
            std::to_string(with_rdma) + " node(s) do",
        name + ": " + (n.rdma_note.empty() ? "no RDMA endpoint advertised" : n.rdma_note),
        "on " + name + ": fabscope probe and fabscope check (RDMA device, ACTIVE port, RoCE v2 GID, "
        "libibverbs and librdmacm installed); NCCL on this node would fall back to sockets too"));
  }
  return out;
}

}  // namespace

ClusterResult judge(ClusterInput input, const OutlierOptions& opts) {
  ClusterResult r;
  std::sort(input.nodes.begin(), input.nodes.end(),
            [](const NodeSummary& a, const NodeSummary& b) { return a.rank < b.rank; });
  r.input = std::move(input);
  const auto& nodes = r.input.nodes;
  const std::string ref_version = nodes.empty() ? std::string(FABSCOPE_VERSION) : nodes.front().fabscope_version;
  r.consistency = judge_consistency(nodes);
  auto node_findings = judge_nodes(nodes, r.input.missing, ref_version);

  // Pair ranks are job ranks; names come from the summaries (a rank that did not join has none).
  const int world = std::max<int>(r.input.world, nodes.empty() ? 0 : nodes.back().rank + 1);
  const std::vector<std::string> names = names_of(r);
  // Outliers are judged among the pairs of one engine, the one that measured most (rdma on a
  // tie): a tcp fallback pair beside RDMA pairs is slower by nature, not because of its nodes.
  std::map<std::string, std::size_t> per_engine;
  for (const auto& p : r.input.pair_results)
    if (p.value_gbps()) ++per_engine[p.engine];
  std::string judged;
  std::size_t most = 0;
  for (const auto& [engine, count] : per_engine)
    if (count > most || (count == most && engine == "rdma")) judged = engine, most = count;
  if (!judged.empty()) r.input.engine = judged;
  std::vector<PairResult> same_engine;
  for (const auto& p : r.input.pair_results)
    if (p.engine == judged) same_engine.push_back(p);
  r.outliers = detect_outliers(world, same_engine, opts);
  auto pair_findings = outlier_findings(r.outliers, r.input.pair_results, names);
  if (r.input.fabric) {
    r.localization = localize_nodes(*r.input.fabric, nodes, world, same_engine);
    for (auto& f : localization_findings(r.localization, names)) pair_findings.push_back(std::move(f));
  } else if (!r.input.fabric_error.empty()) {
    r.localization.why_not = r.input.fabric_error;
  } else if (std::any_of(nodes.begin(), nodes.end(), [](const NodeSummary& n) { return !n.tor_switch.empty(); })) {
    // RoCE: the nodes said which switch port they hang on (LLDP).
    r.localization = localize_by_lldp(nodes, world, same_engine);
    for (auto& f : localization_findings(r.localization, names)) pair_findings.push_back(std::move(f));
  }
  for (auto& f : engine_fallback_findings(r.input)) pair_findings.push_back(std::move(f));

  for (auto* fs : {&node_findings, &r.consistency.findings, &pair_findings})
    r.findings.insert(r.findings.end(), fs->begin(), fs->end());
  std::stable_sort(r.findings.begin(), r.findings.end(), [](const Finding& a, const Finding& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    return finding_rank(registry(), a.id) < finding_rank(registry(), b.id);
  });

  // Who to drain: every node a failing verdict names.
  for (const auto& m : r.input.missing) r.drain[m.name].insert("cluster.node_missing");
  for (const auto& n : nodes) {
    const std::string name = n.name.empty() ? "rank" + std::to_string(n.rank) : n.name;
    for (const auto& id : failing_ids(n)) r.drain[name].insert(id);
    if (!n.error.empty()) r.drain[name].insert("cluster.node_fails_check");
    if (n.fabscope_version != ref_version) r.drain[name].insert("cluster.version_mismatch");
  }
  for (const auto& a : r.consistency.attributes) {
    // Only failing attributes drain (link layer); warnings are the operator's call.
    if (a.finding_id != "cluster.link_layer_differs") continue;
    for (std::size_t i : a.odd) r.drain[r.consistency.nodes[i]].insert(a.finding_id);
  }
  for (const auto& f : r.consistency.findings)
    if (f.id == "cluster.rdma_missing")
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        auto it = nodes[i].attributes.find("rdma.active_ports");
        if (nodes[i].error.empty() && it != nodes[i].attributes.end() && it->second == "0")
          r.drain[r.consistency.nodes[i]].insert("cluster.rdma_missing");
      }
  for (const auto& s : r.outliers.slow_nodes) r.drain[names[static_cast<std::size_t>(s.rank)]].insert("cluster.slow_node");
  return r;
}

std::vector<std::vector<std::string>> drain_argv(const ClusterResult& r) {
  std::vector<std::vector<std::string>> out;
  for (const auto& [node, ids] : r.drain)
    out.push_back({"scontrol", "update", "NodeName=" + node, "State=DRAIN", "Reason=" + reason_for(ids)});
  return out;
}

std::vector<std::string> drain_commands(const ClusterResult& r) {
  std::vector<std::string> out;
  for (const auto& [node, ids] : r.drain)
    out.push_back("scontrol update NodeName=" + node + " State=DRAIN Reason=\"" + reason_for(ids) + "\"");
  return out;
}

int exit_code(const ClusterResult& r) { return exit_code_for(r.findings); }

std::vector<std::string> names_of(const ClusterResult& r) {
  const auto& nodes = r.input.nodes;
  const int world = std::max<int>(r.input.world, nodes.empty() ? 0 : nodes.back().rank + 1);
  std::vector<std::string> names(static_cast<std::size_t>(std::max(world, 0)));
  for (std::size_t i = 0; i < names.size(); ++i) names[i] = "rank" + std::to_string(i);
  for (const auto& n : nodes)
    if (n.rank >= 0 && n.rank < world && !n.name.empty()) names[static_cast<std::size_t>(n.rank)] = n.name;
  return names;
}

namespace {
json ib_ports_json(const NodeSummary& n) {
  json ports = json::array();
  for (const auto& p : n.ib_ports)
    ports.push_back({{"port", p.port}, {"lid", p.lid}, {"node_guid", p.node_guid}, {"state", p.state}});
  return ports;
}
}  // namespace

json cluster_json(const ClusterResult& r) {
  const auto& in = r.input;
  json nodes = json::array();
  for (const auto& n : in.nodes)
    nodes.push_back({{"rank", n.rank}, {"name", n.name}, {"fabscope_version", n.fabscope_version},
                     {"pair_address", n.pair_address}, {"rdma_address", n.rdma_address}, {"rdma_note", n.rdma_note},
                     {"nccl_device", n.nccl_device}, {"nccl_note", n.nccl_note},
                     {"error", n.error}, {"findings", n.findings}, {"ib_ports", ib_ports_json(n)},
                     {"tor_switch", n.tor_switch}, {"tor_port", n.tor_port}});
  json attrs = json::array();
  for (const auto& a : r.consistency.attributes) {
    json odd = json::array();
    for (std::size_t i : a.odd) odd.push_back(r.consistency.nodes[i]);
    attrs.push_back({{"key", a.key}, {"title", a.title}, {"finding_id", a.finding_id},
                     {"reference", a.reference}, {"reference_count", a.reference_count}, {"tie", a.tie},
                     {"values", a.values}, {"odd", odd}});
  }
  auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  json pairs = json::array();
  for (const auto& p : in.pair_results)
    pairs.push_back({{"a", p.a}, {"b", p.b}, {"a_to_b_gbps", p.a_to_b_gbps}, {"b_to_a_gbps", p.b_to_a_gbps},
                     {"engine", p.engine}, {"engine_reason", p.engine_reason}, {"wall_seconds", p.wall_seconds},
                     {"error", p.error}});
  json by_engine = json::object();
  for (const auto& p : in.pair_results)
    if (!p.engine.empty()) by_engine[p.engine] = by_engine.value(p.engine, 0) + 1;
  json slow_nodes = json::array(), slow_links = json::array();
  for (const auto& s : r.outliers.slow_nodes)
    slow_nodes.push_back({{"rank", s.rank}, {"pairs", s.pairs}, {"slow_pairs", s.slow_pairs},
                          {"median_gbps", num(s.median_gbps)}});
  for (const auto& l : r.outliers.slow_links)
    slow_links.push_back({{"a", l.a}, {"b", l.b}, {"gbps", num(l.value_gbps)},
                          {"a_median_gbps", num(l.a_median_gbps)}, {"b_median_gbps", num(l.b_median_gbps)}});
  json missing = json::array();
  for (const auto& m : in.missing) missing.push_back(json::object({{"name", m.name}, {"reason", m.reason}}));
  json drain = json::array();
  auto cmds = drain_commands(r);
  std::size_t i = 0;
  for (const auto& [node, ids] : r.drain)
    drain.push_back({{"node", node}, {"ids", std::vector<std::string>(ids.begin(), ids.end())},
                     {"command", cmds[i++]}});
  const SeverityCounts counts = count_severities(r.findings);
  return json{{"schema", "fabscope.cluster"},
              {"schema_version", ClusterResult::kSchemaVersion},
              {"launcher", in.launcher},
              {"world", in.world},
              {"nodes", nodes},
              {"missing", missing},
              {"attributes", attrs},
              {"pairwise",
               {{"mode", pairs_name(in.pairs)}, {"rounds", in.rounds}, {"engine", in.engine}, {"engine_mode", in.engine_mode},
                {"pairs_by_engine", by_engine},
                {"seconds_per_direction", in.pair_seconds}, {"pairs", pairs},
                {"measured", r.outliers.measured}, {"judged", r.outliers.judged},
                {"median_gbps", r.outliers.judged ? num(r.outliers.median_gbps) : json(nullptr)},
                {"mad_gbps", r.outliers.judged ? num(r.outliers.mad_gbps) : json(nullptr)},
                {"threshold_gbps", r.outliers.judged ? num(r.outliers.threshold_gbps) : json(nullptr)},
                {"slow_nodes", slow_nodes}, {"slow_links", slow_links}}},
              {"localization", localization_json(r.localization, names_of(r))},
              {"findings", r.findings},
              {"drain", drain},
              {"summary", {{"fail", counts.fail}, {"warn", counts.warn}, {"info", counts.info}, {"worst", to_string(worst(r.findings))}}},
              {"exit_code", exit_code(r)}};
}

}  // namespace fabscope::cluster
