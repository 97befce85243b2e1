#pragma once
// `fabscope doctor`: what the node has, in plain words, a verdict over the findings (checks and,
// where built, NCCL environment lint) and the next steps. Pure: NodeInfo and findings in, text out.
#include <string>
#include <vector>

#include "core/finding.hpp"
#include "core/json.hpp"
#include "core/node_info.hpp"

namespace fabscope::checks {

constexpr int kDoctorSchemaVersion = 1;

struct DoctorReport {
  std::string verdict;                    // "healthy" | "degraded" | "broken"
  std::string transport;                  // multi-node NCCL traffic: "rdma" | "sockets" | "none" (no GPU)
  std::vector<std::string> description;   // sentences: GPUs and RDMA, versions
  std::vector<Finding> findings;          // most severe first
  std::vector<std::string> next_steps;    // concrete actions, most severe first
};

// findings: checks::run(node) plus any other findings (NCCL environment lint).
DoctorReport diagnose_node(const NodeInfo& node, std::vector<Finding> findings);

std::string render_doctor_text(const NodeInfo& node, const DoctorReport& report, std::size_t width = 100);

// {"schema":"fabscope.doctor","schema_version":1,"hostname","verdict","transport","description",
//  "findings","summary","next_steps","probe_notes","exit_code"}
json doctor_json(const NodeInfo& node, const DoctorReport& report);

}  // namespace fabscope::checks
