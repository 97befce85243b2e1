#include "cluster/consistency.hpp"

#include <algorithm>
#include <set>

#include "cluster/registry.hpp"

namespace fabscope::cluster {

const std::vector<AttributeSpec>& attribute_specs() {
  static const std::vector<AttributeSpec> s = {
      {"rdma.active_ports", "active RDMA ports", "cluster.active_ports_differs"},
      {"rdma.link_layer", "link layer", "cluster.link_layer_differs"},
      {"rdma.rate", "port rate", "cluster.rate_differs"},
      {"rdma.active_mtu", "active MTU", "cluster.mtu_differs"},
      {"net.rdma_mtu", "netdev MTU", "cluster.mtu_differs"},
      {"roce.gid_index", "RoCE v2 GID index", "cluster.gid_index_differs"},
      {"rdma.firmware", "HCA firmware", "cluster.firmware_differs"},
      {"versions.nccl", "NCCL version", "cluster.version_differs"},
      {"versions.cuda_driver", "CUDA driver", "cluster.version_differs"},
      {"versions.nvidia_driver", "NVIDIA driver", "cluster.version_differs"},
      {"kernel.release", "kernel", "cluster.version_differs"},
      {"gdr.module", "GPUDirect RDMA module", "cluster.gdr_differs"},
  };
  return s;
}

std::string name_list(const std::vector<std::string>& names, std::size_t limit) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < limit; ++i) {
    if (i) out += ", ";
    out += names[i];
  }
  if (names.size() > limit) out += " and " + std::to_string(names.size() - limit) + " more";
  return out;
}

namespace {

Severity severity_of(const std::string& id) {
  for (const auto& c : registry())
    if (c.id == id) return c.severity;
  return Severity::Warn;
}

std::string shown(const std::string& v) { return v.empty() ? "(none)" : v; }

std::string remedy_for(const AttributeView& a, const std::vector<std::string>& odd_names) {
  const std::string nodes = name_list(odd_names);
  const std::string ref = shown(a.reference);
  if (a.finding_id == "cluster.rate_differs")
    return "on " + nodes + ": reseat or replace the cable/transceiver, check the switch port speed "
           "(ibstat / ethtool) until the ports run at " + ref;
  if (a.finding_id == "cluster.mtu_differs")
    return "on " + nodes + ": set the " + a.title + " to " + ref + " (ip link set DEV mtu N; the switch too)";
  if (a.finding_id == "cluster.gid_index_differs")
    return "on " + nodes + ": give the RoCE netdev its IPv4 address the way the others do, so the "
           "IPv4 RoCE v2 GID sits at index " + ref + " (one NCCL_IB_GID_INDEX serves the job)";
  if (a.finding_id == "cluster.firmware_differs")
    return "on " + nodes + ": flash the HCA firmware of the other nodes (" + ref + ", mlxfwmanager)";
  if (a.finding_id == "cluster.version_differs")
    return "on " + nodes + ": install " + a.title + " " + ref + " like the other nodes";
  if (a.finding_id == "cluster.gdr_differs")
    return "on " + nodes + ": make the module state match the others (" + ref +
           "; modprobe nvidia_peermem for GPUDirect RDMA)";
  if (a.finding_id == "cluster.link_layer_differs")
    return "on " + nodes + ": these nodes sit on another fabric (" + ref +
           " elsewhere); NCCL cannot connect InfiniBand to RoCE: move them to their own partition";
  if (a.finding_id == "cluster.active_ports_differs")
    return "on " + nodes + ": bring up the missing ports (fabscope check on the node names them)";
  if (a.finding_id == "cluster.env_plan_differs")
    return "on " + nodes + ": " + a.key.substr(4) + " planned " + ref +
           " elsewhere; name devices alike on every node or set the variable per node (fabscope env)";
  return "on " + nodes + ": make " + a.title + " match the other nodes (" + ref + ")";
}

}  // namespace

