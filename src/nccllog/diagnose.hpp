#pragma once
// Judging a LogSummary: a one-line verdict and findings (ids "nccllog.*", documented in
// docs/nccllog.md). Pure: no I/O. The judgement is made of tables: the signature catalogue
// (signatures.hpp), the consequence and cause rules (rules.hpp) and the summary rules below.
#include <cstddef>
#include <optional>
#include <span>
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

// Cause and consequence over the failures of a job (LogSummary::failures).
struct Causality {
  std::vector<std::size_t> order;          // failure indices, earliest first
  std::vector<long> follows;               // per failure: the failure it follows from, -1 = a cause
  std::vector<const char*> rule;           // per failure: the consequence rule id, nullptr = a cause
  std::optional<std::size_t> first_cause;  // the earliest cause (the earliest failure when no cause)
  bool only_consequences = false;          // no cause in the logs: first_cause is a consequence
  // The first failure is a framework's collective timeout with no NCCL error before it: a hang
  // to be explained (a rank that never reached the collective, collectives issued from two
  // threads on one communicator, ranks out of step), and what NCCL printed after the abort
  // follows from it. first_cause is that timeout.
  bool hang = false;
  long consequences = 0;                   // later failures that follow from the first cause
  long causes = 0;                         // failures that are causes (the first one included)
  std::vector<std::string> notes;          // what the cause rules add ("bootstrap interface ib0:...")
  std::vector<std::string> remedies;       // the cause rules' remedies, then the phase's (not for usage errors)
  std::vector<std::string> rules_applied;  // cause rule ids
};

// Orders the failures (by timestamp when every failure has one, else in reading order), marks
// consequences by the consequence rules, links each to the cause before it on its own process or
// else to the first cause, and applies the cause rules to the first cause.
Causality reason(const LogSummary& s);
void to_json(json& j, const Causality& c);

// One rule that judges a whole summary; it may add findings with the id it is named by.
struct RuleInput {
  const LogSummary& s;
  const Totals& t;
  const Causality& c;
};
struct SummaryRule {
  const char* id;  // the finding id it produces ("nccllog.gdrdma_absent")
  void (*apply)(const RuleInput&, std::vector<Finding>&);
};
std::span<const SummaryRule> summary_rules();

struct Diagnosis {
  std::string verdict;  // "RDMA in use on all 32 network connections, GPUDirect RDMA on 32/32"
  std::vector<Finding> findings;  // the first cause first, then most severe first
  Causality causality;
};

Diagnosis diagnose(const LogSummary& s);

// The finding id of a catalog signature: "nccllog." + id.
std::string finding_id(const std::string& signature_id);

}  // namespace fabscope::nccllog
