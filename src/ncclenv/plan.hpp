#pragma once
// Planning: NodeInfo (+ the operator's intent) -> EnvPlan, the NCCL variables this node
// should run with, each with the reason and the evidence read. Pure: no I/O. The one fact the
// probe does not carry (which interfaces hold the default route) is collected beforehand by
// default_route_interfaces() in collect.hpp and passed in the options.
#include <optional>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "core/node_info.hpp"

namespace fabscope::ncclenv {

struct PlanOptions {
  std::string master_addr;                       // --master-addr: IPv4 of the rank-0 node, "" unknown
  std::optional<int> roce_dscp;                  // --roce-dscp N (0..63): NCCL_IB_TC = N << 2
  std::optional<int> ib_sl;                      // --ib-sl N (0..15): NCCL_IB_SL
  std::vector<std::string> default_route_ifaces;  // from proc/net/route; empty when unknown
};

struct PlannedVar {
  std::string name;      // "NCCL_IB_HCA"
  std::string value;     // "=mlx5_0:1,mlx5_1:1"
  std::string reason;    // why this value, one or two sentences
  std::string evidence;  // the values read: ports, states, GID entries, interfaces
};

struct EnvPlan {
  static constexpr int kSchemaVersion = 1;
  std::string hostname;
  bool rdma = false;       // at least one RDMA port was selected for NCCL_IB_HCA
  bool any_rdma_device = false;  // sys/class/infiniband lists a device (docker: --device /dev/infiniband)
  int gpus = 0;            // GPUs the probe saw
  std::vector<PlannedVar> vars;
  std::vector<std::string> warnings;  // what the operator must look at; never silently guessed
  std::vector<std::string> notes;     // what was considered and left out, and why

  const PlannedVar* find(const std::string& name) const;
};

EnvPlan plan(const NodeInfo& node, const PlanOptions& opts);

// "0000:0000:0000:0000:0000:ffff:0a09:0001" -> "10.9.0.1"; "" when not IPv4-mapped.
std::string gid_ipv4(const std::string& gid);

// Parses "a.b.c.d" (no prefix) into a host-order value.
std::optional<std::uint32_t> parse_ipv4(const std::string& text);

// True when "a.b.c.d/len" contains addr.
bool subnet_contains(const std::string& cidr, std::uint32_t addr);

void to_json(json& j, const PlannedVar& v);
// Carries "schema": "fabscope.env" and "schema_version".
void to_json(json& j, const EnvPlan& p);

}  // namespace fabscope::ncclenv
