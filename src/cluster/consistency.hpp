#pragma once
// Consistency: the node x attribute table over every node's summary, the majority value of each
// attribute as the reference, and a cluster.* finding per attribute whose value differs, naming
// the nodes to fix. Pure.
#include <map>
#include <string>
#include <vector>

#include "cluster/summary.hpp"
#include "core/finding.hpp"

namespace fabscope::cluster {

struct AttributeView {
  std::string key;        // "rdma.rate"
  std::string title;      // "port rate"
  std::string finding_id; // "cluster.rate_differs"
  std::string reference;  // the majority value ("" when no node knows it)
  int reference_count = 0;
  bool tie = false;       // two values share the largest count: no reference can be trusted
  std::vector<std::string> values;  // one per node, in the order of the summaries; "" unknown
  std::vector<std::size_t> odd;     // indexes of nodes whose known value differs from the reference
};

struct Consistency {
  std::vector<std::string> nodes;          // node names, in rank order
  std::vector<AttributeView> attributes;   // in display order; env.* last
  std::vector<Finding> findings;           // most severe first
};

// The attributes compared, in display order. Keys a node sends that are not listed here are
// compared only when they start with "env." (every planned NCCL variable); others (from a newer
// sender) are ignored.
struct AttributeSpec {
  const char* key;
  const char* title;
  const char* finding_id;
};
const std::vector<AttributeSpec>& attribute_specs();

// nodes must be sorted by rank. A node with a non-empty error contributes no values.
Consistency judge_consistency(const std::vector<NodeSummary>& nodes);

// Per-node verdicts: a node that could not probe itself or whose own checks fail
// (cluster.node_fails_check, the ids in the evidence), a fabscope version other than rank 0's
// (cluster.version_mismatch), and the nodes that never joined (cluster.node_missing, by name).
std::vector<Finding> judge_nodes(const std::vector<NodeSummary>& nodes, const std::vector<MissingNode>& missing,
                                 const std::string& reference_version);

// The ids of a node's fail findings, "id@subject" sorted and distinct: the drain reason.
std::vector<std::string> failing_ids(const NodeSummary& node);

// "a, b, c and 7 more": at most `limit` names.
std::string name_list(const std::vector<std::string>& names, std::size_t limit = 8);

}  // namespace fabscope::cluster
