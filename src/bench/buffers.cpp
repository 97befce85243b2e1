#include "bench/buffers.hpp"

#include <algorithm>

namespace fabscope::bench {

BufferBytes buffers_for(const CollectiveDesc& d, const std::vector<std::uint64_t>& sizes, std::size_t elem_bytes,
                        int nranks, int rank) {
  BufferBytes b{256, 256};
  if (elem_bytes == 0) return b;
  for (auto bytes : sizes) {
    BufferPlan p = d.plan(bytes / elem_bytes, elem_bytes, nranks, rank);
    b.send = std::max(b.send, p.send_count * elem_bytes);
    b.recv = std::max(b.recv, std::max(p.recv_count, p.inplace_elements()) * elem_bytes);
  }
  return b;
}

Rotation rotation(const BufferPlan& p, std::size_t elem_bytes, std::size_t send_cap, std::size_t recv_cap) {
  Rotation r;
  r.unit = std::max({p.send_count, p.recv_count, p.inplace_elements()}) * elem_bytes;
  std::size_t cap = std::min(send_cap, recv_cap);
  r.steps = r.unit ? std::max<std::size_t>(1, cap / r.unit) : 1;
  return r;
}

}  // namespace fabscope::bench
