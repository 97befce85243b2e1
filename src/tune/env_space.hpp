#pragma once
// The settings of `fabscope tune` that only the environment can change: NCCL reads them once per
// process (NCCL_PARAM keeps the first value read in a function-local static, src/include/param.h
// of NCCL 2.28; the network plugin and its socket threads start once per process), so a value is
// measured in a fresh process and a fresh communicator, never by changing the variable between
// two communicators of one process. Which settings can matter depends on the path between the
// ranks: socket threads only on NET/Socket between nodes, QPs per connection only on NET/IB.
#include <string>
#include <utility>
#include <vector>

namespace fabscope::tune {

// How NCCL's ranks reach each other between nodes.
enum class NetPath { None, IB, Socket, Other };
std::string net_path_name(NetPath p);  // "none (one node)", "NET/IB", "NET/Socket", "NET/<plugin>"

// NCCL's choice of network transport, as NCCL makes it (net.cc of 2.28): NCCL_NET names one;
// else the IB transport when RDMA is usable (NCCL_IB_DISABLE unset or 0, an active port), else
// sockets. One node: no network transport between its ranks. nccl_net/ib_disable: the variables'
// values ("" unset).
NetPath detect_net_path(int nnodes, const std::string& nccl_net, const std::string& ib_disable,
                        bool active_rdma_port);

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
std::vector<EnvGroup> env_groups(NetPath path, int nnodes, const EnvSpaceSpec& spec);

// The values of the searched variables in this process's environment (what NCCL will read).
EnvAssignment tunable_env_from_process();

// "buffsize,nthreads,socket,qps" for --env-settings; UsageError names the bad element.
std::vector<std::string> parse_env_settings(const std::string& text);

}  // namespace fabscope::tune
