#pragma once
// Which engine measures one pair (pure). Every node advertises in its summary what it offers:
// a tcp address, and an RDMA endpoint (the `fabscope rdma` server's address and the device
// behind it) or the reason it has none. `--engine auto` takes rdma when both nodes of the pair
// offer it and falls back to tcp otherwise, saying why; `--engine rdma` reports such a pair
// as not measured instead; `--engine tcp` never uses RDMA. `--engine nccl` (GPU builds only) runs
// every pair as NCCL send/recv between one GPU of each node, a pair whose node has no NCCL engine
// reported as not measured; auto never picks it. Every rank computes the same choice from the
// same plan, so no choice travels on the wire.
#include <string>

namespace fabscope::cluster {

enum class EngineMode { Auto, Rdma, Tcp, Nccl };

const char* to_string(EngineMode m);
EngineMode parse_engine_mode(const std::string& text);  // UsageError naming the value

struct PairEndpoints {
  std::string name;          // the node, for reasons
  std::string tcp_address;   // "ip:port", "" none
  std::string rdma_address;  // "ip:port" of its rdma server, "" none
  std::string rdma_note;     // with an address: the device ("rxe0:1 on eth0"); without: why not
  std::string nccl_device;   // its NCCL engine's GPU and NCCL version, "" none
  std::string nccl_note;     // without an NCCL engine: why not
};

struct EngineChoice {
  std::string engine;  // "rdma" | "tcp" | "nccl" | "" (the pair cannot be measured; reason says why)
  std::string reason;
};

EngineChoice choose_pair_engine(EngineMode mode, const PairEndpoints& a, const PairEndpoints& b);

}  // namespace fabscope::cluster
