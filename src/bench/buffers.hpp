#pragma once
// Buffer arithmetic of the harness, on plans alone: how large a rank's buffers must be for a
// sweep, and how timed iterations rotate through them (nccl-tests moves each iteration's
// buffers by a whole operation footprint, against cache effects).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "bench/collectives.hpp"

namespace fabscope::bench {

struct BufferBytes {
  std::size_t send = 0;
  std::size_t recv = 0;  // also holds the in-place layout
};

// The largest send and receive buffers any size of the sweep needs on `rank` (at least 256 B
// each, so even an empty plan has somewhere to point).
BufferBytes buffers_for(const CollectiveDesc& d, const std::vector<std::uint64_t>& sizes, std::size_t elem_bytes,
                        int nranks, int rank);

// Iteration k of a size starts at byte offset unit * (k % steps) of both buffers.
struct Rotation {
  std::size_t unit = 0;   // bytes: the plan's footprint (largest of send, receive, in-place)
  std::size_t steps = 1;  // whole footprints that fit in both allocations (at least 1)
  std::size_t offset(std::uint64_t iteration) const { return unit * static_cast<std::size_t>(iteration % steps); }
};
Rotation rotation(const BufferPlan& p, std::size_t elem_bytes, std::size_t send_cap, std::size_t recv_cap);

}  // namespace fabscope::bench
