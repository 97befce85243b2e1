// Descriptors: bus-bandwidth factors, buffer plans, names.
#include <gtest/gtest.h>

#include "bench/collectives.hpp"
#include "bench/results.hpp"

using namespace fabscope::bench;

TEST(BusBw, AllReduceFactorIsTwoNMinusOneOverN) {
  const auto& d = describe(Collective::AllReduce);
  EXPECT_DOUBLE_EQ(d.busbw_factor(2), 1.0);
  EXPECT_DOUBLE_EQ(d.busbw_factor(8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(d.busbw_factor(1), 0.0);
}

TEST(BusBw, GatherScatterAlltoallFactorIsNMinusOneOverN) {
  for (auto c : {Collective::AllGather, Collective::ReduceScatter, Collective::AlltoAll}) {
    EXPECT_DOUBLE_EQ(describe(c).busbw_factor(2), 0.5) << describe(c).name;
    EXPECT_DOUBLE_EQ(describe(c).busbw_factor(16), 15.0 / 16) << describe(c).name;
  }
}

TEST(BusBw, BroadcastReduceSendRecvFactorIsOne) {
  for (auto c : {Collective::Broadcast, Collective::Reduce, Collective::SendRecv})
    for (int n : {2, 3, 64}) EXPECT_DOUBLE_EQ(describe(c).busbw_factor(n), 1.0) << describe(c).name;
}

TEST(BusBw, BusBandwidthIsAlgbwTimesTheCollectivesFactor) {
  // 8 ranks, algbw 100 GB/s.
  EXPECT_DOUBLE_EQ(busbw_gbytes_per_s(Collective::AllReduce, 100, 8), 100 * 2.0 * 7 / 8);
  for (auto c : {Collective::AllGather, Collective::ReduceScatter, Collective::AlltoAll, Collective::Gather,
                 Collective::Scatter, Collective::AlltoAllv})
    EXPECT_DOUBLE_EQ(busbw_gbytes_per_s(c, 100, 8), 100 * 7.0 / 8) << describe(c).name;
  for (auto c : {Collective::Broadcast, Collective::Reduce, Collective::SendRecv, Collective::HyperCube})
    EXPECT_DOUBLE_EQ(busbw_gbytes_per_s(c, 100, 8), 100.0) << describe(c).name;
}

TEST(BusBw, OneRankMovesNothingOverALinkForAllReduce) {
  EXPECT_DOUBLE_EQ(busbw_gbytes_per_s(Collective::AllReduce, 100, 1), 0.0);
  EXPECT_DOUBLE_EQ(busbw_gbytes_per_s(Collective::AllGather, 100, 1), 0.0);
  EXPECT_DOUBLE_EQ(busbw_gbytes_per_s(Collective::Broadcast, 100, 1), 100.0);
}

TEST(BusBw, TimingFromSizeAndTime) {
  // 1 GB in 1000 us = 1000 GB/s algbw; all-reduce on 2 ranks: busbw = algbw.
  Timing t = make_timing(describe(Collective::AllReduce), 2, 1000000000ull, 1e6 / 1000 * 1000);
  EXPECT_DOUBLE_EQ(t.algbw_gbytes_per_s, 1.0);
  Timing u = make_timing(describe(Collective::AllReduce), 4, 4000000000ull, 1e6);
  EXPECT_DOUBLE_EQ(u.algbw_gbytes_per_s, 4.0);
  EXPECT_DOUBLE_EQ(u.busbw_gbytes_per_s, 6.0);
  EXPECT_DOUBLE_EQ(make_timing(describe(Collective::AllReduce), 2, 8, 0).busbw_gbytes_per_s, 0.0);
}

// Plans below are nccl-tests 2.19.6's getCollByteCount for the same count, element size and
// rank count (src/*.cu: per-rank blocks rounded down to 16 bytes).
TEST(Plan, AllReduceSendsAndReceivesTheWholeCount) {
  auto p = describe(Collective::AllReduce).plan(1000, 4, 4, 3);
  EXPECT_EQ(p.total, 1000u);
  EXPECT_EQ(p.send_count, 1000u);
  EXPECT_EQ(p.recv_count, 1000u);
  EXPECT_EQ(p.inplace_send_offset, 0u);
  EXPECT_EQ(p.inplace_recv_offset, 0u);
}

TEST(Plan, AllGatherBlocksRoundDownTo16BytesAndInPlaceInputSitsAtRankTimesBlock) {
  auto p = describe(Collective::AllGather).plan(1003, 4, 4, 3);  // 250 floats -> 248 (992 B)
  EXPECT_EQ(p.param_count, 248u);
  EXPECT_EQ(p.send_count, 248u);
  EXPECT_EQ(p.recv_count, 992u);
  EXPECT_EQ(p.total, 992u);
  EXPECT_EQ(p.inplace_send_offset, 744u);
  EXPECT_EQ(p.inplace_elements(), 992u);
}

TEST(Plan, AlignmentFollowsTheElementSize) {
  EXPECT_EQ(describe(Collective::AllGather).plan(100, 1, 2, 0).param_count, 48u);  // int8: 16 elements
  EXPECT_EQ(describe(Collective::AllGather).plan(100, 8, 2, 0).param_count, 50u);  // double: 2 elements
  EXPECT_EQ(describe(Collective::AllGather).plan(2, 4, 1, 0).param_count, 0u);     // 8 B on 1 rank
}

TEST(Plan, ReduceScatterInPlaceOutputSitsAtRankTimesBlock) {
  auto p = describe(Collective::ReduceScatter).plan(1000, 4, 4, 2);
  EXPECT_EQ(p.param_count, 248u);
  EXPECT_EQ(p.send_count, 992u);
  EXPECT_EQ(p.recv_count, 248u);
  EXPECT_EQ(p.inplace_recv_offset, 496u);
}

TEST(Plan, AlltoallMovesCountOverNPerPeer) {
  auto p = describe(Collective::AlltoAll).plan(40, 4, 3, 0);  // 13 -> 12 per peer
  EXPECT_EQ(p.param_count, 12u);
  EXPECT_EQ(p.send_count, 36u);
  EXPECT_EQ(p.total, 36u);
}

TEST(Plan, GatherLikeAllGatherScatterLikeReduceScatter) {
  auto g = describe(Collective::Gather).plan(1024, 4, 4, 1);
  EXPECT_EQ(g.send_count, 256u);
  EXPECT_EQ(g.recv_count, 1024u);
  EXPECT_EQ(g.inplace_send_offset, 256u);
  auto s = describe(Collective::Scatter).plan(1024, 4, 4, 1);
  EXPECT_EQ(s.send_count, 1024u);
  EXPECT_EQ(s.recv_count, 256u);
  EXPECT_EQ(s.inplace_recv_offset, 256u);
}

TEST(Plan, HypercubeAlgbwCountsTheBlocksFromTheOtherRanks) {
  const auto& d = describe(Collective::HyperCube);
  auto p = d.plan(1024, 4, 4, 0);
  EXPECT_EQ(p.param_count, 256u);
  EXPECT_EQ(p.total, 1024u);
  EXPECT_EQ(algbw_bytes(d, p, 4, 4), 256u * 4 * 3);
  EXPECT_EQ(algbw_bytes(describe(Collective::AllGather), p, 4, 4), 1024u * 4);
  EXPECT_TRUE(d.runs_on(8));
  EXPECT_FALSE(d.runs_on(6));
}

TEST(Plan, AlltoallvSendsByRingDistance) {
  // nccl-tests' generated pattern: 4 ranks, 1024 floats -> 256 per peer, 4096 B in total;
  // distances 1, 2, 3 of a sum of 6 get 1/6, 2/6, 3/6 of it, each rounded down to 16 B.
  EXPECT_EQ(alltoallv_peer_bytes(0, 0, 4, 4096), 0u);
  EXPECT_EQ(alltoallv_peer_bytes(0, 1, 4, 4096), 672u);   // 682.7 -> 672
  EXPECT_EQ(alltoallv_peer_bytes(0, 2, 4, 4096), 1360u);  // 1365.3 -> 1360
  EXPECT_EQ(alltoallv_peer_bytes(0, 3, 4, 4096), 2048u);
  EXPECT_EQ(alltoallv_peer_bytes(3, 0, 4, 4096), 672u);
  EXPECT_EQ(alltoallv_peer_bytes(0, 0, 1, 4100), 4096u);  // one rank keeps it all
  auto p = describe(Collective::AlltoAllv).plan(1024, 4, 4, 2);
  EXPECT_EQ(p.param_count, 256u);
  EXPECT_EQ(p.send_count, (672u + 1360u + 2048u) / 4);
  EXPECT_EQ(p.recv_count, p.send_count);
  EXPECT_EQ(p.total, 1020u);
}

TEST(Plan, SendRecvInPlaceUsesOneBufferForBothDirections) {
  const auto& d = describe(Collective::SendRecv);
  auto p = d.plan(1000, 4, 2, 1);
  EXPECT_EQ(p.inplace_send_offset, 0u);
  EXPECT_EQ(p.inplace_recv_offset, 0u);
  EXPECT_EQ(p.inplace_elements(), 1000u);
  EXPECT_FALSE(d.in_place_checked);  // timed, #wrong N/A, as nccl-tests
  EXPECT_EQ(d.redop_label, "sum");   // nccl-tests prints the -o operator for sendrecv
}

TEST(Plan, TooSmallForTheRanksIsZero) {
  auto p = describe(Collective::AllGather).plan(2, 4, 3, 1);
  EXPECT_EQ(p.total, 0u);
  EXPECT_EQ(p.param_count, 0u);
}

TEST(Descriptor, InPlaceIsCheckedExceptWhereItIsARace) {
  for (auto c : {Collective::AlltoAll, Collective::AlltoAllv, Collective::SendRecv})
    EXPECT_FALSE(describe(c).in_place_checked) << describe(c).name;
  for (auto c : {Collective::AllReduce, Collective::AllGather, Collective::Gather, Collective::Scatter,
                 Collective::HyperCube})
    EXPECT_TRUE(describe(c).in_place_checked) << describe(c).name;
}

TEST(Descriptor, OnlyReducingCollectivesTakeAnOperatorAndOnlyRootedOnesARoot) {
  for (const auto& d : all_collectives()) {
    bool reducing = d.id == Collective::AllReduce || d.id == Collective::ReduceScatter || d.id == Collective::Reduce;
    bool rooted = d.id == Collective::Broadcast || d.id == Collective::Reduce || d.id == Collective::Gather ||
                  d.id == Collective::Scatter;
    EXPECT_EQ(d.has_op, reducing) << d.name;
    EXPECT_EQ(d.has_root, rooted) << d.name;
  }
  EXPECT_EQ(all_collectives().size(), 11u);  // every *_perf of nccl-tests 2.19.6
}

TEST(Descriptor, NamesParseInEveryUsualSpelling) {
  EXPECT_EQ(parse_collective("all_reduce"), Collective::AllReduce);
  EXPECT_EQ(parse_collective("allreduce"), Collective::AllReduce);
  EXPECT_EQ(parse_collective("all_reduce_perf"), Collective::AllReduce);
  EXPECT_EQ(parse_collective("AllGather"), Collective::AllGather);
  EXPECT_EQ(parse_collective("reduce-scatter"), Collective::ReduceScatter);
  EXPECT_EQ(parse_collective("alltoall_perf"), Collective::AlltoAll);
  EXPECT_EQ(parse_collective("sendrecv"), Collective::SendRecv);
  EXPECT_EQ(parse_collective("alltoallv_perf"), Collective::AlltoAllv);
  EXPECT_EQ(parse_collective("hypercube"), Collective::HyperCube);
  EXPECT_EQ(parse_collective("gather"), Collective::Gather);
  EXPECT_EQ(parse_collective("scatter_perf"), Collective::Scatter);
  EXPECT_FALSE(parse_collective("allreduced").has_value());
  EXPECT_FALSE(parse_collective("").has_value());
}
