// fabscope.check and fabscope.doctor (docs/formats.md) -> NodeDoc.
#include "core/error.hpp"
#include "core/fields.hpp"
#include "report/load.hpp"

namespace fabscope::report {

NodeDoc node_from_json(const std::string& file, const json& doc, bool doctor) {
  core::Fields top(file, doc);
  NodeDoc n;
  n.hostname = top.str_or("hostname", "");
  n.findings = core::findings_from(top, "findings");
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
