#pragma once
// Output formats of an EnvPlan: what a user pastes into a shell, a container, a pod spec, a
// batch script or a launcher. Every text format carries each variable's reason as a comment;
// lines fit 100 columns except a value that is itself longer.
#include <string>
#include <vector>

#include "core/finding.hpp"
#include "core/json.hpp"
#include "ncclenv/collect.hpp"
#include "ncclenv/plan.hpp"

namespace fabscope::ncclenv {

enum class Format { Shell, EnvFile, Docker, K8s, Slurm, Torchrun, Json };

// "shell", "envfile", "docker", "k8s", "slurm", "torchrun", "json", in that order.
const std::vector<std::string>& format_names();
// Throws fabscope::UsageError naming the bad value and listing the formats.
Format parse_format(const std::string& name);

struct RenderOptions {
  int nodes = 2;            // slurm --nodes, torchrun NNODES default
  int gpus_per_node = 1;    // slurm --gpus-per-node/--ntasks-per-node, torchrun --nproc_per_node
  std::string master_addr;  // torchrun MASTER_ADDR default, "" = must be set by the caller
};

std::string render(const EnvPlan& plan, Format format, const RenderOptions& opts);

// `fabscope env lint` text: a summary line, then each finding (severity, id, subject, message,
// evidence, remedy, docs) wrapped to width.
std::string render_lint_text(const std::vector<Finding>& findings, const std::vector<std::string>& sources,
                             std::size_t settings, std::size_t width = 100);

std::string render_lint_text(const LintReport& report, std::size_t width = 100);
// `fabscope env lint --json` (schema fabscope.envlint, docs/formats.md): sources, the NCCL_
// settings with where each came from, findings.
json lint_report_json(const LintReport& report);

// POSIX shell single-quoting where needed ("=eth0" -> "'=eth0'", "4" -> "4").
std::string shell_quote(const std::string& value);

}  // namespace fabscope::ncclenv
