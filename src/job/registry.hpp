#pragma once
// The finding ids of a running job's analysis (family "job"), documented in docs/job.md under
// the anchor docs_anchor(id, "docs/job.md").
#include <string>
#include <vector>

#include "core/finding.hpp"
#include "core/finding_registry.hpp"

namespace fabscope::job {

const std::vector<FindingInfo>& registry();

// make_finding for a registered id; Error for an id not in the registry.
Finding registered_finding(const std::string& id, Severity severity, std::string subject, std::string message,
                           std::string evidence, std::string remedy);

}  // namespace fabscope::job
