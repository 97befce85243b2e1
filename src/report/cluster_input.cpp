// fabscope.cluster (docs/formats.md): read by the cluster module's one reader
// (cluster::saved_result_from_json), which checks every rank against the job, so rendering can
// index by rank without a bounds question. Only the report's own limit is added here.
#include "cluster/saved_result.hpp"
#include "core/fields.hpp"
#include "report/load.hpp"

namespace fabscope::report {

namespace {

// The heat map is a dense matrix of ranks: past this many a result is not drawn (and is not one
// fabscope wrote).
constexpr std::int64_t kMaxWorld = 65536;

}  // namespace

cluster::SavedResult cluster_from_json(const std::string& file, const json& doc) {
  cluster::SavedResult c = cluster::saved_result_from_json(file, doc);
  const core::Fields top(file, doc);
  // The module's reader lets a hand-made result for `cluster --from` leave these out; a report
  // shows them, and every file fabscope writes has them.
  for (const char* key : {"attributes", "findings", "summary"})
    if (!top.has(key)) top.fail(key, "missing");
  const core::Fields pairwise = top.object("pairwise");
  for (const char* key : {"slow_nodes", "slow_links"})
    if (!pairwise.has(key)) pairwise.fail(key, "missing");
  if (c.world_written > kMaxWorld)
    top.fail("world", "expected 0 to " + std::to_string(kMaxWorld) + " ranks, got " + std::to_string(c.world_written));
  if (c.world > kMaxWorld) {
    const auto nodes = top.array("nodes");
    for (std::size_t i = 0; i < c.nodes.size(); ++i)
      if (c.nodes[i].rank >= kMaxWorld) nodes[i].fail("rank", "out of range: " + std::to_string(c.nodes[i].rank));
  }
  return c;
}

}  // namespace fabscope::report
