#include "cluster/saved.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <unordered_set>

#include "cluster/saved_result.hpp"
#include "core/fields.hpp"

namespace fabscope::cluster {

namespace {

// Locating indexes nodes by rank: a node past `world` or a rank twice (six nodes in a world of
// three) is not a run fabscope wrote. Checked before the rest of the file is read, as the fault
// that explains the others (a node twice also gives the attributes a value too few).
void check_ranks(const core::Fields& top) {
  const std::int64_t world = top.integer("world");
  std::unordered_set<std::int64_t> seen;
  for (const auto& n : top.array("nodes")) {
    const auto r = n.opt_int("rank");
    if (!r || *r < 0) continue;  // the reader names it
    if (*r >= world) n.fail("rank", std::to_string(*r) + " is not below world " + std::to_string(world));
    if (!seen.insert(*r).second) n.fail("rank", std::to_string(*r) + " appears twice (one node per rank)");
  }
}

}  // namespace

SavedRun saved_run_from_json(const json& doc) {
  const std::string file;  // the caller names the file
  const core::Fields top(file, doc);
  if (doc.is_object() && doc.value("schema", json()) == "fabscope.cluster") check_ranks(top);
  const SavedResult saved = saved_result_from_json(file, doc);
  SavedRun run;
  run.world = saved.world_written;
  for (const SavedNode& n : saved.nodes) {
    NodeSummary s;
    s.rank = n.rank;
    s.name = n.name;
    s.fabscope_version = n.fabscope_version;
    s.rdma_address = n.rdma_address;
    s.rdma_note = n.rdma_note;
    s.tor_switch = n.tor_switch;
    s.tor_port = n.tor_port;
    s.ib_ports = n.ib_ports;
    run.tor_reported = run.tor_reported || n.tor_reported;
    if (run.written_by.empty()) run.written_by = n.fabscope_version;
    run.nodes.push_back(std::move(s));
  }
  run.engine = saved.engine;
  // Each pair once, whichever way round: at most world * (world - 1) / 2 of them.
  const core::Fields pw = top.object("pairwise");
  const auto w64 = static_cast<std::uint64_t>(run.world);
  if (saved.pairs.size() > w64 * (w64 > 0 ? w64 - 1 : 0) / 2)
    pw.fail("pairs", std::to_string(saved.pairs.size()) + " pairs, more than a world of " +
                         std::to_string(run.world) + " has");
  const auto pairs = pw.array("pairs");
  std::unordered_set<std::uint64_t> seen_pair;
  seen_pair.reserve(saved.pairs.size());
  for (std::size_t i = 0; i < saved.pairs.size(); ++i) {
    PairResult r = saved.pairs[i];
    if (!seen_pair.insert(static_cast<std::uint64_t>(std::min(r.a, r.b)) << 32 | static_cast<std::uint64_t>(std::max(r.a, r.b)))
             .second)
      pairs[i].fail("a/b", "the pair of ranks " + std::to_string(r.a) + " and " + std::to_string(r.b) + " appears twice");
    // pairs[].engine was added with the rdma engine; before it, pairwise.engine named the one
    // engine that measured every pair, so an earlier file's pair was measured by that one.
    if (r.engine.empty()) r.engine = run.engine;
    if (r.engine == run.engine) run.pairs.push_back(std::move(r));
  }
  run.names = saved.names;
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
