#pragma once
// Checks that compare the two views of each RDMA device: sysfs (probe/rdma.cpp) and libibverbs
// (probe/verbs.cpp, live only). Pure: reads NodeInfo only. Ids are documented in docs/checks.md.
#include <vector>

#include "core/finding.hpp"
#include "core/node_info.hpp"

namespace fabscope::checks {

// verbs.library_missing, verbs.device_not_visible, verbs.sysfs_mismatch. No findings when
// NodeInfo carries no verbs view (fixture roots, builds without libibverbs-dev) or when the two
// views agree.
std::vector<Finding> check_verbs(const NodeInfo& node);

}  // namespace fabscope::checks
