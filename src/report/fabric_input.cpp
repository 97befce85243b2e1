// fabscope.fabric (docs/formats.md) -> FabricDoc. The subnet is read by the fabric library's own
// reader (subnet_from_json), which checks every index the picture relies on (nodes, ports, both
// ends of each link); its messages name the field and get the file put in front here. The
// `findings` and `summary` that `fabric --json` adds are read like those of fabscope.check.
#include "core/error.hpp"
#include "core/fields.hpp"
#include "report/load.hpp"

namespace fabscope::report {

FabricDoc fabric_from_json(const std::string& file, const json& doc) {
  FabricDoc f;
  try {
    f.subnet = fabric::subnet_from_json(doc);
  } catch (const Error& e) {
    throw Error(file + ": " + e.what());
  }
  core::Fields top(file, doc);
  if (top.has("findings")) {
    f.judged = true;
    f.findings = core::findings_from(top, "findings");
    core::Fields s = top.object("summary");
    f.fail = static_cast<int>(s.integer("fail"));
    f.warn = static_cast<int>(s.integer("warn"));
    f.info = static_cast<int>(s.integer("info"));
    f.worst = s.str("worst");
    if (f.worst != "ok" && f.worst != "info" && f.worst != "warn" && f.worst != "fail")
      s.fail("worst", "expected ok, info, warn or fail, got \"" + f.worst + "\"");
  }
  return f;
}

}  // namespace fabscope::report
