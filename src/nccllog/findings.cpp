#include "nccllog/findings.hpp"

#include "nccllog/signatures.hpp"

namespace fabscope::nccllog {

namespace {

// The ids diagnose() reports beside the catalog's, with the highest severity each is reported
// with. A test keeps these in step with summary_rules().
std::vector<FindingInfo> nccllog_judged_ids() {
  return {
      {"nccllog.net_socket_with_rdma_nics", "nccllog", Severity::Fail,
       "network traffic on TCP sockets although NET/IB listed RDMA devices"},
      {"nccllog.net_socket_no_rdma", "nccllog", Severity::Warn, "network traffic on TCP sockets: no RDMA device"},
      {"nccllog.gdrdma_absent", "nccllog", Severity::Warn, "RDMA network connections without GPUDirect RDMA"},
      {"nccllog.gdr_disabled", "nccllog", Severity::Warn, "NCCL reported GPUDirect RDMA off"},
      {"nccllog.ib_init_failed", "nccllog", Severity::Warn, "NCCL could not initialise its IB network plugin"},
      {"nccllog.ib_no_device", "nccllog", Severity::Warn, "NET/IB found no RDMA device"},
      {"nccllog.suspicious_interface", "nccllog", Severity::Warn, "NCCL's sockets use a rarely reachable interface"},
      {"nccllog.init_incomplete", "nccllog", Severity::Fail, "ranks never reached Init COMPLETE"},
      {"nccllog.nccl_call_failed", "nccllog", Severity::Fail, "NCCL calls returned an error"},
      {"nccllog.ranks_missing", "nccllog", Severity::Info, "the log shows fewer ranks than the communicator has"},
      {"nccllog.version_mismatch", "nccllog", Severity::Fail, "more than one NCCL version in the logs"},
      {"nccllog.unknown_warning", "nccllog", Severity::Warn, "NCCL WARN lines not in the catalog"},
      {"nccllog.no_nccl_lines", "nccllog", Severity::Warn, "no NCCL log lines in the input"},
      {"nccllog.lines_cut", "nccllog", Severity::Info, "over-long lines were cut"},
      {"nccllog.entities_dropped", "nccllog", Severity::Info, "more processes, ranks or failures than kept"},
      {"nccllog.first_cause", "nccllog", Severity::Fail, "the first cause of a failed job"},
      {"nccllog.no_transport_lines", "nccllog", Severity::Info, "no Channel lines: transports cannot be judged"},
  };
}

}  // namespace

const std::vector<FindingInfo>& finding_infos() {
  static const std::vector<FindingInfo> r = [] {
    std::vector<FindingInfo> rows;
    for (const Signature& s : signatures())
      rows.push_back({"nccllog." + std::string(s.id), "nccllog", s.severity, s.title, {}});
    for (auto& f : nccllog_judged_ids())
      if (!find_finding(rows, f.id)) rows.push_back(std::move(f));
    return finding_table("docs/nccllog.md", std::move(rows));
  }();
  return r;
}

}  // namespace fabscope::nccllog