Consistency judge_consistency(const std::vector<NodeSummary>& nodes) {
  Consistency c;
  for (const auto& n : nodes) c.nodes.push_back(n.name.empty() ? "rank" + std::to_string(n.rank) : n.name);

  // The keys to compare: the fixed ones, then every env.* key any node planned.
  std::vector<AttributeView> views;
  for (const auto& s : attribute_specs()) views.push_back({s.key, s.title, s.finding_id});
  std::set<std::string> env_keys;
  for (const auto& n : nodes)
    if (n.error.empty())
      for (const auto& [k, v] : n.attributes)
        if (k.rfind("env.", 0) == 0) env_keys.insert(k);
  for (const auto& k : env_keys) views.push_back({k, k.substr(4), "cluster.env_plan_differs"});

  for (auto& a : views) {
    std::map<std::string, int> count;
    for (const auto& n : nodes) {
      std::string v;
      if (n.error.empty()) {
        auto it = n.attributes.find(a.key);
        if (it != n.attributes.end()) v = it->second;
        // An env variable one node plans and another does not: the other's value is "(unset)".
        if (a.key.rfind("env.", 0) == 0 && it == n.attributes.end()) v = "(unset)";
      }
      a.values.push_back(v);
      if (!v.empty()) ++count[v];
    }
    int best = 0;
    for (const auto& [v, k] : count)
      if (k > best) best = k, a.reference = v;
    a.reference_count = best;
    int holders = 0;
    for (const auto& [v, k] : count) holders += (k == best);
    a.tie = holders > 1;
    for (std::size_t i = 0; i < a.values.size(); ++i)
      if (!a.values[i].empty() && a.values[i] != a.reference) a.odd.push_back(i);
  }

  // rdma.active_ports = 0 on a node where the majority has ports: that node cannot do RDMA
  // (NCCL falls back to sockets there, and every ring through it runs at TCP speed).
  for (auto& a : views) {
    if (a.key != "rdma.active_ports" || a.reference.empty() || a.reference == "0") continue;
    std::vector<std::string> names;
    std::vector<std::size_t> rest;
    for (std::size_t i : a.odd) {
      if (a.values[i] == "0") names.push_back(c.nodes[i]);
      else rest.push_back(i);
    }
    if (!names.empty())
      c.findings.push_back(registered_finding(
          "cluster.rdma_missing", Severity::Fail, name_list(names, 3),
          std::to_string(names.size()) + " node(s) without any active RDMA port; the others have " + a.reference,
          "active RDMA ports=0 on " + name_list(names) + "; " + a.reference + " on " +
              std::to_string(a.reference_count) + " node(s)",
          "on " + name_list(names) +
              ": load the RDMA driver (rxe: rdma link add; mlx5: modprobe mlx5_ib), bring the ports up; "
              "fabscope check on the node tells why"));
    a.odd = rest;  // the remaining ones differ in count, not in presence
  }

  // One finding per attribute with odd nodes (several attributes may share an id: the subject
  // tells them apart).
  for (const auto& a : views) {
    if (a.odd.empty()) continue;
    std::vector<std::string> odd_names, evidence_parts;
    std::map<std::string, std::vector<std::string>> by_value;
    for (std::size_t i : a.odd) {
      odd_names.push_back(c.nodes[i]);
      by_value[a.values[i]].push_back(c.nodes[i]);
    }
    for (const auto& [v, ns] : by_value) evidence_parts.push_back(v + " on " + name_list(ns, 4));
    std::string evidence = "reference " + shown(a.reference) + " on " + std::to_string(a.reference_count) +
                           " node(s); ";
    for (std::size_t i = 0; i < evidence_parts.size() && i < 6; ++i) evidence += (i ? "; " : "") + evidence_parts[i];
    if (evidence_parts.size() > 6) evidence += "; " + std::to_string(evidence_parts.size() - 6) + " more value(s)";
    std::string message = a.title + " differs on " + std::to_string(a.odd.size()) + " of " +
                          std::to_string(nodes.size()) + " nodes";
    if (a.tie) message += " (no majority: the reference is one of the tied values)";
    c.findings.push_back(registered_finding(a.finding_id, severity_of(a.finding_id), a.key, message, evidence,
                                            remedy_for(a, odd_names)));
  }
  c.attributes = std::move(views);
  return c;
}

std::vector<std::string> failing_ids(const NodeSummary& node) {
  std::set<std::string> ids;
  for (const auto& f : node.findings)
    if (f.severity == Severity::Fail) ids.insert(f.id + (f.subject.empty() ? "" : "@" + f.subject));
  return {ids.begin(), ids.end()};
}

std::vector<Finding> judge_nodes(const std::vector<NodeSummary>& nodes, const std::vector<MissingNode>& missing,
                                 const std::string& reference_version) {
  std::vector<Finding> out;
  if (!missing.empty()) {
    std::vector<std::string> names, why;
    for (const auto& m : missing) {
      names.push_back(m.name);
      why.push_back(m.name + (m.reason.empty() ? "" : " (" + m.reason + ")"));
    }
    out.push_back(registered_finding(
        "cluster.node_missing", Severity::Fail, name_list(names, 3),
        std::to_string(missing.size()) + " node(s) never joined or left before the end",
        "missing: " + name_list(why, 32),
        "on " + name_list(names) + ": is fabscope installed and did the launcher start it? "
        "Is the node reachable from rank 0 (MASTER_ADDR:MASTER_PORT)? Drain it until it answers"));
  }
  for (const auto& n : nodes) {
    const std::string name = n.name.empty() ? "rank" + std::to_string(n.rank) : n.name;
    if (!n.fabscope_version.empty() && n.fabscope_version != reference_version)
      out.push_back(registered_finding("cluster.version_mismatch", Severity::Fail, name,
                                       "fabscope " + n.fabscope_version + " on " + name + ", " + reference_version +
                                           " on rank 0: their results are not comparable",
                                       "fabscope_version=" + n.fabscope_version + " reference=" + reference_version,
                                       "install fabscope " + reference_version + " on " + name));
    if (!n.error.empty()) {
      out.push_back(registered_finding("cluster.node_fails_check", Severity::Fail, name,
                                       name + " could not describe itself", n.error,
                                       "run fabscope doctor on " + name));
      continue;
    }
    auto ids = failing_ids(n);
    if (!ids.empty()) {
      std::string ev;
      for (std::size_t i = 0; i < ids.size() && i < 8; ++i) ev += (i ? " " : "") + ids[i];
      if (ids.size() > 8) ev += " and " + std::to_string(ids.size() - 8) + " more";
      out.push_back(registered_finding("cluster.node_fails_check", Severity::Fail, name,
                                       std::to_string(ids.size()) + " failing check(s) on " + name, ev,
                                       "fabscope check on " + name + " gives each remedy; drain it until they pass"));
    }
  }
  return out;
}

}  // namespace fabscope::cluster
