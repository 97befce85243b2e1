#pragma once
// Slurm's hostlist syntax, shared by `fabscope cluster --nodes` and the exporter's mesh peers
// (SLURM_JOB_NODELIST).
#include <string>
#include <vector>

namespace fabscope::core {

// "gpu[01-03,07],login1" -> gpu01 gpu02 gpu03 gpu07 login1 (zero padding kept). Throws
// UsageError on a malformed list or one over 100,000 names.
std::vector<std::string> expand_hostlist(const std::string& text);

}  // namespace fabscope::core
