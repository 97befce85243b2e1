#pragma once
// Every finding id `fabscope log` reports (family "nccllog", docs/nccllog.md): one per catalog
// signature ("nccllog." + its id, its severity and title), then those of the summary rules and of
// diagnose() itself (first_cause, no_transport_lines). An id that is both a signature and a
// summary rule (version_mismatch) is listed once, with the signature's entry.
#include <vector>

#include "core/finding_registry.hpp"

namespace fabscope::nccllog {

const std::vector<FindingInfo>& finding_infos();

}  // namespace fabscope::nccllog
