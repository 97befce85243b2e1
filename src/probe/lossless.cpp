#include "probe/lossless.hpp"

#include <linux/dcbnl.h>

#include "probe/read_util.hpp"

namespace fabscope::probe {

void apply_dcb_reply(const DcbReply& reply, LosslessState& s) {
  if (reply.status != DcbReply::Status::Ok) {
    s.dcb_note = describe_failure(reply);
    return;
  }
  if (reply.pfc_en) {
    std::vector<int> prios;
    for (int p = 0; p < 8; ++p)
      if (*reply.pfc_en & (1u << p)) prios.push_back(p);
    s.pfc_priorities = std::move(prios);
    s.pfc_capable_tcs = reply.pfc_cap;
  } else {
    s.dcb_note = "the driver answers DCB but reports no IEEE PFC object";
  }
  s.apps = reply.apps;
  // mlx5 (mlx5e_dcbnl_ieee_setapp) switches the port to DSCP trust when the first DSCP entry is
  // added and back to PCP when the last is removed, so DSCP entries in the table mean DSCP trust.
  bool dscp = false;
  for (const auto& a : reply.apps) dscp = dscp || a.selector == IEEE_8021QAZ_APP_SEL_DSCP;
  s.trust = dscp ? "dscp" : "pcp";
}

std::optional<std::vector<int>> read_ecn_priorities(const core::Root& root, const std::string& netdev,
                                                    const std::string& point, std::string& note) {
  const std::string dir = "sys/class/net/" + netdev + "/ecn/" + point + "/enable";
  if (!root.is_dir(dir)) {
    if (note.empty()) note = "no ECN switches in sysfs (sys/class/net/" + netdev + "/ecn: mlx5 only)";
    return std::nullopt;
  }
  std::vector<int> on;
  bool any = false;
  for (int p = 0; p < 8; ++p) {
    const std::string rel = dir + "/" + std::to_string(p);
    auto v = root.read_line(rel);
    if (!v) {
      if (root.exists(rel)) note = rel + ": " + unreadable_reason(root, rel);
      continue;
    }
    any = true;
    if (*v == "1") on.push_back(p);
  }
  if (!any) return std::nullopt;
  return on;
}

std::vector<LosslessState> collect_lossless(const core::Root& root, const std::vector<RdmaDevice>& rdma,
                                            bool live, std::vector<std::string>& notes) {
  std::vector<LosslessState> out;
  for (const auto& d : rdma)
    for (const auto& p : d.ports) {
      if (p.link_layer != "Ethernet" || p.netdev.empty()) continue;
      LosslessState* s = nullptr;
      for (auto& e : out)
        if (e.netdev == p.netdev) s = &e;
      if (!s) {
        out.push_back(LosslessState{});
        s = &out.back();
        s->netdev = p.netdev;
      }
      s->rdma_ports.push_back(d.name + ":" + std::to_string(p.port));
    }
  for (auto& s : out) {
    if (live) apply_dcb_reply(query_dcb_ieee(s.netdev), s);
    else s.dcb_note = "DCB is read over netlink on a live node only";
    s.ecn_np_priorities = read_ecn_priorities(root, s.netdev, "roce_np", s.ecn_note);
    s.ecn_rp_priorities = read_ecn_priorities(root, s.netdev, "roce_rp", s.ecn_note);
    if (s.ecn_note.find("not readable as this user") != std::string::npos)
      notes.push_back(s.ecn_note + ", ECN not judged");
  }
  return out;
}

}  // namespace fabscope::probe
