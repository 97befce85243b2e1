// The bandwidth loop's wr_id: the QP and the number of sends a completion covers (rdma/wr_id.hpp).
#include <gtest/gtest.h>

#include "rdma/wr_id.hpp"

using namespace fabscope::rdma;

TEST(RdmaWrId, Send_QpInTheHighHalfCountInTheLow) {
  EXPECT_EQ(pack_send_wr_id(0, 1), 1u);
  EXPECT_EQ(pack_send_wr_id(3, 64), (std::uint64_t{3} << 32) | 64);
}

TEST(RdmaWrId, Send_UnpacksToWhatWasPacked) {
  for (int qp : {0, 1, 63})
    for (std::uint64_t covered : {1ull, 64ull, 8191ull, 0xffffffffull}) {
      const SendWrId id = unpack_send_wr_id(pack_send_wr_id(qp, covered));
      EXPECT_EQ(id.qp, qp);
      EXPECT_EQ(id.covered, covered);
    }
}

TEST(RdmaWrId, Recv_IsItsQp) {
  EXPECT_EQ(recv_wr_id(5), 5u);
  EXPECT_EQ(recv_wr_qp(recv_wr_id(63)), 63);
}
