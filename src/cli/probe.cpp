#include <iostream>

#include "cli/commands.hpp"
#include "core/args.hpp"
#include "core/json.hpp"
#include "core/root.hpp"
#include "core/strings.hpp"
#include "probe/probe.hpp"
#include "probe/render.hpp"

namespace fabscope::cli {

int cmd_probe(int argc, char** argv) {
  core::ArgParser args("probe",
                       "Describe this node: RDMA devices and ports, netdevs, PCIe tree, GPUs, GPU-NIC "
                       "affinity, kernel settings and versions. Reads sysfs/procfs only; on a live node "
                       "also NVML, libnccl and libcuda when present.");
  args.option("--root", "DIR", "read sys/ and proc/ under DIR instead of / (env FABSCOPE_ROOT)")
      .flag("--json", "print the node description as JSON (schema fabscope.node, docs/formats.md)")
      .example("fabscope probe", "RDMA port table, netdevs, GPUs and the GPU x NIC affinity matrix")
      .example("fabscope probe --json | jq '.rdma_devices[].ports[] | {port, state, rate_gbps}'",
               "port states as JSON")
      .example("fabscope probe --root /tmp/node-capture", "describe a captured sysfs/procfs tree")
      .footer(
          "Exit codes: 0 the node was described (unreadable values are listed as notes), "
          "3 usage or error (e.g. --root is not a directory).");
  if (!args.parse(argc, argv, std::cout)) return 0;
  auto root = core::Root::from_option(args.get("root"));
  NodeInfo info = probe::collect(root);
  if (args.has("json")) {
    // The probe keeps only UTF-8 text; replace, not throw, should a byte slip through anyway.
    std::cout << dump_json(json(info)) << "\n";
  } else {
    std::cout << core::printable_lines(probe::render_text(info));
  }
  return 0;
}

}  // namespace fabscope::cli
