#include <iostream>

#include "cli/commands.hpp"
#include "core/args.hpp"
#include "core/json.hpp"
#include "nccllog/accumulate.hpp"
#include "nccllog/diagnose.hpp"
#include "nccllog/render.hpp"

namespace fabscope::cli {

int cmd_log(int argc, char** argv) {
  core::ArgParser args("log", "Analyze NCCL_DEBUG=INFO logs: transports, RDMA and GPUDirect use, init "
                              "status,\nknown WARN/error lines with cause and remedy.");
  args.flag("--json", "machine-readable output (schema fabscope.nccllog)")
      .flag("--hosts", "also per-rank tables, peer-pair transports, env overrides")
      .option("--max-line", "BYTES", "cut longer lines at BYTES (memory stays bounded)", "4096")
      .positional("FILE", "logs: one per rank or one interleaved; '-' is stdin", true, true)
      .example("fabscope log job.log", "verdict and findings for one interleaved log")
      .example("fabscope log --hosts /shared/nccl.*.log", "per-rank files of one job, with details")
      .example("srun ... 2>&1 | fabscope log --json -", "from stdin, as JSON")
      .footer(std::string(core::kExitCodesHelp) + "\nA FILE that cannot be read exits 3; the message names it.");
  if (!args.parse(argc, argv, std::cout)) return 0;
  const auto max_line = static_cast<std::size_t>(args.get_int("max-line", 256, 1 << 24));

  const nccllog::LogSummary summary = nccllog::summarize_files(args.positionals(), max_line);
  const nccllog::Diagnosis diag = nccllog::diagnose(summary);
  if (args.has("json")) {
    std::cout << dump_json(nccllog::report_json(summary, diag)) << "\n";
  } else {
    nccllog::ReportOptions opt;
    opt.hosts = args.has("hosts");
    std::cout << nccllog::render_text(summary, diag, opt);
  }
  return exit_code_for(diag.findings);
}

}  // namespace fabscope::cli
