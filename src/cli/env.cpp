#include <algorithm>
#include <iostream>

#include "cli/commands.hpp"
#include "core/args.hpp"
#include "core/error.hpp"
#include "core/json.hpp"
#include "core/root.hpp"
#include "core/strings.hpp"
#include "ncclenv/collect.hpp"
#include "ncclenv/plan.hpp"
#include "ncclenv/render.hpp"
#include "probe/probe.hpp"

extern char** environ;

namespace fabscope::cli {

namespace {

int cmd_env_lint(int argc, char** argv) {
  core::ArgParser args("env lint",
                       "Judge NCCL settings against NCCL's variable table and this node: unknown names "
                       "(with the closest\nknown one), debug-only settings, bad values, NCCL_IB_HCA and "
                       "NCCL_SOCKET_IFNAME that match nothing\nor down ports, a wrong NCCL_IB_GID_INDEX, "
                       "RDMA or P2P turned off, contradictions, duplicates and\nlines the file's reader "
                       "would misread. Without --env-file: the process environment and the\nnccl.conf "
                       "files NCCL reads ($NCCL_CONF_FILE or ~/.nccl.conf, then /etc/nccl.conf).");
  args.option("--root", "DIR", "read sys/, proc/, etc/nccl.conf under DIR, not / (env FABSCOPE_ROOT)")
      .multi("--env-file", "FILE", "lint this env-file (docker --env-file, systemd) instead")
      .flag("--json", "print findings as JSON (schema fabscope.envlint, docs/formats.md)")
      .example("fabscope env lint", "the current environment and nccl.conf files against this node")
      .example("fabscope env lint --env-file job.env", "an env-file before it goes into a container")
      .example("fabscope env lint --json | jq '.findings[] | select(.severity==\"fail\")'", "failures only")
      .footer(std::string(core::kExitCodesHelp) + "\nAn --env-file that cannot be read exits 3; the message names it.");
  if (!args.parse(argc, argv, std::cout)) return 0;
  const ncclenv::LintReport report =
      ncclenv::lint_settings(core::Root::from_option(args.get("root")), args.get_all("env-file"), environ);
  if (args.has("json")) std::cout << dump_json(ncclenv::lint_report_json(report)) << "\n";
  else std::cout << core::printable_lines(ncclenv::render_lint_text(report));
  return exit_code_for(report.findings);
}

}  // namespace

int cmd_env(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "lint") return cmd_env_lint(argc - 1, argv + 1);
  core::ArgParser args("env",
                       "Plan the NCCL environment for this node: every variable with its value, the reason "
                       "and the\nevidence read (RDMA ports and states, GID tables, interfaces, GPU-NIC "
                       "distance), in the format a\nlauncher takes. `fabscope env lint` judges existing "
                       "settings instead.");
  args.option("--root", "DIR", "read sys/ and proc/ under DIR instead of / (env FABSCOPE_ROOT)")
      .option("--format", "FORMAT", core::join(ncclenv::format_names(), ", "), "shell")
      .choices("format", ncclenv::format_names())
      .flag("--json", "same as --format json (schema fabscope.env, docs/formats.md)")
      .option("--master-addr", "IP", "IPv4 of rank 0: NCCL_SOCKET_IFNAME is the interface on its subnet")
      .option("--roce-dscp", "N", "DSCP of the lossless RoCE class on the switches (0-63): NCCL_IB_TC=N<<2")
      .option("--ib-sl", "N", "InfiniBand service level (0-15) from the fabric's QoS setup: NCCL_IB_SL")
      .option("--nodes", "N", "nodes of the job (slurm, torchrun)", "2")
      .option("--gpus-per-node", "N", "ranks per node (slurm, torchrun); default: GPUs found, else 1")
      .example("fabscope env", "export lines with a comment per variable saying why")
      .example("fabscope env --format docker --master-addr 10.0.0.1", "docker run flags")
      .example("fabscope env --format k8s --roce-dscp 26", "a Kubernetes env: list, RoCE traffic class 104")
      .example("fabscope env --format torchrun --nodes 4 > launch.sh", "a torchrun launch script")
      .example("fabscope env lint", "judge the current NCCL settings (see fabscope env lint --help)")
      .subcommand("lint")
      .footer("Exit codes: 0 the plan was printed (its warnings are part of it), 3 usage or error.\n"
              "fabscope env lint exits like check: 0 nothing above info, 1 warnings, 2 failures, 3 usage.");
  if (!args.parse(argc, argv, std::cout)) return 0;
  const ncclenv::Format format = args.has("json") ? ncclenv::Format::Json : ncclenv::parse_format(args.get("format"));
  ncclenv::PlanOptions opts;
  if (args.has("master-addr")) {
    opts.master_addr = args.get("master-addr");
    if (!ncclenv::parse_ipv4(opts.master_addr))
      throw UsageError("env: --master-addr '" + opts.master_addr + "' is not an IPv4 address (a.b.c.d)");
  }
  if (args.has("roce-dscp")) opts.roce_dscp = static_cast<int>(args.get_int("roce-dscp", 0, 63));
  if (args.has("ib-sl")) opts.ib_sl = static_cast<int>(args.get_int("ib-sl", 0, 15));
  ncclenv::RenderOptions ropts;
  ropts.nodes = static_cast<int>(args.get_int("nodes", 1, 100000));
  ropts.master_addr = opts.master_addr;
  auto root = core::Root::from_option(args.get("root"));
  const NodeInfo node = probe::collect(root);
  opts.default_route_ifaces = ncclenv::default_route_interfaces(root);
  ropts.gpus_per_node = args.has("gpus-per-node") ? static_cast<int>(args.get_int("gpus-per-node", 1, 1024))
                                                  : std::max<int>(1, static_cast<int>(node.gpus.size()));
  const ncclenv::EnvPlan plan = ncclenv::plan(node, opts);
  std::cout << ncclenv::render(plan, format, ropts);
  return 0;
}

}  // namespace fabscope::cli
