#pragma once
// One descriptor per collective, one harness (nccl-tests' shape): each descriptor says how many
// elements a rank sends and receives for a size, where the in-place buffers overlap, whether the
// collective takes an operator or a root, its bus-bandwidth factor and the NCCL calls of one
// operation (nccl-tests' runColl). The expected values (the reference check) are in
// reference.hpp, shared by the host and the GPU verifier.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabscope::bench {

// Every collective of nccl-tests 2.19.6 (one *_perf binary each).
enum class Collective {
  AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, AlltoAll, SendRecv, Gather, Scatter,
  AlltoAllv, HyperCube
};

// Element counts of one rank for one size. "total" is the count nccl-tests prints: the larger
// of the send and receive buffers, so size = total * type size.
struct BufferPlan {
  std::size_t total = 0;        // elements in the "count" column
  std::size_t send_count = 0;   // elements this rank sends (its input buffer)
  std::size_t recv_count = 0;   // elements this rank receives (its output buffer)
  std::size_t param_count = 0;  // the count argument of the NCCL call (per peer for alltoall(v))
  // In place: one buffer of max(send, recv) elements; input at send_offset, output at recv_offset
  // (NCCL's rule: all-gather sendbuff = recvbuff + rank*count, reduce-scatter recvbuff =
  // sendbuff + rank*count; the others use the same pointer).
  std::size_t inplace_send_offset = 0;
  std::size_t inplace_recv_offset = 0;
  std::size_t inplace_elements() const {
    std::size_t a = inplace_send_offset + send_count, b = inplace_recv_offset + recv_count;
    return a > b ? a : b;
  }
};

// The NCCL entry points the calls of a collective use, bound to one rank: its communicator, its
// stream, and the element type and operator of the run. gpu/nccl_calls.cpp forwards them to
// libnccl; the unit tests record them. Each throws fabscope::Error naming the NCCL function and
// the rank when NCCL fails. Counts are elements, peers and roots are ranks.
class NcclCalls {
 public:
  virtual ~NcclCalls() = default;
  virtual void all_reduce(const void* send, void* recv, std::size_t count) = 0;
  virtual void all_gather(const void* send, void* recv, std::size_t count) = 0;
  virtual void reduce_scatter(const void* send, void* recv, std::size_t count) = 0;
  virtual void broadcast(const void* send, void* recv, std::size_t count, int root) = 0;
  virtual void reduce(const void* send, void* recv, std::size_t count, int root) = 0;
  // ncclAlltoAll, ncclGather and ncclScatter appeared in NCCL 2.28: false where the loaded
  // library lacks them, and the calls below are never made (send/recv pairs instead).
  virtual bool has_alltoall() const = 0;
  virtual bool has_gather_scatter() const = 0;
  virtual void alltoall(const void* send, void* recv, std::size_t count) = 0;
  virtual void gather(const void* send, void* recv, std::size_t count, int root) = 0;
  virtual void scatter(const void* send, void* recv, std::size_t count, int root) = 0;
  virtual void send(const void* buf, std::size_t count, int peer) = 0;
  virtual void recv(void* buf, std::size_t count, int peer) = 0;
  virtual void group_start() = 0;
  // after_error: the group is being left because a call inside it threw; failures are ignored.
  virtual void group_end(bool after_error = false) = 0;
  // Device-to-device copy of bytes on the rank's stream.
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;
};

// One operation of one rank: the buffers (in-place offsets and rotation already applied by the
// harness), the plan's param_count, and the run's shape.
struct CallArgs {
  const char* send = nullptr;
  char* recv = nullptr;
  std::size_t count = 0;       // BufferPlan::param_count
  std::size_t elem_bytes = 0;
  int rank = 0;
  int nranks = 1;
  int root = 0;
  int stage = 0;               // 0 .. stages(nranks) - 1
};

struct CollectiveDesc {
  Collective id = Collective::AllReduce;
  std::string_view name;        // "all_reduce", as the nccl-tests binary is named without _perf
  std::string_view nccl_call;   // "ncclAllReduce"
  bool has_op = false;          // takes a reduction operator (--op)
  bool has_root = false;        // takes a root (else the root column says -1)
  // In place is timed for every collective, as nccl-tests does. Where the in-place form is a
  // race by definition (alltoall(v), send/recv read and write one buffer), its values are not
  // checked: #wrong says N/A, as in nccl-tests.
  bool in_place_checked = true;
  // The redop column: the operator's name where has_op; else this text ("none"; nccl-tests
  // prints the -o operator for sendrecv, whose loop runs over operators without using them).
  std::string_view redop_label = "none";
  // busbw = algbw * factor(nranks): what each rank's busiest link carries, so the number can be
  // compared with the link rate whatever the rank count.
  double (*busbw_factor)(int nranks) = nullptr;
  // Elements for a requested element count (size / type size) of elem_bytes each, on nranks
  // ranks, for rank. Per-rank blocks are rounded down to 16 bytes, as nccl-tests does.
  BufferPlan (*plan)(std::size_t count, std::size_t elem_bytes, int nranks, int rank) = nullptr;
  // Bytes the algorithm bandwidth divides by the time; 0 = the size column. nccl-tests' hypercube
  // counts the (n-1) blocks a rank receives.
  std::uint64_t (*algbw_bytes)(const BufferPlan& p, std::size_t elem_bytes, int nranks) = nullptr;
  // Rank counts it runs on (hypercube: powers of two); nullptr = any.
  bool (*runs_on)(int nranks) = nullptr;
  // The NCCL calls of stage a.stage of one operation on one rank (nccl-tests' runColl).
  void (*call)(NcclCalls& nccl, const CallArgs& a) = nullptr;
  // Stages of one operation; nullptr = 1. Stage k of every local rank is issued (in one group
  // where a process drives several GPUs) before stage k+1 of any: hypercube's step k sends what
  // step k-1 received.
  int (*stages)(int nranks) = nullptr;
};

// Stages of one operation of d on nranks ranks (1 unless the descriptor says).
int call_stages(const CollectiveDesc& d, int nranks);

const CollectiveDesc& describe(Collective c);
const std::vector<CollectiveDesc>& all_collectives();
// "all_reduce", "allreduce", "all_reduce_perf", "AllReduce" all name the same collective.
std::optional<Collective> parse_collective(std::string_view text);

// The bytes algbw is computed from for a plan (the size column unless the descriptor says).
std::uint64_t algbw_bytes(const CollectiveDesc& d, const BufferPlan& p, std::size_t elem_bytes, int nranks);

// busbw = algbw x the collective's factor on nranks ranks (docs/bench.md): the one place it is
// computed, for the bench's results, tune's measurements, its simulated cost model and its CSV.
double busbw_gbytes_per_s(Collective c, double algbw_gbytes_per_s, int nranks);

// nccl-tests' generated alltoallv pattern (no traffic-matrix file, spread 1.0): rank `from`
// sends rank `to` a share of total_bytes proportional to their ring distance (to - from) mod n,
// rounded down to 16 bytes; a rank sends nothing to itself (all of it when n == 1).
std::uint64_t alltoallv_peer_bytes(int from, int to, int nranks, std::uint64_t total_bytes);

}  // namespace fabscope::bench
