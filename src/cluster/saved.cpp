#include "cluster/saved.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <unordered_set>

namespace fabscope::cluster {

namespace {

const json& need(const json& j, const std::string& where, const char* key, json::value_t type) {
  auto it = j.find(key);
  if (it == j.end()) throw Error(where + key + ": missing");
  const bool ok = it->type() == type || (type == json::value_t::number_integer && it->is_number_integer()) ||
                  (type == json::value_t::number_float && it->is_number());
  if (!ok) throw Error(where + key + ": " + it->type_name() + ", not the expected type");
  return *it;
}

std::string text(const json& j, const std::string& where, const char* key) {
  return need(j, where, key, json::value_t::string).get<std::string>();
}

int small(const json& j, const std::string& where, const char* key, long long hi) {
  const json& v = need(j, where, key, json::value_t::number_integer);
  if (v.is_number_unsigned() ? v.get<unsigned long long>() > static_cast<unsigned long long>(hi)
                             : v.get<long long>() < 0 || v.get<long long>() > hi)
    throw Error(where + key + ": out of range (0-" + std::to_string(hi) + "): " + v.dump());
  return static_cast<int>(v.get<long long>());
}

std::optional<double> gbps(const json& j, const std::string& where, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_number() || !(it->get<double>() >= 0)) throw Error(where + key + ": not a bandwidth: " + it->dump());
  return it->get<double>();
}

constexpr long long kMaxRanks = 1'000'000;

}  // namespace

SavedRun saved_run_from_json(const json& doc) {
  if (!doc.is_object()) throw Error("not a JSON object");
  if (doc.value("schema", "") != "fabscope.cluster")
    throw Error("schema: not fabscope.cluster (a `fabscope cluster --json` result)");
  if (small(doc, "", "schema_version", 1000) != 1) throw Error("schema_version: this fabscope reads version 1");
  SavedRun run;
  run.world = small(doc, "", "world", kMaxRanks);
  const json& nodes = need(doc, "", "nodes", json::value_t::array);
  // One node per rank: a rank twice (six nodes in a world of three) is not a run fabscope wrote.
  std::vector<bool> seen_rank(static_cast<std::size_t>(run.world), false);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const std::string w = "nodes[" + std::to_string(i) + "].";
    const json& n = nodes[i];
    if (!n.is_object()) throw Error("nodes[" + std::to_string(i) + "]: not an object");
    NodeSummary s;
    s.rank = small(n, w, "rank", kMaxRanks);
    if (s.rank >= run.world) throw Error(w + "rank: " + std::to_string(s.rank) + " is not below world " + std::to_string(run.world));
    if (seen_rank[static_cast<std::size_t>(s.rank)])
      throw Error(w + "rank: " + std::to_string(s.rank) + " appears twice (one node per rank)");
    seen_rank[static_cast<std::size_t>(s.rank)] = true;
    s.name = text(n, w, "name");
    // Every key below was added to version 1 after its first release (docs/formats.md): absent in
    // a file of an earlier fabscope, each reads as "not reported" (no RDMA endpoint, no switch
    // port, no InfiniBand port), never as a value.
    if (n.contains("rdma_address")) s.rdma_address = text(n, w, "rdma_address");
    if (n.contains("rdma_note")) s.rdma_note = text(n, w, "rdma_note");
    if (n.contains("tor_switch")) {
      s.tor_switch = text(n, w, "tor_switch");
      run.tor_reported = true;
    }
    if (run.written_by.empty() && n.contains("fabscope_version") && n["fabscope_version"].is_string())
      run.written_by = n["fabscope_version"].get<std::string>();
    if (n.contains("tor_port")) s.tor_port = text(n, w, "tor_port");
    if (n.contains("ib_ports")) {
      const json& ports = need(n, w, "ib_ports", json::value_t::array);
      if (ports.size() > kMaxIbPorts) throw Error(w + "ib_ports: more than " + std::to_string(kMaxIbPorts));
      for (std::size_t k = 0; k < ports.size(); ++k) {
        const std::string pw = w + "ib_ports[" + std::to_string(k) + "].";
        if (!ports[k].is_object()) throw Error(pw.substr(0, pw.size() - 1) + ": not an object");
        IbPortFact f;
        f.port = text(ports[k], pw, "port");
        f.lid = static_cast<std::uint32_t>(small(ports[k], pw, "lid", 0xffff));
        f.node_guid = text(ports[k], pw, "node_guid");
        f.state = text(ports[k], pw, "state");
        s.ib_ports.push_back(std::move(f));
      }
    }
    run.nodes.push_back(std::move(s));
  }
  const json& pw = need(doc, "", "pairwise", json::value_t::object);
  run.engine = text(pw, "pairwise.", "engine");
  const json& pairs = need(pw, "pairwise.", "pairs", json::value_t::array);
  // Each pair once, whichever way round: at most world * (world - 1) / 2 of them.
  const auto w64 = static_cast<std::uint64_t>(run.world);
  if (pairs.size() > w64 * (w64 > 0 ? w64 - 1 : 0) / 2)
    throw Error("pairwise.pairs: " + std::to_string(pairs.size()) + " pairs, more than a world of " +
                std::to_string(run.world) + " has");
  std::unordered_set<std::uint64_t> seen_pair;
  seen_pair.reserve(pairs.size());
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const std::string w = "pairwise.pairs[" + std::to_string(i) + "].";
    const json& p = pairs[i];
    if (!p.is_object()) throw Error(w.substr(0, w.size() - 1) + ": not an object");
    PairResult r;
    r.a = small(p, w, "a", kMaxRanks);
    r.b = small(p, w, "b", kMaxRanks);
    if (r.a >= run.world || r.b >= run.world || r.a == r.b)
      throw Error(w + "a/b: ranks " + std::to_string(r.a) + " and " + std::to_string(r.b) + " are not two ranks below world");
    if (!seen_pair.insert(static_cast<std::uint64_t>(std::min(r.a, r.b)) << 32 | static_cast<std::uint64_t>(std::max(r.a, r.b)))
             .second)
      throw Error(w + "a/b: the pair of ranks " + std::to_string(r.a) + " and " + std::to_string(r.b) + " appears twice");
    // pairs[].engine was added with the rdma engine; before it, pairwise.engine named the one
    // engine that measured every pair, so an earlier file's pair was measured by that one.
    r.engine = p.contains("engine") ? text(p, w, "engine") : run.engine;
    r.a_to_b_gbps = gbps(p, w, "a_to_b_gbps");
    r.b_to_a_gbps = gbps(p, w, "b_to_a_gbps");
    if (r.engine == run.engine) run.pairs.push_back(r);
  }
  run.names.resize(static_cast<std::size_t>(run.world));
  for (std::size_t i = 0; i < run.names.size(); ++i) run.names[i] = "rank" + std::to_string(i);
  for (const auto& n : run.nodes)
    if (!n.name.empty()) run.names[static_cast<std::size_t>(n.rank)] = n.name;
  return run;
}

