#pragma once
// NodeSummary: what one node sends to rank 0. Not the whole NodeInfo (a real node's probe is
// 50-300 KiB; 10,000 of them would not fit rank 0), but the attributes the cluster compares,
// computed on the node itself, and its own warn/fail findings. A few KiB per node.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cluster/ib_port.hpp"
#include "core/finding.hpp"
#include "core/json.hpp"
#include "core/node_info.hpp"
#include "ncclenv/plan.hpp"

namespace fabscope::cluster {

struct NodeSummary {
  static constexpr int kSchemaVersion = 1;
  int rank = 0;
  std::string name;              // hostname (the name Slurm and operators use)
  std::string fabscope_version;  // FABSCOPE_VERSION of the sender
  // Attribute key ("rdma.rate", "env.NCCL_IB_HCA") -> value; "" = unknown on that node.
  std::map<std::string, std::string> attributes;
  std::vector<Finding> findings;  // the node's own checks, warn and fail only (bounded)
  std::string pair_address;       // where peers reach this node's tcp pair engine ("" none)
  std::string rdma_address;       // where peers reach this node's rdma pair engine ("" none)
  std::string rdma_note;          // the RDMA device behind rdma_address, or why there is none
  std::string nccl_device;        // --engine nccl: the GPU and NCCL its pairs use ("" none)
  std::string nccl_note;          // --engine nccl: why there is no NCCL engine
  std::string error;              // the node could not probe itself: why
  std::vector<IbPortFact> ib_ports;  // InfiniBand ports with a LID (at most kMaxIbPorts)
  // RoCE: the switch port its first ACTIVE RoCE netdev is cabled to, from LLDP (a bond's first
  // slave with a neighbour); "" unknown. What `cluster` groups nodes by to locate slow pairs.
  std::string tor_switch, tor_port;
};

// A rank that never joined or was lost: its name (--nodes, else "rankN") and what rank 0 saw.
struct MissingNode {
  std::string name;
  std::string reason;
};

// Most findings one node sends; the rest are counted in a last synthetic note.
constexpr std::size_t kMaxFindingsPerNode = 64;

// Pure: the attributes of one node. plan may be null (not computed).
std::map<std::string, std::string> node_attributes(const NodeInfo& node, const ncclenv::EnvPlan* plan);

// Builds the summary a node sends (findings filtered to warn/fail and bounded).
NodeSummary summarize_node(int rank, const NodeInfo& node, const ncclenv::EnvPlan* plan,
                           const std::vector<Finding>& findings);

void to_json(json& j, const NodeSummary& s);
// Throws fabscope::Error naming the field on a malformed summary (it comes from the network).
NodeSummary summary_from_json(const json& j);

}  // namespace fabscope::cluster
