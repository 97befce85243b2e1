#include "job/registry.hpp"

namespace fabscope::job {

const std::vector<FindingInfo>& registry() {
  static const std::vector<FindingInfo> r = finding_table("docs/job.md", {
      {"job.straggler", "job", Severity::Warn, "one rank is the one the others wait for in most collectives"},
      {"job.slow_link", "job", Severity::Warn, "one rank-to-rank network connection takes much longer per step than the rest"},
      {"job.slow_path", "job", Severity::Warn, "the cable or switch a job's slow connections share (job status --fabric)"},
      {"job.hang", "job", Severity::Fail, "no rank of a communicator completed an operation for the hang time"},
      {"job.process_ended", "job", Severity::Fail, "a rank's process ended while the other ranks of its communicator run"},
      {"job.process_stopped", "job", Severity::Fail, "a rank's process is stopped (a signal or a debugger) while the others run"},
      {"job.suspended", "job", Severity::Info, "every live rank of a communicator is stopped: the job was suspended as a whole"},
      {"job.ranks_missing", "job", Severity::Info, "ranks of a communicator with no record in what was read"},
      {"job.source_error", "job", Severity::Warn, "a node or server that was asked could not be read"},
      {"job.ras_missing", "job", Severity::Fail, "NCCL's RAS: ranks or processes of a communicator are missing"},
      {"job.ras_mismatch", "job", Severity::Warn, "NCCL's RAS: ranks of a communicator differ in their operation counts"},
      {"job.ras_error", "job", Severity::Warn, "NCCL's RAS: asynchronous errors or unresponsive peers reported"},
  });
  return r;
}

Finding registered_finding(const std::string& id, Severity severity, std::string subject, std::string message,
                           std::string evidence, std::string remedy) {
  return fabscope::registered_finding(registry(), id, severity, std::move(subject), std::move(message),
                                      std::move(evidence), std::move(remedy));
}

}  // namespace fabscope::job
