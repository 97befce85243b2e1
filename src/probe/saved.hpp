#pragma once
// A node description saved by `fabscope probe --json` (another node's, or this one's earlier),
// read back for the commands that judge a node they did not probe (check --node).
#include <string>

#include "core/node_info.hpp"

namespace fabscope::probe {

// path, or "-" for stdin. Throws fabscope::Error naming the path when the file cannot be read, is
// larger than 64 MiB (a real one is well under 1 MiB), is not JSON or is not a node description.
NodeInfo load_saved_node(const std::string& path);

}  // namespace fabscope::probe
