#pragma once
// The one catalog of known NCCL WARN/error lines: what they mean and what fixes them.
// Every id is documented in docs/nccllog.md (a test keeps the two in step).
#include <optional>
#include <span>
#include <string_view>

#include "core/finding.hpp"

namespace fabscope::nccllog {

enum class MatchOn {
  Warn,       // "NCCL WARN" lines
  Info,       // "NCCL INFO" lines; must have a prefix, so the common path stays cheap
  Framework,  // lines from PyTorch & co. that quote an NCCL error
};

struct Signature {
  const char* id;        // stable, "ib_wc_retry_exceeded"; the finding id is "nccllog." + id
  Severity severity;
  MatchOn on;
  const char* prefix;    // the message starts with this ("" = anywhere)
  const char* contains;  // and contains this ("" = no condition)
  const char* contains2; // and this too ("" = no condition)
  int wc_status;         // for "Got completion" lines: the ibv_wc_status code (-1 = n/a)
  const char* title;     // one line: what happened
  const char* cause;     // why it usually happens
  const char* remedy;    // what to do
};

std::span<const Signature> signatures();

// The catalog entry for a message, or nullptr. For "Got completion ... status=N" lines the
// entry of that ibv_wc_status code wins, then the generic completion-error entry.
const Signature* match_signature(MatchOn on, std::string_view message);

// The ibv_wc_status code in an NET/IB completion-error message, in the formats NCCL used
// over time: "with error 12, opcode", "with status=12 opcode", "status=transport retry
// counter exceeded(12)". nullopt when absent or unreadable.
std::optional<int> completion_status(std::string_view message);

// The catalog entry for an ibv_wc_status code (its own entry, else the generic completion-error
// entry): what `fabscope rdma` reports for a failed work request. nullptr for 0 (success).
const Signature* completion_signature(int wc_status);

// NCCL's name of an ncclResult_t code ("ncclSystemError"), "?" when unknown.
const char* nccl_result_name(long code);

}  // namespace fabscope::nccllog
