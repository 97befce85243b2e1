#include "cluster/engine_choice.hpp"

#include "core/error.hpp"

namespace fabscope::cluster {

namespace {

std::string without_rdma(const PairEndpoints& a, const PairEndpoints& b) {
  auto one = [](const PairEndpoints& n) {
    return n.name + " has no usable RDMA endpoint (" + (n.rdma_note.empty() ? "none advertised" : n.rdma_note) + ")";
  };
  if (a.rdma_address.empty() && b.rdma_address.empty()) return one(a) + "; " + one(b);
  return one(a.rdma_address.empty() ? a : b);
}

std::string without_tcp(const PairEndpoints& a, const PairEndpoints& b) {
  const auto& n = a.tcp_address.empty() ? a : b;
  return n.name + " advertises no tcp pair address";
}

std::string without_nccl(const PairEndpoints& a, const PairEndpoints& b) {
  auto one = [](const PairEndpoints& n) {
    return n.name + " has no NCCL engine (" + (n.nccl_note.empty() ? "none advertised" : n.nccl_note) + ")";
  };
  if (a.nccl_device.empty() && b.nccl_device.empty()) return one(a) + "; " + one(b);
  return one(a.nccl_device.empty() ? a : b);
}

}  // namespace

const char* to_string(EngineMode m) {
  switch (m) {
    case EngineMode::Auto: return "auto";
    case EngineMode::Rdma: return "rdma";
    case EngineMode::Tcp: return "tcp";
    case EngineMode::Nccl: return "nccl";
  }
  return "?";
}

EngineMode parse_engine_mode(const std::string& text) {
  if (text == "auto") return EngineMode::Auto;
  if (text == "rdma") return EngineMode::Rdma;
  if (text == "tcp") return EngineMode::Tcp;
  if (text == "nccl") return EngineMode::Nccl;
  throw UsageError("--engine '" + text + "': expected auto, rdma, tcp or nccl");
}

EngineChoice choose_pair_engine(EngineMode mode, const PairEndpoints& a, const PairEndpoints& b) {
  const bool rdma = !a.rdma_address.empty() && !b.rdma_address.empty();
  const bool tcp = !a.tcp_address.empty() && !b.tcp_address.empty();
  switch (mode) {
    case EngineMode::Nccl:
      if (!a.nccl_device.empty() && !b.nccl_device.empty())
        return {"nccl", "--engine nccl: " + a.name + " " + a.nccl_device + ", " + b.name + " " + b.nccl_device};
      return {"", "--engine nccl: " + without_nccl(a, b)};
    case EngineMode::Tcp:
      if (tcp) return {"tcp", "--engine tcp"};
      return {"", "--engine tcp: " + without_tcp(a, b)};
    case EngineMode::Rdma:
      if (rdma) return {"rdma", "--engine rdma: " + a.name + " " + a.rdma_note + ", " + b.name + " " + b.rdma_note};
      return {"", "--engine rdma: " + without_rdma(a, b)};
    case EngineMode::Auto:
      if (rdma) return {"rdma", "both nodes have an RDMA endpoint: " + a.name + " " + a.rdma_note + ", " + b.name +
                                    " " + b.rdma_note};
      if (tcp) return {"tcp", "fallback: " + without_rdma(a, b)};
      return {"", without_rdma(a, b) + "; " + without_tcp(a, b)};
  }
  return {"", "unknown engine mode"};
}

}  // namespace fabscope::cluster
