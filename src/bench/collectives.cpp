#include "bench/collectives.hpp"

#include <cctype>

#include "bench/reference.hpp"
#include "core/error.hpp"

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

// One block on one side, n blocks on the other: all-gather, gather and hypercube gather
// (gathering), reduce-scatter and scatter (the reverse). In place the single block is block
// `rank` of the n.
BufferPlan plan_blocks(std::size_t count, std::size_t eb, int n, int rank, bool gathering) {
  BufferPlan p;
  std::size_t per_rank = block(count, eb, n);
  std::size_t one = per_rank, all = per_rank * n, at = per_rank * rank;
  p.param_count = per_rank;
  p.send_count = gathering ? one : all;
  p.recv_count = gathering ? all : one;
  p.total = all;
  (gathering ? p.inplace_send_offset : p.inplace_recv_offset) = at;
  return p;
}
BufferPlan plan_gathering(std::size_t count, std::size_t eb, int n, int rank) {
  return plan_blocks(count, eb, n, rank, true);
}
BufferPlan plan_scattering(std::size_t count, std::size_t eb, int n, int rank) {
  return plan_blocks(count, eb, n, rank, false);
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

// --- the NCCL calls of one operation (nccl-tests' runColl) ---
// body inside one NCCL group; the group is left (its own failure ignored) when body throws.
template <typename Body>
void grouped(NcclCalls& nccl, Body&& body) {
  nccl.group_start();
  try {
    body();
  } catch (...) {
    nccl.group_end(/*after_error=*/true);
    throw;
  }
  nccl.group_end();
}

void call_all_reduce(NcclCalls& c, const CallArgs& a) { c.all_reduce(a.send, a.recv, a.count); }
void call_all_gather(NcclCalls& c, const CallArgs& a) { c.all_gather(a.send, a.recv, a.count); }
void call_reduce_scatter(NcclCalls& c, const CallArgs& a) { c.reduce_scatter(a.send, a.recv, a.count); }
void call_broadcast(NcclCalls& c, const CallArgs& a) { c.broadcast(a.send, a.recv, a.count, a.root); }
void call_reduce(NcclCalls& c, const CallArgs& a) { c.reduce(a.send, a.recv, a.count, a.root); }

// Ring pairs: rank r sends to r+1 and receives from r-1, all ranks at once.
void call_sendrecv(NcclCalls& c, const CallArgs& a) {
  grouped(c, [&] {
    c.send(a.send, a.count, (a.rank + 1) % a.nranks);
    c.recv(a.recv, a.count, (a.rank - 1 + a.nranks) % a.nranks);
  });
}

// Before NCCL 2.28 (no ncclAlltoAll): a send and a receive of one block per peer in one group.
void call_alltoall(NcclCalls& c, const CallArgs& a) {
  if (c.has_alltoall()) return c.alltoall(a.send, a.recv, a.count);
  const std::size_t block_bytes = a.count * a.elem_bytes;
  grouped(c, [&] {
    for (int peer = 0; peer < a.nranks; ++peer) {
      c.send(a.send + peer * block_bytes, a.count, peer);
      c.recv(a.recv + peer * block_bytes, a.count, peer);
    }
  });
}

// Before NCCL 2.28 (no ncclGather/ncclScatter): the root receives (gather) or sends (scatter)
// one block per rank, itself included.
void rooted_by_pairs(NcclCalls& c, const CallArgs& a, bool gather) {
  const std::size_t block_bytes = a.count * a.elem_bytes;
  grouped(c, [&] {
    if (gather) c.send(a.send, a.count, a.root);
    for (int peer = 0; a.rank == a.root && peer < a.nranks; ++peer) {
      if (gather) c.recv(a.recv + peer * block_bytes, a.count, peer);
      else c.send(a.send + peer * block_bytes, a.count, peer);
    }
    if (!gather) c.recv(a.recv, a.count, a.root);
  });
}

// An empty block makes no call at all.
void call_gather(NcclCalls& c, const CallArgs& a) {
  if (a.count == 0) return;
  if (c.has_gather_scatter()) return c.gather(a.send, a.recv, a.count, a.root);
  rooted_by_pairs(c, a, true);
}

void call_scatter(NcclCalls& c, const CallArgs& a) {
  if (a.count == 0) return;
  if (c.has_gather_scatter()) return c.scatter(a.send, a.recv, a.count, a.root);
  rooted_by_pairs(c, a, false);
}

// nccl-tests' generated pattern: each peer's share packed one after the other in both buffers;
// no call for an empty share.
void call_alltoallv(NcclCalls& c, const CallArgs& a) {
  const std::uint64_t total = static_cast<std::uint64_t>(a.count) * a.nranks * a.elem_bytes;
  grouped(c, [&] {
    const char* s = a.send;
    char* d = a.recv;
    for (int peer = 0; peer < a.nranks; ++peer) {
      std::size_t to_peer = alltoallv_peer_bytes(a.rank, peer, a.nranks, total) / a.elem_bytes;
      std::size_t from_peer = alltoallv_peer_bytes(peer, a.rank, a.nranks, total) / a.elem_bytes;
      if (to_peer) c.send(s, to_peer, peer);
      s += to_peer * a.elem_bytes;
      if (from_peer) c.recv(d, from_peer, peer);
      d += from_peer * a.elem_bytes;
    }
  });
}

// All-gather by recursive doubling. Stage 0 puts the rank's own block in its place in the
// output; stage k (mask 2^(k-1)) swaps the rank's mask-sized run of blocks with rank ^ mask.
int hypercube_stages(int n) {
  int stages = 1;
  for (int mask = 1; mask < n; mask <<= 1) ++stages;
  return stages;
}

void call_hypercube(NcclCalls& c, const CallArgs& a) {
  const std::size_t block_bytes = a.count * a.elem_bytes;
  if (a.stage == 0) {
    char* own = a.recv + a.rank * block_bytes;
    if (own != a.send && block_bytes) c.copy(own, a.send, block_bytes);
    return;
  }
  const int mask = 1 << (a.stage - 1);
  const int send_block = a.rank & ~(mask - 1), recv_block = send_block ^ mask, peer = a.rank ^ mask;
  grouped(c, [&] {
    c.send(a.recv + send_block * block_bytes, a.count * mask, peer);
    c.recv(a.recv + recv_block * block_bytes, a.count * mask, peer);
  });
}

const std::vector<CollectiveDesc>& table() {
  // Indexed by Collective (describe() relies on it). Unnamed fields keep their defaults: no
  // operator or root, in place checked, redop "none", size-column algbw, any rank count, one stage.
  static const std::vector<CollectiveDesc> t = {
      {.id = Collective::AllReduce, .name = "all_reduce", .nccl_call = "ncclAllReduce", .has_op = true,
       .redop_label = "", .busbw_factor = factor_all_reduce, .plan = plan_same, .call = call_all_reduce},
      {.id = Collective::AllGather, .name = "all_gather", .nccl_call = "ncclAllGather",
       .busbw_factor = factor_n_minus_1, .plan = plan_gathering, .call = call_all_gather},
      {.id = Collective::ReduceScatter, .name = "reduce_scatter", .nccl_call = "ncclReduceScatter", .has_op = true,
       .redop_label = "", .busbw_factor = factor_n_minus_1, .plan = plan_scattering, .call = call_reduce_scatter},
      {.id = Collective::Broadcast, .name = "broadcast", .nccl_call = "ncclBroadcast", .has_root = true,
       .busbw_factor = factor_one, .plan = plan_same, .call = call_broadcast},
      {.id = Collective::Reduce, .name = "reduce", .nccl_call = "ncclReduce", .has_op = true, .has_root = true,
       .redop_label = "", .busbw_factor = factor_one, .plan = plan_same, .call = call_reduce},
      {.id = Collective::AlltoAll, .name = "alltoall", .nccl_call = "ncclAlltoAll", .in_place_checked = false,
       .busbw_factor = factor_n_minus_1, .plan = plan_alltoall, .call = call_alltoall},
      {.id = Collective::SendRecv, .name = "sendrecv", .nccl_call = "ncclSend/ncclRecv", .in_place_checked = false,
       .redop_label = "sum", .busbw_factor = factor_one, .plan = plan_same, .call = call_sendrecv},
      {.id = Collective::Gather, .name = "gather", .nccl_call = "ncclGather", .has_root = true,
       .busbw_factor = factor_n_minus_1, .plan = plan_gathering, .call = call_gather},
      {.id = Collective::Scatter, .name = "scatter", .nccl_call = "ncclScatter", .has_root = true,
       .busbw_factor = factor_n_minus_1, .plan = plan_scattering, .call = call_scatter},
      {.id = Collective::AlltoAllv, .name = "alltoallv", .nccl_call = "ncclSend/ncclRecv", .in_place_checked = false,
       .busbw_factor = factor_n_minus_1, .plan = plan_alltoallv, .call = call_alltoallv},
      {.id = Collective::HyperCube, .name = "hypercube", .nccl_call = "ncclSend/ncclRecv",
       .busbw_factor = factor_one, .plan = plan_gathering, .algbw_bytes = hypercube_bytes, .runs_on = power_of_two,
       .call = call_hypercube, .stages = hypercube_stages},
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
  const auto& t = table();
  auto i = static_cast<std::size_t>(c);
  if (i < t.size() && t[i].id == c) return t[i];
  throw Error("internal: no descriptor for collective " + std::to_string(i));
}

int call_stages(const CollectiveDesc& d, int nranks) { return d.stages ? d.stages(nranks) : 1; }

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

double busbw_gbytes_per_s(Collective c, double algbw_gbytes_per_s, int nranks) {
  return algbw_gbytes_per_s * describe(c).busbw_factor(nranks);
}

std::uint64_t alltoallv_peer_bytes(int from, int to, int nranks, std::uint64_t total_bytes) {
  return ref::alltoallv_bytes(from, to, nranks, total_bytes);
}

}  // namespace fabscope::bench
