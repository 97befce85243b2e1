#pragma once
// `fabscope fabric --slurm-topology | --k8s-labels | --check`: the swept (or saved) subnet handed
// to a scheduler (fabric/slurm_topology.hpp). fabric.cpp declares these flags beside its own and
// hands over the subnet once it is loaded or swept.
#include "core/args.hpp"
#include "fabric/model.hpp"

namespace fabscope::cli {

void topology_flags(core::ArgParser& args);
// Whether the command line asks for a topology instead of the judgements.
bool topology_requested(const core::ArgParser& args);
// Checks the flags' combinations before any sweep (UsageError).
void check_topology_flags(const core::ArgParser& args);
int fabric_topology(const core::ArgParser& args, const fabric::Subnet& s);

}  // namespace fabscope::cli
