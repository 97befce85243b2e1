#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>

#include "checks/checks.hpp"
#include "checks/report.hpp"
#include "cli/commands.hpp"
#include "core/args.hpp"
#include "core/error.hpp"
#include "core/json.hpp"
#include "core/root.hpp"
#include "probe/probe.hpp"

namespace fabscope::cli {

namespace {

// A node description saved by `fabscope probe --json` (another node's, or this one's earlier).
NodeInfo load_node(const std::string& path) {
  constexpr std::size_t kMaxBytes = 64u << 20;  // a real one is well under 1 MiB
  std::ifstream file;
  std::istream* in = &std::cin;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) throw Error(path + ": cannot open: " + std::strerror(errno));
    in = &file;
  }
  std::string text;
  char buf[65536];
  while (in->read(buf, sizeof buf) || in->gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in->gcount()));
    if (text.size() > kMaxBytes) throw Error(path + ": larger than 64 MiB, not a node description");
  }
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw Error(path + ": not a JSON object (expected the output of fabscope probe --json)");
  try {
    return j.get<NodeInfo>();
  } catch (const std::exception& e) {
    throw Error(path + ": " + e.what());
  }
}

}  // namespace

int cmd_check(int argc, char** argv) {
  core::ArgParser args("check",
                       "Judge this node's RDMA and GPU network setup: port states and rates, error counters,\n"
                       "RoCE GIDs and MTUs, GPUDirect RDMA, PCIe links and ACS, memlock, sysctls, IOMMU, NCCL\n"
                       "and firmware versions. Every finding names the values read and the fix; ids are\n"
                       "documented in docs/checks.md.");
  args.option("--root", "DIR", "read sys/ and proc/ under DIR instead of / (env FABSCOPE_ROOT)")
      .option("--node", "FILE", "judge a node description saved by 'fabscope probe --json' ('-' stdin)")
      .flag("--json", "print the findings as JSON (schema fabscope.check, docs/formats.md)")
      .example("fabscope check", "findings for this node, most severe first")
      .example("fabscope check --json | jq -r '.findings[] | select(.severity == \"fail\") | .id'",
               "the ids that fail")
      .example("fabscope check --root /tmp/node-capture", "judge a captured sysfs/procfs tree")
      .example("ssh gpu7 fabscope probe --json | fabscope check --node -", "judge another node's probe")
      .footer(std::string(core::kExitCodesHelp) +
              "\nA --root that is not a directory, or a --node file that cannot be read or is not a node\n"
              "description, exits 3; the message names it.");
  if (!args.parse(argc, argv, std::cout)) return 0;
  if (args.has("node") && args.has("root")) throw UsageError("check: --node and --root exclude each other");
  NodeInfo node = args.has("node") ? load_node(args.get("node"))
                                   : probe::collect(core::Root::from_option(args.get("root")));
  std::vector<Finding> findings = checks::run(node);
  if (args.has("json")) {
    // Findings quote values read from the node; replace, not throw, should a non-UTF-8 byte slip in.
    std::cout << checks::check_json(node, findings).dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  } else {
    std::cout << checks::render_check_text(node, findings);
  }
  return exit_code_for(findings);
}

}  // namespace fabscope::cli
