#pragma once
// The settings of `fabscope tune` that only the environment can change: NCCL reads them once per
// process (NCCL_PARAM keeps the first value read in a function-local static, src/include/param.h
// of NCCL 2.28; the network plugin and its socket threads start once per process), so a value is
// measured in a fresh process and a fresh communicator, never by changing the variable between
// two communicators of one process. Which settings can matter depends on the path between the
// ranks: socket threads only on NET/Socket (between nodes, or between the GPUs of one node with
// P2P and SHM disabled), QPs per connection only on NET/IB.
#include <string>
#include <utility>
#include <vector>

namespace fabscope::tune {

// How NCCL's ranks reach each other between nodes.
enum class NetPath { None, IB, Socket, Other };
std::string net_path_name(NetPath p);  // "none (one node)", "NET/IB", "NET/Socket", "NET/<plugin>"

// What decides the transport between the ranks: the job's shape and the variables NCCL will read
// ("" unset), as the run will have them.
struct NetPathInputs {
  int nnodes = 1;
  std::string nccl_net;     // NCCL_NET
  std::string ib_disable;   // NCCL_IB_DISABLE
  std::string p2p_disable;  // NCCL_P2P_DISABLE
  std::string shm_disable;  // NCCL_SHM_DISABLE
  bool active_rdma_port = false;
};

// NCCL's choice of network transport, as NCCL makes it. Between two ranks NCCL takes the first
// transport of P2P, SHM, NET that can connect them (transport.cc of 2.28); P2P and SHM only
// connect ranks of one host, so ranks on different nodes always use NET, and ranks of one node
// use it only when both NCCL_P2P_DISABLE and NCCL_SHM_DISABLE are set (not "0"): then NCCL runs
// its network transport between them, as between two nodes without RDMA. Which one (net.cc):
// NCCL_NET names one; else the IB transport when RDMA is usable (NCCL_IB_DISABLE unset or 0, an
// active port), else sockets. Otherwise one node has no network transport between its ranks.
NetPath detect_net_path(const NetPathInputs& in);

// Variables set for one candidate (empty: NCCL's defaults).
struct EnvAssignment {
  std::vector<std::pair<std::string, std::string>> vars;
  bool is_default() const { return vars.empty(); }
  std::string label() const;  // "NCCL_BUFFSIZE=8388608", "NCCL_SOCKET_NTHREADS=4 NCCL_NSOCKS_PERTHREAD=2", "default"
  bool operator==(const EnvAssignment&) const = default;
};
// a + b: b's variables replace a's of the same name.
EnvAssignment merged(const EnvAssignment& a, const EnvAssignment& b);

// One setting searched on its own (socket threads x sockets per thread count as one: NCCL
// multiplies them). candidates[0] is NCCL's default.
struct EnvGroup {
  std::string name;                     // "NCCL_BUFFSIZE"
  std::string meaning;                  // one line for the report and the env file
  std::vector<EnvAssignment> candidates;
  std::string skipped;                  // non-empty: not searched, and why
};

struct EnvSpaceSpec {
  std::vector<std::string> only;  // setting names to search (empty: all that apply)
};

// Every setting with its candidates, or with the reason it cannot matter on this path.
std::vector<EnvGroup> env_groups(NetPath path, const EnvSpaceSpec& spec);

// The values of the searched variables in this process's environment (what NCCL will read).
EnvAssignment tunable_env_from_process();

// "buffsize,nthreads,socket,qps" for --env-settings; UsageError names the bad element.
std::vector<std::string> parse_env_settings(const std::string& text);

}  // namespace fabscope::tune
