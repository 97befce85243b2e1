#pragma once
// Human output of `fabscope probe`: an ibstat-like table of RDMA ports, netdevs, GPUs and a
// GPU x NIC affinity matrix, every line within `width` columns.
#include <string>

#include "core/node_info.hpp"

namespace fabscope::probe {

std::string render_text(const NodeInfo& info, std::size_t width = 100);

}  // namespace fabscope::probe
