#pragma once
// One descriptor per collective, one harness (nccl-tests' shape): each descriptor says how many
// elements a rank sends and receives for a size, where the in-place buffers overlap, whether the
// collective takes an operator or a root, and its bus-bandwidth factor. The expected values
// (the reference check) are in reference.hpp, shared by the host and the GPU verifier.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabscope::bench {

enum class Collective { AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, AlltoAll, SendRecv };

// Element counts of one rank for one size. "total" is the count nccl-tests prints: the larger
// of the send and receive buffers, so size = total * type size.
struct BufferPlan {
  std::size_t total = 0;        // elements in the "count" column
  std::size_t send_count = 0;   // elements this rank sends (its input buffer)
  std::size_t recv_count = 0;   // elements this rank receives (its output buffer)
  std::size_t param_count = 0;  // the count argument of the NCCL call
  // In place: one buffer of max(send, recv) elements; input at send_offset, output at recv_offset
  // (NCCL's rule: all-gather sendbuff = recvbuff + rank*count, reduce-scatter recvbuff =
  // sendbuff + rank*count; the others use the same pointer).
  std::size_t inplace_send_offset = 0;
  std::size_t inplace_recv_offset = 0;
  std::size_t inplace_elements() const { return send_count > recv_count ? send_count : recv_count; }
};

struct CollectiveDesc {
  Collective id;
  std::string_view name;        // "all_reduce", as the nccl-tests binary is named without _perf
  std::string_view nccl_call;   // "ncclAllReduce"
  bool has_op;                  // takes a reduction operator (else the redop column says "none")
  bool has_root;                // takes a root (else the root column says -1)
  bool in_place;                // in-place is defined (alltoall and send/recv race on one buffer)
  // busbw = algbw * factor(nranks): what each rank's busiest link carries, so the number can be
  // compared with the link rate whatever the rank count.
  double (*busbw_factor)(int nranks);
  // Elements for a requested element count (size / type size) on nranks ranks, for rank.
  BufferPlan (*plan)(std::size_t count, int nranks, int rank);
};

const CollectiveDesc& describe(Collective c);
const std::vector<CollectiveDesc>& all_collectives();
// "all_reduce", "allreduce", "all_reduce_perf", "AllReduce" all name the same collective.
std::optional<Collective> parse_collective(std::string_view text);

}  // namespace fabscope::bench
