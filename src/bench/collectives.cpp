#include "bench/collectives.hpp"

#include <cctype>

#include "bench/reference.hpp"

namespace fabscope::bench {

namespace {
// --- bus-bandwidth factors (nccl-tests' PERFORMANCE.md derivations) ---
// All-reduce as reduce-scatter + all-gather: every rank sends and receives 2(n-1)/n of the data.
double factor_all_reduce(int n) { return n > 0 ? 2.0 * (n - 1) / n : 0.0; }
// All-gather, reduce-scatter, alltoall(v), gather, scatter: each rank moves (n-1)/n of the total.
double factor_n_minus_1(int n) { return n > 0 ? static_cast<double>(n - 1) / n : 0.0; }
// Broadcast, reduce, send/recv, hypercube: the whole buffer crosses each link once.
double factor_one(int) { return 1.0; }

// A per-rank block of count/n elements, rounded down to 16 bytes (nccl-tests' alignment, so the
// count column matches its output at every size).
std::size_t block(std::size_t count, std::size_t elem_bytes, int n) {
  if (n <= 0) return 0;
  std::size_t per = count / static_cast<std::size_t>(n);
  std::size_t align = elem_bytes > 0 && elem_bytes < 16 ? 16 / elem_bytes : 1;
  return per & ~(align - 1);
}

// --- buffer plans ---
BufferPlan plan_same(std::size_t count, std::size_t, int, int) {
  BufferPlan p;
  p.total = p.send_count = p.recv_count = p.param_count = count;
  return p;
}

// All-gather, gather, hypercube: a block in, n blocks out; in place the input is block `rank`.
BufferPlan plan_gathering(std::size_t count, std::size_t eb, int n, int rank) {
  BufferPlan p;
  std::size_t per_rank = block(count, eb, n);
  p.param_count = p.send_count = per_rank;
  p.total = p.recv_count = per_rank * n;
  p.inplace_send_offset = per_rank * rank;
  return p;
}

// Reduce-scatter, scatter: n blocks in, one out; in place the output is block `rank`.
BufferPlan plan_scattering(std::size_t count, std::size_t eb, int n, int rank) {
  BufferPlan p;
  std::size_t per_rank = block(count, eb, n);
  p.param_count = p.recv_count = per_rank;
  p.total = p.send_count = per_rank * n;
  p.inplace_recv_offset = per_rank * rank;
  return p;
}

BufferPlan plan_alltoall(std::size_t count, std::size_t eb, int n, int) {
  BufferPlan p;
  std::size_t per_pair = block(count, eb, n);
  p.param_count = per_pair;
  p.total = p.send_count = p.recv_count = per_pair * n;
  return p;
}

BufferPlan plan_alltoallv(std::size_t count, std::size_t eb, int n, int rank) {
  BufferPlan p;
  p.param_count = block(count, eb, n);
  std::uint64_t total_bytes = static_cast<std::uint64_t>(p.param_count) * n * eb;
  std::size_t send = 0, recv = 0;
  for (int peer = 0; peer < n && eb > 0; ++peer) {
    send += alltoallv_peer_bytes(rank, peer, n, total_bytes) / eb;
    recv += alltoallv_peer_bytes(peer, rank, n, total_bytes) / eb;
  }
  p.send_count = send;
  p.recv_count = recv;
  p.total = send > recv ? send : recv;
  return p;
}

std::uint64_t hypercube_bytes(const BufferPlan& p, std::size_t eb, int n) {
  return static_cast<std::uint64_t>(p.param_count) * eb * static_cast<std::uint64_t>(n > 0 ? n - 1 : 0);
}

bool power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

const std::vector<CollectiveDesc>& table() {
  // name, call, has_op, has_root, in_place_checked, redop label, factor, plan, algbw bytes, runs_on
  static const std::vector<CollectiveDesc> t = {
      {Collective::AllReduce, "all_reduce", "ncclAllReduce", true, false, true, "", factor_all_reduce,
       plan_same, nullptr, nullptr},
      {Collective::AllGather, "all_gather", "ncclAllGather", false, false, true, "none", factor_n_minus_1,
       plan_gathering, nullptr, nullptr},
      {Collective::ReduceScatter, "reduce_scatter", "ncclReduceScatter", true, false, true, "",
       factor_n_minus_1, plan_scattering, nullptr, nullptr},
      {Collective::Broadcast, "broadcast", "ncclBroadcast", false, true, true, "none", factor_one, plan_same,
       nullptr, nullptr},
      {Collective::Reduce, "reduce", "ncclReduce", true, true, true, "", factor_one, plan_same, nullptr,
       nullptr},
      {Collective::AlltoAll, "alltoall", "ncclAlltoAll", false, false, false, "none", factor_n_minus_1,
       plan_alltoall, nullptr, nullptr},
      // Ring pairs: rank r sends to r+1 and receives from r-1, all ranks at once.
      {Collective::SendRecv, "sendrecv", "ncclSend/ncclRecv", false, false, false, "sum", factor_one,
       plan_same, nullptr, nullptr},
      {Collective::Gather, "gather", "ncclGather", false, true, true, "none", factor_n_minus_1,
       plan_gathering, nullptr, nullptr},
      {Collective::Scatter, "scatter", "ncclScatter", false, true, true, "none", factor_n_minus_1,
       plan_scattering, nullptr, nullptr},
      {Collective::AlltoAllv, "alltoallv", "ncclSend/ncclRecv", false, false, false, "none",
       factor_n_minus_1, plan_alltoallv, nullptr, nullptr},
      // All-gather by recursive doubling: log2(n) grouped send/recv exchanges of growing blocks.
      {Collective::HyperCube, "hypercube", "ncclSend/ncclRecv", false, false, true, "none", factor_one,
       plan_gathering, hypercube_bytes, power_of_two},
  };
  return t;
}

std::string normalise(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '_' || c == '-') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  if (out.size() > 4 && out.compare(out.size() - 4, 4, "perf") == 0) out.resize(out.size() - 4);
  return out;
}
}  // namespace

const CollectiveDesc& describe(Collective c) {
  for (const auto& d : table())
    if (d.id == c) return d;
  return table().front();
}

const std::vector<CollectiveDesc>& all_collectives() { return table(); }

std::optional<Collective> parse_collective(std::string_view text) {
  auto want = normalise(text);
  for (const auto& d : table())
    if (normalise(d.name) == want) return d.id;
  if (want == "a2a") return Collective::AlltoAll;
  if (want == "a2av") return Collective::AlltoAllv;
  if (want == "p2p" || want == "sendrecvring") return Collective::SendRecv;
  return std::nullopt;
}

std::uint64_t algbw_bytes(const CollectiveDesc& d, const BufferPlan& p, std::size_t elem_bytes, int nranks) {
  if (d.algbw_bytes) return d.algbw_bytes(p, elem_bytes, nranks);
  return static_cast<std::uint64_t>(p.total) * elem_bytes;
}

std::uint64_t alltoallv_peer_bytes(int from, int to, int nranks, std::uint64_t total_bytes) {
  return ref::alltoallv_bytes(from, to, nranks, total_bytes);
}

}  // namespace fabscope::bench
