#pragma once
// ClusterResult: everything rank 0 concludes, built from the gathered summaries and the pair
// measurements by judge() (pure), rendered as text (render.hpp) or JSON (schema fabscope.cluster
// version 1, docs/formats.md).
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cluster/consistency.hpp"
#include "cluster/localize.hpp"
#include "cluster/outliers.hpp"
#include "cluster/saved_result.hpp"
#include "cluster/schedule.hpp"
#include "cluster/summary.hpp"
#include "core/json.hpp"

namespace fabscope::cluster {

struct ClusterInput {
  std::string launcher;                // "mpi" | "env"
  int world = 0;                       // ranks the job was started with
  std::vector<NodeSummary> nodes;      // the ones that joined, any order
  std::vector<MissingNode> missing;    // the ones that did not
  PairsSpec pairs;
  std::size_t rounds = 0;              // rounds of the schedule that ran
  std::vector<PairResult> pair_results;
  std::string engine_mode;             // --engine: "auto" | "rdma" | "tcp"
  std::string engine;                  // judge(): the engine of most measured pairs, "" none
  double pair_seconds = 0;             // per direction
  // --fabric: the saved sweep (with forwarding tables) the pairs are routed through; null none.
  std::shared_ptr<const fabric::Subnet> fabric;
  std::string fabric_error;            // --fabric given but not read: why
};

struct ClusterResult {
  static constexpr int kSchemaVersion = kClusterSchemaVersion;
  ClusterInput input;                  // nodes sorted by rank
  Consistency consistency;
  Outliers outliers;
  Localization localization;           // attempted only with a fabric and judged pairs
  std::vector<Finding> findings;       // most severe first, registry order within a severity
  // Nodes to drain, each with the failing ids that make the reason.
  std::map<std::string, std::set<std::string>> drain;
};

ClusterResult judge(ClusterInput input, const OutlierOptions& opts = {});

// `scontrol update NodeName=X State=DRAIN Reason="fabscope: ids"`, one per node to drain. The
// reason is cut to 200 characters, like the prolog's.
std::vector<std::string> drain_commands(const ClusterResult& r);
// The same as argv vectors (for running without a shell).
std::vector<std::vector<std::string>> drain_argv(const ClusterResult& r);

json cluster_json(const ClusterResult& r);
// Node names by rank ("rankN" for a rank without one), as the findings name them.
std::vector<std::string> names_of(const ClusterResult& r);
int exit_code(const ClusterResult& r);

}  // namespace fabscope::cluster
