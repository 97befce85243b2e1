#include <iostream>

#include "checks/checks.hpp"
#include "checks/doctor.hpp"
#include "cli/commands.hpp"
#include "core/args.hpp"
#include "core/json.hpp"
#include "core/root.hpp"
#include "probe/probe.hpp"
#if FABSCOPE_HAVE_NCCLENV
#include "ncclenv/lint.hpp"
#endif

namespace fabscope::cli {

int cmd_doctor(int argc, char** argv) {
  core::ArgParser args("doctor",
                       "Say in plain words what this node has (GPUs, NVLink, RDMA devices, which transport\n"
                       "multi-node NCCL traffic would use), judge it with every check and the NCCL environment\n"
                       "lint, give a verdict (healthy, degraded, broken) and the next steps.");
  args.option("--root", "DIR", "read sys/ and proc/ under DIR instead of / (env FABSCOPE_ROOT)")
      .flag("--json", "print the report as JSON (schema fabscope.doctor, docs/formats.md)")
      .example("fabscope doctor", "verdict and next steps for this node")
      .example("fabscope doctor --json | jq -r .verdict", "healthy, degraded or broken")
      .example("fabscope doctor --root /tmp/node-capture", "a captured sysfs/procfs tree")
      .footer(std::string(core::kExitCodesHelp) +
              "\nVerdict: healthy (exit 0), degraded (warnings, exit 1), broken (failures, exit 2).");
  if (!args.parse(argc, argv, std::cout)) return 0;
  auto root = core::Root::from_option(args.get("root"));
  NodeInfo node = probe::collect(root);
  std::vector<Finding> findings = checks::run(node);
#if FABSCOPE_HAVE_NCCLENV
  for (auto& f : fabscope::ncclenv::lint_process_environment(node)) findings.push_back(std::move(f));
#endif
  checks::DoctorReport report = checks::diagnose_node(node, std::move(findings));
  if (args.has("json")) {
    std::cout << dump_json(checks::doctor_json(node, report)) << "\n";
  } else {
    std::cout << checks::render_doctor_text(node, report);
  }
  return exit_code_for(report.findings);
}

}  // namespace fabscope::cli
