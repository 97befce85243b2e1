#pragma once
// Judging a LogSummary: a one-line verdict and findings (ids "nccllog.*", documented in
// docs/nccllog.md). Pure: no I/O.
#include <string>
#include <vector>

#include "core/finding.hpp"
#include "nccllog/summary.hpp"

namespace fabscope::nccllog {

struct Totals {
  long net = 0, rdma = 0, gdr = 0, socket = 0, local = 0;
  long ranks = 0, ranks_complete = 0, ranks_started = 0;
};
Totals totals(const LogSummary& s);

struct Diagnosis {
  std::string verdict;  // "RDMA in use on all 32 network connections, GPUDirect RDMA on 32/32"
  std::vector<Finding> findings;  // most severe first
};

Diagnosis diagnose(const LogSummary& s);

// The finding id of a catalog signature: "nccllog." + id.
std::string finding_id(const std::string& signature_id);

}  // namespace fabscope::nccllog
