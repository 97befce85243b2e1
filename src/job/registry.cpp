#include "job/registry.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace fabscope::job {

const std::vector<FindingInfo>& registry() {
  static const std::vector<FindingInfo> r = {
      {"job.straggler", Severity::Warn, "one rank is the one the others wait for in most collectives"},
      {"job.slow_link", Severity::Warn, "one rank-to-rank network connection takes much longer per step than the rest"},
      {"job.slow_path", Severity::Warn, "the cable or switch a job's slow connections share (job status --fabric)"},
      {"job.hang", Severity::Fail, "no rank of a communicator completed an operation for the hang time"},
      {"job.process_ended", Severity::Fail, "a rank's process ended while the other ranks of its communicator run"},
      {"job.ranks_missing", Severity::Info, "ranks of a communicator with no record in what was read"},
      {"job.source_error", Severity::Warn, "a node or server that was asked could not be read"},
      {"job.ras_missing", Severity::Fail, "NCCL's RAS: ranks or processes of a communicator are missing"},
      {"job.ras_mismatch", Severity::Warn, "NCCL's RAS: ranks of a communicator differ in their operation counts"},
      {"job.ras_error", Severity::Warn, "NCCL's RAS: asynchronous errors or unresponsive peers reported"},
  };
  return r;
}

Finding registered_finding(const std::string& id, Severity severity, std::string subject, std::string message,
                           std::string evidence, std::string remedy) {
  const auto& r = registry();
  if (std::none_of(r.begin(), r.end(), [&](const FindingInfo& f) { return id == f.id; }))
    throw Error("job: finding id '" + id + "' is not registered");
  return make_finding(id, severity, std::move(subject), std::move(message), std::move(evidence), std::move(remedy),
                      "docs/job.md");
}

}  // namespace fabscope::job
