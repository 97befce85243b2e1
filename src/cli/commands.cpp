#include "cli/commands.hpp"

namespace fabscope::cli {

namespace {
// Add a line here when a subcommand lands (one line per command keeps merges trivial).
const Command kCommands[] = {
    {"version", "print fabscope's version", cmd_version},
    {"log", "analyze NCCL_DEBUG logs: transports, RDMA/GPUDirect use, known errors", cmd_log},
    {"probe", "describe RDMA ports, netdevs, PCIe, GPUs, kernel and versions", cmd_probe},
    {"env", "NCCL variables for this node with reasons (shell, docker, k8s, slurm, torchrun); lint", cmd_env},
    {"check", "judge RDMA ports, RoCE, GPUDirect RDMA, PCIe, OS settings and versions", cmd_check},
    {"doctor", "what this node has, a verdict and the next steps", cmd_doctor},
    {"exporter", "serve RDMA counters and check verdicts to Prometheus (/metrics)", cmd_exporter},
    {"bench", "measure NCCL collectives (nccl-tests columns, JSON/CSV) against the link's rate", cmd_bench},
};
}  // namespace

const Command* commands() { return kCommands; }
int command_count() { return static_cast<int>(sizeof kCommands / sizeof kCommands[0]); }

}  // namespace fabscope::cli
