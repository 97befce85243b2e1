#pragma once
// The one layout of findings in human output, for every command that judges (check, doctor,
// fabric, env lint, log, rdma, cluster, job): a block per finding,
//
//   FAIL env.ifname_matches_nothing  NCCL_SOCKET_IFNAME
//        NCCL_SOCKET_IFNAME matches no interface on this node: ...
//        evidence: NCCL_SOCKET_IFNAME==nosuchif0; interfaces: lo(unknown) eth0(up)
//        remedy: name one that is up and reaches the other nodes, e.g. =eth0 (up here: eth0)
//        docs: docs/ncclenv.md#env-ifname_matches_nothing
//
// blocks apart by an empty line. The id and the subject are never cut: a subject that does not
// fit after the id goes on a line of its own. Text wraps at word boundaries to the width; a word
// is split only when it is longer than a whole line. Control characters print as '?'.
#include <cstddef>
#include <string>
#include <vector>

#include "core/finding.hpp"

namespace fabscope::core {

std::string render_finding_blocks(const std::vector<Finding>& findings, std::size_t width, bool with_remedy = true);

}  // namespace fabscope::core
