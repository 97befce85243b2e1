#pragma once
// Every finding id fabscope can report, one registry over every module's table (the README's
// "Finding ids" table names the file that declares each family's ids and its docs page). It
// lives here, above the modules: core defines the shape, each module its own table.
#include "core/finding_registry.hpp"

namespace fabscope::cli {

// checks (node), subnet (fabric), cluster, ncclenv (env lint), nccllog, rdma and job, in that
// order; the modules left out of this build are absent.
const FindingRegistry& findings();

}  // namespace fabscope::cli
