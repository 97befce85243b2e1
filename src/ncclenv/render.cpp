#include "ncclenv/render.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "core/error.hpp"
#include "core/finding_text.hpp"
#include "core/strings.hpp"
#include "core/table.hpp"

namespace fabscope::ncclenv {

namespace {

constexpr std::size_t kWidth = 100;

std::string comment(const std::string& text, const std::string& prefix = "# ") {
  return core::wrap(text, kWidth, prefix);
}

std::string header_line(const EnvPlan& p, const std::string& what) {
  return "NCCL environment for " + (p.hostname.empty() ? std::string("this node") : p.hostname) + ", " + what +
         ", planned by fabscope env (docs/ncclenv.md)";
}

// Warnings, then per variable its reason and evidence, as comment lines.
void warnings_block(std::ostream& os, const EnvPlan& p, const std::string& prefix = "# ") {
  for (const auto& w : p.warnings) os << comment("WARNING: " + w, prefix);
  for (const auto& n : p.notes) os << comment("note: " + n, prefix);
}

void var_comment(std::ostream& os, const PlannedVar& v, const std::string& prefix = "# ") {
  os << comment(v.name + ": " + v.reason, prefix);
  if (!v.evidence.empty()) os << comment("evidence: " + v.evidence, prefix + "  ");
}

std::string yaml_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string render_shell(const EnvPlan& p) {
  std::ostringstream os;
  os << comment(header_line(p, "for sh/bash (source it)"));
  warnings_block(os, p);
  for (const auto& v : p.vars) {
    var_comment(os, v);
    os << "export " << v.name << "=" << shell_quote(v.value) << "\n";
  }
  return os.str();
}

// docker --env-file takes every character after '=' literally (no quote removal), systemd's
// EnvironmentFile= strips quotes: unquoted values mean the same to both. Our values never hold
// blanks, quotes or '#'.
std::string render_envfile(const EnvPlan& p) {
  std::ostringstream os;
  os << comment(header_line(p, "for docker --env-file and systemd EnvironmentFile="));
  warnings_block(os, p);
  for (const auto& v : p.vars) {
    var_comment(os, v);
    os << v.name << "=" << v.value << "\n";
  }
  return os.str();
}

std::string render_docker(const EnvPlan& p) {
  std::ostringstream os;
  os << comment(header_line(p, "as docker run flags"));
  os << comment("--network host: NCCL's bootstrap and socket transport need the node's interfaces. "
                "--ipc host: NCCL's SHM transport and CUDA IPC between ranks need a shared /dev/shm "
                "(where host IPC is not allowed, use --shm-size=8g or more). --ulimit memlock=-1: RDMA "
                "registers (pins) memory.");
  if (p.any_rdma_device)
    os << comment("--device /dev/infiniband --cap-add IPC_LOCK: the verbs devices (uverbs, rdma_cm) "
                  "inside the container.");
  warnings_block(os, p);
  for (const auto& v : p.vars) var_comment(os, v);
  os << "docker run --rm \\\n";
  os << "  --network host \\\n";
  os << "  --ipc host \\\n";
  os << "  --ulimit memlock=-1 --ulimit stack=67108864 \\\n";
  if (p.any_rdma_device) os << "  --device /dev/infiniband --cap-add IPC_LOCK \\\n";
  if (p.gpus > 0) os << "  --gpus all \\\n";
  for (const auto& v : p.vars) os << "  -e " << v.name << "=" << shell_quote(v.value) << " \\\n";
  os << "  \"${IMAGE:?set IMAGE}\" \"$@\"\n";
  return os.str();
}

std::string render_k8s(const EnvPlan& p) {
  std::ostringstream os;
  os << comment(header_line(p, "as a Kubernetes container env: list"));
  os << comment("Paste under the container's env:. The pod also needs hostNetwork: true (or an RDMA "
                "network attachment), an emptyDir with medium: Memory mounted at /dev/shm, the IPC_LOCK "
                "capability and, with RDMA, the RDMA device plugin's resource.");
  warnings_block(os, p);
  for (const auto& v : p.vars) {
    var_comment(os, v);
    os << "- name: " << v.name << "\n  value: " << yaml_quote(v.value) << "\n";
  }
  if (p.vars.empty()) os << "[]\n";
  return os.str();
}

void exports(std::ostream& os, const EnvPlan& p) {
  for (const auto& v : p.vars) {
    var_comment(os, v);
    os << "export " << v.name << "=" << shell_quote(v.value) << "\n";
  }
}

std::string render_slurm(const EnvPlan& p, const RenderOptions& o) {
  std::ostringstream os;
  os << "#!/bin/bash\n";
  os << "#SBATCH --job-name=nccl-job\n";
  os << "#SBATCH --nodes=" << o.nodes << "\n";
  os << "#SBATCH --ntasks-per-node=" << o.gpus_per_node << "\n";
  if (p.gpus > 0) os << "#SBATCH --gpus-per-node=" << o.gpus_per_node << "\n";
  os << "#SBATCH --exclusive\n";
  os << comment(header_line(p, "for sbatch; every node of the job gets these variables"));
  warnings_block(os, p);
  exports(os, p);
  os << comment("One task per GPU; srun passes the environment above to every task.");
  os << "srun --mpi=pmix \"$@\"\n";
  return os.str();
}

std::string render_torchrun(const EnvPlan& p, const RenderOptions& o) {
  std::ostringstream os;
  os << "#!/bin/bash\n";
  os << comment(header_line(p, "as a torchrun launch script"));
  os << comment("Run the same script on every node with NODE_RANK=0.." + std::to_string(o.nodes - 1) +
                " and MASTER_ADDR set to node 0's address; the training script and its arguments "
                "follow: ./launch.sh train.py --epochs 10");
  os << "set -euo pipefail\n";
  if (o.master_addr.empty()) os << "MASTER_ADDR=\"${MASTER_ADDR:?set MASTER_ADDR to the address of node 0}\"\n";
  else os << "MASTER_ADDR=\"${MASTER_ADDR:-" << o.master_addr << "}\"\n";
  os << "MASTER_PORT=\"${MASTER_PORT:-29500}\"\n";
  os << "NNODES=\"${NNODES:-" << o.nodes << "}\"\n";
  os << "NODE_RANK=\"${NODE_RANK:?set NODE_RANK, 0 on the master node}\"\n";
  os << "NPROC_PER_NODE=\"${NPROC_PER_NODE:-" << o.gpus_per_node << "}\"\n";
  warnings_block(os, p);
  exports(os, p);
  os << "exec torchrun --nnodes \"$NNODES\" --nproc_per_node \"$NPROC_PER_NODE\" \\\n"
        "  --node_rank \"$NODE_RANK\" --master_addr \"$MASTER_ADDR\" --master_port \"$MASTER_PORT\" \\\n"
        "  \"$@\"\n";
  return os.str();
}

}  // namespace

const std::vector<std::string>& format_names() {
  static const std::vector<std::string> names = {"shell", "envfile", "docker", "k8s", "slurm", "torchrun", "json"};
  return names;
}

Format parse_format(const std::string& name) {
  const auto& names = format_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<Format>(i);
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  throw UsageError("env: unknown format '" + name + "' (formats: " + list + ")");
}

std::string render_lint_text(const std::vector<Finding>& findings, const std::vector<std::string>& sources,
                             std::size_t settings, std::size_t width) {
  const SeverityCounts counts = count_severities(findings);
  std::ostringstream os;
  const std::string from = core::join(sources, ", ");
  os << core::wrap("env lint: " + std::to_string(counts.fail) + " fail, " + std::to_string(counts.warn) + " warn, " +
                       std::to_string(counts.info) + " info; " + std::to_string(settings) + " NCCL setting" +
                       (settings == 1 ? "" : "s") + " from " + (from.empty() ? std::string("nothing") : from),
                   width, "");
  if (findings.empty()) os << "no findings\n";
  else os << "\n" << core::render_finding_blocks(findings, width);
  return os.str();
}

std::string render_lint_text(const LintReport& report, std::size_t width) {
  return render_lint_text(report.findings, report.sources, report.nccl_settings(), width);
}

json lint_report_json(const LintReport& report) {
  json j{{"schema", "fabscope.envlint"}, {"schema_version", 1}, {"sources", report.sources}};
  j["settings"] = json::array();
  for (const auto& e : report.entries)
    if (core::starts_with(e.key, "NCCL_"))
      j["settings"].push_back({{"key", e.key}, {"value", e.value}, {"source", e.source}, {"line", e.line}});
  j["findings"] = report.findings;
  return j;
}

std::string shell_quote(const std::string& value) {
  if (!value.empty() &&
      value.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:,+-") ==
          std::string::npos)
    return value;
  std::string out = "'";
  for (char c : value) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

std::string render(const EnvPlan& plan, Format format, const RenderOptions& opts) {
  switch (format) {
    case Format::Shell: return render_shell(plan);
    case Format::EnvFile: return render_envfile(plan);
    case Format::Docker: return render_docker(plan);
    case Format::K8s: return render_k8s(plan);
    case Format::Slurm: return render_slurm(plan, opts);
    case Format::Torchrun: return render_torchrun(plan, opts);
    case Format::Json: return dump_json(json(plan)) + "\n";
  }
  return "";
}

}  // namespace fabscope::ncclenv
