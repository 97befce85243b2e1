#include "cluster/registry.hpp"

namespace fabscope::cluster {

const std::vector<FindingInfo>& registry() {
  static const std::vector<FindingInfo> r = finding_table("docs/checks.md", {
      {"cluster.node_missing", "cluster", Severity::Fail, "a node of the job never joined or left before the end"},
      {"cluster.version_mismatch", "cluster", Severity::Fail, "nodes run different fabscope versions"},
      {"cluster.node_fails_check", "cluster", Severity::Fail, "a node's own check reports failures"},
      {"cluster.rdma_missing", "cluster", Severity::Fail, "a node has no active RDMA port where the others have"},
      {"cluster.link_layer_differs", "cluster", Severity::Fail, "RDMA link layer (InfiniBand/Ethernet) differs"},
      {"cluster.active_ports_differs", "cluster", Severity::Warn, "number of active RDMA ports differs"},
      {"cluster.rate_differs", "cluster", Severity::Warn, "port rate differs between nodes"},
      {"cluster.mtu_differs", "cluster", Severity::Warn, "active MTU or netdev MTU differs between nodes"},
      {"cluster.gid_index_differs", "cluster", Severity::Warn, "RoCE v2 IPv4 GID index differs between nodes"},
      {"cluster.firmware_differs", "cluster", Severity::Warn, "HCA firmware differs between nodes"},
      {"cluster.version_differs", "cluster", Severity::Warn, "NCCL, CUDA, driver or kernel version differs"},
      {"cluster.gdr_differs", "cluster", Severity::Warn, "GPUDirect RDMA module loaded on some nodes only"},
      {"cluster.env_plan_differs", "cluster", Severity::Warn, "the planned NCCL environment differs"},
      {"cluster.slow_node", "cluster", Severity::Fail, "every pair of one node is slow"},
      {"cluster.slow_link", "cluster", Severity::Warn, "one pair is slow, both nodes are fine elsewhere"},
      {"cluster.slow_fabric_link", "cluster", Severity::Warn, "the slow pairs share one cable between switches"},
      {"cluster.slow_switch", "cluster", Severity::Warn, "the slow pairs share one switch, on all its cables"},
      {"cluster.pair_failed", "cluster", Severity::Fail, "a pairwise measurement did not complete"},
      {"cluster.pair_engine_fallback", "cluster", Severity::Warn, "a node's pairs ran over tcp, not RDMA"},
  });
  return r;
}

Finding registered_finding(const std::string& id, Severity severity, std::string subject, std::string message,
                           std::string evidence, std::string remedy) {
  return fabscope::registered_finding(registry(), id, severity, std::move(subject), std::move(message),
                                      std::move(evidence), std::move(remedy));
}

}  // namespace fabscope::cluster
