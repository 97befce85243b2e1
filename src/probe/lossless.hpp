#pragma once
// Lossless-RoCE state of every netdev that carries an Ethernet (RoCE) RDMA port: PFC priorities
// and the application-priority table (trust) over DCB netlink on a live node, and the mlx5 ECN
// (DCQCN) switches in sys/class/net/IF/ecn/roce_{np,rp}/enable/<priority>.
#include <optional>
#include <string>
#include <vector>

#include "core/node_info.hpp"
#include "core/root.hpp"
#include "probe/dcbnl.hpp"

namespace fabscope::probe {

// Applies a DCB reply to state: PFC priorities, PFC capability, app table, trust; or dcb_note.
void apply_dcb_reply(const DcbReply& reply, LosslessState& state);

// Priorities whose sys/class/net/IF/ecn/<point>/enable/<p> reads 1; nullopt (with a note) when
// the directory is absent or unreadable. point: "roce_np" | "roce_rp".
std::optional<std::vector<int>> read_ecn_priorities(const core::Root& root, const std::string& netdev,
                                                    const std::string& point, std::string& note);

// live: query DCB netlink (fixture roots cannot answer it).
std::vector<LosslessState> collect_lossless(const core::Root& root, const std::vector<RdmaDevice>& rdma,
                                            bool live, std::vector<std::string>& notes);

}  // namespace fabscope::probe
