#include "checks/verbs.hpp"

#include <map>
#include <sstream>
#include <string>

#include "checks/families.hpp"
#include "core/strings.hpp"

namespace fabscope::checks {

namespace {

// sysfs gid_attrs/types says "IB/RoCE v1" for both IB and RoCE v1 entries and has no types
// directory at all on InfiniBand ports; verbs names the three types apart.
bool same_gid_type(const std::string& sysfs, const std::string& verbs) {
  if (sysfs == verbs) return true;
  if (sysfs == "IB/RoCE v1") return verbs == "IB" || verbs == "RoCE v1";
  if (sysfs.empty()) return verbs == "IB";
  return false;
}

template <typename T>
std::string text(const std::optional<T>& v) {
  if (!v) return "unknown";
  std::ostringstream os;
  os << *v;
  return os.str();
}

void compare(std::vector<std::string>& diffs, const char* field, const std::string& sysfs,
             const std::string& verbs) {
  if (sysfs != verbs) diffs.push_back(std::string(field) + ": sysfs='" + sysfs + "' verbs='" + verbs + "'");
}

std::vector<std::string> port_diffs(const RdmaPort& s, const VerbsPort& v) {
  std::vector<std::string> d;
  // Unknown on the sysfs side (unreadable attribute) is not a disagreement: probe notes say why.
  if (!s.state.empty()) compare(d, "state", s.state, v.state);
  if (!s.phys_state.empty()) compare(d, "phys_state", s.phys_state, v.phys_state);
  if (!s.link_layer.empty()) compare(d, "link_layer", s.link_layer, v.link_layer);
  if (s.active_mtu && v.active_mtu && *s.active_mtu != *v.active_mtu)
    compare(d, "active_mtu", text(s.active_mtu), text(v.active_mtu));
  if (s.rate_gbps && v.rate_gbps && *s.rate_gbps != *v.rate_gbps)
    compare(d, "rate_gbps", text(s.rate_gbps), text(v.rate_gbps));
  std::map<int, const GidEntry*> sg;
  std::map<int, const VerbsGid*> vg;
  for (const auto& g : s.gids) sg[g.index] = &g;
  for (const auto& g : v.gids) vg[g.index] = &g;
  for (const auto& [i, g] : sg) {
    auto it = vg.find(i);
    std::string field = "gid[" + std::to_string(i) + "]";
    if (it == vg.end()) {
      compare(d, field.c_str(), g->gid, "absent");
      continue;
    }
    const VerbsGid& w = *it->second;
    if (g->gid != w.gid) compare(d, field.c_str(), g->gid, w.gid);
    if (!w.type.empty() && !same_gid_type(g->type, w.type))
      compare(d, (field + ".type").c_str(), g->type, w.type);
    if (!g->netdev.empty() && !w.netdev.empty() && g->netdev != w.netdev)
      compare(d, (field + ".netdev").c_str(), g->netdev, w.netdev);
  }
  for (const auto& [i, w] : vg)
    if (!sg.count(i)) compare(d, ("gid[" + std::to_string(i) + "]").c_str(), "absent", w->gid);
  return d;
}

}  // namespace

std::vector<Finding> check_verbs(const NodeInfo& node) {
  std::vector<Finding> out;
  if (!node.verbs || node.rdma_devices.empty()) return out;
  const VerbsInfo& verbs = *node.verbs;
  if (!verbs.available) {
    // A build without libibverbs-dev cannot tell; a node without libibverbs.so.1 can: NCCL
    // dlopens the same library for its IB/RoCE transport and falls back to TCP sockets without it.
    if (verbs.status.rfind("not built in", 0) == 0) return out;
    out.push_back(
        make_finding("verbs.library_missing", Severity::Warn, "node",
                     "sysfs lists RDMA devices but libibverbs cannot be loaded, so NCCL cannot use them",
                     verbs.status, "install libibverbs1 and ibverbs-providers (rdma-core)"));
    return out;
  }
  for (const auto& dev : node.rdma_devices) {
    const VerbsDevice* v = verbs.find(dev.name);
    if (!v || !v->error.empty()) {
      out.push_back(make_finding(
          "verbs.device_not_visible", Severity::Warn, dev.name,
          v ? "libibverbs lists " + dev.name + " but cannot query it"
            : "sysfs lists " + dev.name + " but libibverbs does not: verbs applications (NCCL) cannot use it",
          v ? v->error : "ibv_get_device_list: " + verbs.status,
          "check that the provider for this driver is installed (ibverbs-providers; a file for it in "
          "/etc/libibverbs.d) and that /dev/infiniband/uverbs* exists and is readable (modprobe ib_uverbs)"));
      continue;
    }
    std::vector<std::string> dev_diffs;
    if (!dev.node_guid.empty() && !v->node_guid.empty() && dev.node_guid != v->node_guid)
      compare(dev_diffs, "node_guid", dev.node_guid, v->node_guid);
    for (const auto& p : dev.ports) {
      const VerbsPort* vp = nullptr;
      for (const auto& q : v->ports)
        if (q.port == p.port) vp = &q;
      std::vector<std::string> diffs = dev_diffs;
      if (!vp) {
        diffs.push_back("port: present in sysfs, absent from ibv_query_port");
      } else {
        auto more = port_diffs(p, *vp);
        diffs.insert(diffs.end(), more.begin(), more.end());
      }
      if (diffs.empty()) continue;
      std::string subject = dev.name + ":" + std::to_string(p.port);
      out.push_back(
          make_finding("verbs.sysfs_mismatch", Severity::Warn, subject,
                       "sysfs and libibverbs disagree about " + subject, core::join(diffs, "; "),
                       "probe again: a port that changed state between the two reads explains one "
                       "disagreement; a lasting one means the driver and its verbs provider disagree "
                       "(compare ibv_devinfo -v -d " +
                           dev.name + " with /sys/class/infiniband/" + dev.name +
                           "), update rdma-core to the driver's version"));
    }
  }
  return out;
}

}  // namespace fabscope::checks
