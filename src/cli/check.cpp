#include <iostream>

#include "checks/checks.hpp"
#include "checks/render.hpp"
#include "cli/commands.hpp"
#include "core/args.hpp"
#include "core/progress.hpp"
#include "core/error.hpp"
#include "core/json.hpp"
#include "core/root.hpp"
#include "core/strings.hpp"
#include "probe/probe.hpp"
#include "probe/saved.hpp"

namespace fabscope::cli {

int cmd_check(int argc, char** argv) {
  core::ArgParser args("check",
                       "Judge this node's RDMA and GPU network setup: port states and rates, error counters,\n"
                       "RoCE GIDs and MTUs, GPUDirect RDMA, PCIe links and ACS, memlock, sysctls, IOMMU, NCCL\n"
                       "and firmware versions, lossless RoCE (PFC/ECN), bonds, NIC interrupt placement, SR-IOV,\n"
                       "the firewall, the MTU against the switch port's frame size (LLDP). With --interval, loss\n"
                       "and congestion counters are judged as rates over two probes. Every finding names the\n"
                       "values read and the fix; ids are in docs/checks.md.");
  args.option("--root", "DIR", "read sys/ and proc/ under DIR instead of / (env FABSCOPE_ROOT)")
      .option("--node", "FILE", "judge a node description saved by 'fabscope probe --json' ('-' stdin)")
      .option("--interval", "SEC",
              "probe twice, SEC seconds apart (0.1-3600), and judge counter rates: discards, "
              "out-of-sequence, CNPs, bond link failures")
      .flag("--json", "print the findings as JSON (schema fabscope.check, docs/formats.md)")
      .example("fabscope check", "findings for this node, most severe first")
      .example("fabscope check --json | jq -r '.findings[] | select(.severity == \"fail\") | .id'",
               "the ids that fail")
      .example("fabscope check --root /tmp/node-capture", "judge a captured sysfs/procfs tree")
      .example("fabscope check --interval 10", "also loss and congestion rates over 10 seconds")
      .example("ssh gpu7 fabscope probe --json | fabscope check --node -", "judge another node's probe")
      .footer(std::string(core::kExitCodesHelp) +
              "\nA --root that is not a directory, or a --node file that cannot be read or is not a node\n"
              "description, exits 3; the message names it.");
  if (!args.parse(argc, argv, std::cout)) return 0;
  if (args.has("node") && args.has("root")) throw UsageError("check: --node and --root exclude each other");
  if (args.has("node") && args.has("interval"))
    throw UsageError("check: --interval probes this node twice; it cannot be used with --node");
  std::vector<Finding> findings;
  NodeInfo node;
  if (args.has("node")) {
    node = probe::load_saved_node(args.get("node"));
    findings = checks::run(node);
  } else if (args.has("interval")) {
    const double seconds = args.get_double("interval", 0.1, 3600);
    probe::TwoProbes two;
    {
      core::Busy busy("check: reading the counters again after " + core::format_double("%g", seconds) + " s", seconds);
      two = probe::collect_twice(core::Root::from_option(args.get("root")), seconds);
    }
    node = std::move(two.after);
    findings = checks::run(node, two.before, two.elapsed_seconds);
  } else {
    node = probe::collect(core::Root::from_option(args.get("root")));
    findings = checks::run(node);
  }
  if (args.has("json")) {
    std::cout << dump_json(checks::check_json(node, findings)) << "\n";
  } else {
    std::cout << checks::render_check_text(node, findings);
  }
  return exit_code_for(findings);
}

}  // namespace fabscope::cli
