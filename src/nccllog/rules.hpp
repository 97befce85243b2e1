#pragma once
// The reasoning tables beside the signature catalogue (signatures.hpp): which failures are
// consequences of another one (consequence rules), what the context of a cause adds to its remedy
// (cause rules), which WARN lines report a fallback whose error traces are no failure (fallback
// rules), what each phase of communicator setup means (phase table), and which network
// interfaces are suspicious choices for NCCL's sockets. Each table entry has its own tests
// (tests/unit/nccllog/rules_test.cpp) and its own paragraph in docs/nccllog.md.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nccllog/summary.hpp"

namespace fabscope::nccllog {

// A failure line that follows from another failure rather than causing one: a peer that closed
// its sockets, a proxy that could not serve a peer, a framework quoting NCCL's return code.
struct ConsequenceRule {
  const char* id;         // "peer_closed"
  const char* signature;  // the failure's catalog id ("" = any failure)
  const char* contains;   // text the line contains ("" = no condition)
  const char* follows;    // what it follows from, for the evidence
};
std::span<const ConsequenceRule> consequence_rules();
// The consequence rule that matches a failure, or nullptr when the failure is a cause.
const ConsequenceRule* match_consequence(const Failure& f);

// What the surroundings of a cause add to it: the interface bootstrap ran on, a rail-optimised
// fabric behind a QP timeout. `applies` and `note` read only the summary and the failure.
struct CauseContext {
  const LogSummary& summary;
  const Failure& failure;
  const ProcessInfo* process;  // the failing process, nullptr when the line has no prefix
};
struct CauseRule {
  const char* id;  // "bootstrap_interface"
  bool (*applies)(const CauseContext&);
  std::string (*note)(const CauseContext&);    // added to the verdict: what the context shows
  std::string (*remedy)(const CauseContext&);  // added before the signature's own remedy
};
std::span<const CauseRule> cause_rules();

// A WARN that reports a fallback, not a failure: NCCL gave up an optional feature (CollNet) and
// runs without it. The ncclResult_t its setup returned is printed on the way up the stack
// ("init.cc:670 -> 2") by processes that log no WARN of their own; those traces are the
// fallback's, not a failure. `note` goes into the verdict of a log without failures.
struct FallbackRule {
  const char* id;           // "collnet_to_p2p"
  const char* signature;    // the catalog id of the fallback's WARN
  long result;              // the ncclResult_t its traces carry (-1 = it explains no trace)
  const char* trace_files;  // the files of those traces, space-separated ("transport.cc init.cc")
  const char* note;         // "CollNet could not be set up: ..."
};
std::span<const FallbackRule> fallback_rules();
// The fallback rules whose WARN the log has, in table order.
std::vector<const FallbackRule*> fallbacks_in(const LogSummary& s);
// The fallback rule of the log that explains a process's first error trace, or nullptr.
const FallbackRule* trace_fallback(const LogSummary& s, const ProcessInfo& p);

struct PhaseInfo {
  Phase phase;
  const char* name;    // "bootstrap (TCP rendezvous)"
  const char* remedy;  // what fits a failure in this phase
};
const PhaseInfo& phase_info(Phase p);
// Whether the remedy of the phase a failure happened in belongs to its first-cause remedy. Not
// for the catalog entries whose cause is how the job was launched or called (a rank outside the
// communicator, two ranks on one GPU, collectives that differ between ranks, NCCL versions
// that differ): the phase is only where NCCL noticed, and its network advice would mislead.
bool phase_remedy_applies(std::string_view id);

// The phase a failure line proves by itself (logs quoted without their INFO lines): a QP, a
// memory registration, an SHM segment or a proxy operation is a connection; a completion error or
// a size mismatch needs data moving, so a collective; a duplicate GPU is found in topology;
// enqueue.cc launches a collective; transport* code connects.
// nullopt when the line says nothing about its phase.
std::optional<Phase> phase_hint(std::string_view id, std::string_view source);

// Why an interface from a "Using [N]name:addr<i>" list or the bootstrap line is a suspicious
// choice for NCCL's sockets ("container veth", "IPv6 link-local address"); nullopt when it is not.
std::optional<std::string> suspicious_interface(std::string_view token);
// "veth12:fe80::1%veth12<0>" -> "veth12".
std::string interface_name(std::string_view token);

}  // namespace fabscope::nccllog
