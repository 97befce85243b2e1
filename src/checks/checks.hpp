#pragma once
// The checks library: every check is a pure function over NodeInfo (no I/O), grouped in one
// file per family (link, roce, gdr, pcie, os, versions, verbs). Every finding id is listed in
// registry() and documented in docs/checks.md under the anchor docs_anchor(id).
#include <string>
#include <vector>

#include "core/finding.hpp"
#include "core/finding_registry.hpp"
#include "core/node_info.hpp"

namespace fabscope::checks {

// One entry per finding id (the verbs.* ids included), in family order; docs/checks.md.
const std::vector<FindingInfo>& registry();

// Every family over one node. Findings come most severe first; within one severity in registry
// order, then in the order each family met its subjects. Unknown facts give no finding.
std::vector<Finding> run(const NodeInfo& node);

// run(after) plus the rate checks (congestion.*, bond.link_failures) over two probes of the same
// node taken `seconds` apart, sorted the same way. The rate ids give no finding without it.
std::vector<Finding> run(const NodeInfo& after, const NodeInfo& before, double seconds);

}  // namespace fabscope::checks
