// fabscope.check and fabscope.doctor (docs/formats.md) -> NodeDoc; the findings[] reader every
// input with findings shares.
#include "core/error.hpp"
#include "core/fields.hpp"
#include "report/load.hpp"

namespace fabscope::report {

std::vector<Finding> findings_from(const core::Fields& parent, const std::string& key) {
  std::vector<Finding> out;
  for (const auto& f : parent.array(key)) {
    Finding x;
    x.id = f.str("id");
    std::string sev = f.str("severity");
    try {
      x.severity = severity_from_string(sev);
    } catch (const Error&) {
      f.fail("severity", "expected ok, info, warn or fail, got \"" + sev + "\"");
    }
    x.subject = f.str_or("subject", "");
    x.message = f.str_or("message", "");
    x.evidence = f.str_or("evidence", "");
    x.remedy = f.str_or("remedy", "");
    x.docs = f.str_or("docs", "");
    out.push_back(std::move(x));
  }
  return out;
}

NodeDoc node_from_json(const std::string& file, const json& doc, bool doctor) {
  core::Fields top(file, doc);
  NodeDoc n;
  n.hostname = top.str_or("hostname", "");
  n.findings = findings_from(top, "findings");
  core::Fields s = top.object("summary");
  n.fail = static_cast<int>(s.integer("fail"));
  n.warn = static_cast<int>(s.integer("warn"));
  n.info = static_cast<int>(s.integer("info"));
  n.worst = s.str("worst");
  if (n.worst != "ok" && n.worst != "info" && n.worst != "warn" && n.worst != "fail")
    s.fail("worst", "expected ok, info, warn or fail, got \"" + n.worst + "\"");
  n.probe_notes = top.strings("probe_notes");
  if (doctor) {
    n.verdict = top.str("verdict");
    n.transport = top.str_or("transport", "");
    if (auto g = top.opt_int("gpus")) n.gpus = static_cast<int>(*g);
    if (auto r = top.opt_int("rdma_devices")) n.rdma_devices = static_cast<int>(*r);
    n.next_steps = top.strings("next_steps");
  }
  return n;
}

}  // namespace fabscope::report
