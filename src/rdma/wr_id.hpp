#pragma once
// The wr_id of the bandwidth loop's work requests: what a completion must tell the loop. Only
// one send in a batch is signalled, so its completion stands for the whole batch: a send's wr_id
// carries the QP in the high 32 bits and the number of sends its completion covers in the low 32
// (at most tx_depth, far below 2^32). A receive's wr_id is its QP, where it is posted again.
#include <cstdint>

namespace fabscope::rdma {

struct SendWrId {
  int qp = 0;
  std::uint64_t covered = 0;  // sends this completion stands for, itself included
};

constexpr std::uint64_t pack_send_wr_id(int qp, std::uint64_t covered) {
  return (static_cast<std::uint64_t>(qp) << 32) | covered;
}
constexpr SendWrId unpack_send_wr_id(std::uint64_t wr_id) {
  return {static_cast<int>(wr_id >> 32), wr_id & 0xffffffffu};
}

constexpr std::uint64_t recv_wr_id(int qp) { return static_cast<std::uint64_t>(qp); }
constexpr int recv_wr_qp(std::uint64_t wr_id) { return static_cast<int>(wr_id); }

}  // namespace fabscope::rdma
