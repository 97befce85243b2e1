#include "bench/collectives.hpp"

#include <cctype>

namespace fabscope::bench {

namespace {
// --- bus-bandwidth factors (nccl-tests' PERFORMANCE.md derivations) ---
// All-reduce as reduce-scatter + all-gather: every rank sends and receives 2(n-1)/n of the data.
double factor_all_reduce(int n) { return n > 0 ? 2.0 * (n - 1) / n : 0.0; }
// All-gather, reduce-scatter, alltoall: each rank moves (n-1)/n of the total.
double factor_n_minus_1(int n) { return n > 0 ? static_cast<double>(n - 1) / n : 0.0; }
// Broadcast, reduce, send/recv: the whole buffer crosses each link once.
double factor_one(int) { return 1.0; }

// --- buffer plans ---
BufferPlan plan_same(std::size_t count, int, int) {
  BufferPlan p;
  p.total = p.send_count = p.recv_count = p.param_count = count;
  return p;
}

BufferPlan plan_all_gather(std::size_t count, int n, int rank) {
  BufferPlan p;
  std::size_t per_rank = n > 0 ? count / n : 0;
  p.param_count = p.send_count = per_rank;
  p.total = p.recv_count = per_rank * n;
  p.inplace_send_offset = per_rank * rank;
  return p;
}

BufferPlan plan_reduce_scatter(std::size_t count, int n, int rank) {
  BufferPlan p;
  std::size_t per_rank = n > 0 ? count / n : 0;
  p.param_count = p.recv_count = per_rank;
  p.total = p.send_count = per_rank * n;
  p.inplace_recv_offset = per_rank * rank;
  return p;
}

BufferPlan plan_alltoall(std::size_t count, int n, int) {
  BufferPlan p;
  std::size_t per_pair = n > 0 ? count / n : 0;
  p.param_count = per_pair;
  p.total = p.send_count = p.recv_count = per_pair * n;
  return p;
}

const std::vector<CollectiveDesc>& table() {
  static const std::vector<CollectiveDesc> t = {
      {Collective::AllReduce, "all_reduce", "ncclAllReduce", true, false, true, factor_all_reduce,
       plan_same},
      {Collective::AllGather, "all_gather", "ncclAllGather", false, false, true, factor_n_minus_1,
       plan_all_gather},
      {Collective::ReduceScatter, "reduce_scatter", "ncclReduceScatter", true, false, true,
       factor_n_minus_1, plan_reduce_scatter},
      {Collective::Broadcast, "broadcast", "ncclBroadcast", false, true, true, factor_one, plan_same},
      {Collective::Reduce, "reduce", "ncclReduce", true, true, true, factor_one, plan_same},
      {Collective::AlltoAll, "alltoall", "ncclAlltoAll", false, false, false, factor_n_minus_1,
       plan_alltoall},
      // Ring pairs: rank r sends to r+1 and receives from r-1, all ranks at once.
      {Collective::SendRecv, "sendrecv", "ncclSend/ncclRecv", false, false, false, factor_one,
       plan_same},
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
  if (want == "alltoallv" || want == "a2a") return Collective::AlltoAll;
  if (want == "p2p" || want == "sendrecvring") return Collective::SendRecv;
  return std::nullopt;
}

}  // namespace fabscope::bench
