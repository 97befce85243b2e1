#pragma once
// The finding ids `fabscope cluster` reports (family "cluster"). They judge many nodes at once,
// so checks::run (one node) never reports them; they are documented in docs/checks.md like
// every other id, under the anchor docs_anchor(id).
#include <string>
#include <vector>

#include "core/finding.hpp"
#include "core/finding_registry.hpp"

namespace fabscope::cluster {

const std::vector<FindingInfo>& registry();

// fabscope::make_finding for a registered cluster id. Throws Error for an id that is not
// registered: an unregistered id would link to no documentation.
Finding registered_finding(const std::string& id, Severity severity, std::string subject, std::string message,
                           std::string evidence, std::string remedy);

}  // namespace fabscope::cluster
