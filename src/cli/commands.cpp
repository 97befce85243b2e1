#include "cli/commands.hpp"

namespace fabscope::cli {

namespace {
// In the order a user meets them: the node verdict first, then its parts, then the GPU and
// monitoring commands.
const Command kCommands[] = {
    {"doctor", "what this node has, a verdict and the next steps", cmd_doctor},
    {"probe", "describe RDMA ports, netdevs, PCIe, GPUs, kernel and versions", cmd_probe},
    {"check", "judge RDMA ports, RoCE, GPUDirect RDMA, PCIe, OS settings and versions", cmd_check},
    {"env", "NCCL variables for this node with reasons (shell, docker, k8s, slurm, torchrun); lint", cmd_env},
    {"log", "analyze NCCL_DEBUG logs: transports, RDMA/GPUDirect use, known errors", cmd_log},
    {"bench", "measure NCCL collectives (nccl-tests columns, JSON/CSV) against the link's rate", cmd_bench},
    {"tune", "search NCCL's algorithm/protocol/channels per size; tuner table, env, report", cmd_tune},
    {"rdma", "RDMA bandwidth/latency between two hosts like perftest, choices and errors explained", cmd_rdma},
    {"cluster", "validate many nodes: consistency, pairwise bandwidth, slow node or link, drain", cmd_cluster},
    {"fabric", "judge the InfiniBand fabric: links, cables, counters, subnet managers; routes", cmd_fabric},
    {"job", "name what holds a running NCCL job back: the straggling or hung rank, its GPU and host", cmd_job},
    {"exporter", "serve RDMA counters and check verdicts to Prometheus (/metrics)", cmd_exporter},
    {"capture", "pack what fabscope reads here into a .tar.gz for a problem report (--redact)", cmd_capture},
    {"report", "one self-contained HTML report with plots: doctor, check, bench, tune, nccl-tests", cmd_report},
    {"version", "print fabscope's version", cmd_version},
};
}  // namespace

const Command* commands() { return kCommands; }
int command_count() { return static_cast<int>(sizeof kCommands / sizeof kCommands[0]); }

const char* const kUsage = "fabscope COMMAND [options]";
const char* const kSummary =
    "Probe, check and tune the network of a GPU training node (InfiniBand, RoCE, NCCL).";
const char* const kTrailer =
    "Run 'fabscope COMMAND --help' for a command's options and examples.\n"
    "Example: fabscope doctor";

std::string top_help() {
  std::string out = std::string("Usage: ") + kUsage + "\n\n" + kSummary + "\n\nCommands:\n";
  for (int i = 0; i < command_count(); ++i) {
    const std::string name = kCommands[i].name;
    out += "  " + name + std::string(name.size() < 12 ? 12 - name.size() : 1, ' ') +
           kCommands[i].summary + "\n";
  }
  return out + "\n" + kTrailer + "\n";
}

}  // namespace fabscope::cli