Localization localize_nodes(const fabric::Subnet& fabric, const std::vector<NodeSummary>& nodes, int world,
                            const std::vector<PairResult>& pairs) {
  std::vector<HostPort> hosts(static_cast<std::size_t>(std::max(world, 0)));
  std::vector<std::string> unplaced;
  for (const auto& n : nodes) {
    if (n.rank < 0 || n.rank >= world) continue;
    // The pair engine's port ("mlx5_0:1 on ib0") is where the pairs ran.
    std::string preferred;
    if (!n.rdma_address.empty()) preferred = n.rdma_note.substr(0, n.rdma_note.find(' '));
    std::string why;
    hosts[static_cast<std::size_t>(n.rank)] = find_host(fabric, n.ib_ports, preferred, &why);
    if (hosts[static_cast<std::size_t>(n.rank)].node < 0)
      unplaced.push_back((n.name.empty() ? "rank" + std::to_string(n.rank) : n.name) + ": " + why);
  }
  const double threshold = direction_threshold(pairs);
  if (!std::isfinite(threshold)) {
    Localization l;
    l.fabric_source = fabric.source;
    l.why_not = "too few measured pairs to tell slow from fast";
    return l;
  }
  Localization l = localize(fabric, hosts, pairs, threshold);
  // The per-rank reasons replace the generic "not placed" notes.
  std::erase_if(l.notes, [](const std::string& s) { return s.find("is not placed in the fabric") != std::string::npos; });
  if (unplaced.size() > 20) {
    const std::size_t more = unplaced.size() - 19;
    unplaced.resize(19);
    unplaced.push_back(std::to_string(more) + " more rank(s) not placed in the fabric");
  }
  l.notes.insert(l.notes.begin(), unplaced.begin(), unplaced.end());
  return l;
}

Localization localize_by_lldp(const std::vector<NodeSummary>& nodes, int world, const std::vector<PairResult>& pairs) {
  std::vector<TorPlace> places(static_cast<std::size_t>(std::max(world, 0)));
  for (const auto& n : nodes)
    if (n.rank >= 0 && n.rank < world) places[static_cast<std::size_t>(n.rank)] = {n.tor_switch, n.tor_port};
  const double threshold = direction_threshold(pairs);
  if (!std::isfinite(threshold)) {
    Localization l;
    l.fabric_source = "LLDP neighbours";
    l.why_not = "too few measured pairs to tell slow from fast";
    return l;
  }
  return localize_by_switch(places, pairs, threshold);
}

Localization localize_saved(const SavedRun& run) {
  if (!run.tor_reported) {
    Localization l;
    l.fabric_source = "LLDP neighbours";
    // The version string alone does not tell (0.1.0 grew the key without a new number).
    l.why_not = "the result holds no switch ports: it was written by an earlier fabscope (" +
                (run.written_by.empty() ? std::string("version unknown") : "version " + run.written_by) +
                "), before nodes reported their LLDP neighbour; give --fabric FILE (InfiniBand) or run the "
                "cluster again";
    return l;
  }
  return localize_by_lldp(run.nodes, run.world, run.pairs);
}

Localization localize_saved(const SavedRun& run, const fabric::Subnet& fabric) {
  return localize_nodes(fabric, run.nodes, run.world, run.pairs);
}

}  // namespace fabscope::cluster
