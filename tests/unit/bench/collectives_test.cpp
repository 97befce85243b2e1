// Descriptors: bus-bandwidth factors, buffer plans, names.
#include <gtest/gtest.h>

#include "bench/collectives.hpp"
#include "bench/report.hpp"

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

TEST(BusBw, TimingFromSizeAndTime) {
  // 1 GB in 1000 us = 1000 GB/s algbw; all-reduce on 2 ranks: busbw = algbw.
  Timing t = make_timing(describe(Collective::AllReduce), 2, 1000000000ull, 1e6 / 1000 * 1000);
  EXPECT_DOUBLE_EQ(t.algbw_gbytes_per_s, 1.0);
  Timing u = make_timing(describe(Collective::AllReduce), 4, 4000000000ull, 1e6);
  EXPECT_DOUBLE_EQ(u.algbw_gbytes_per_s, 4.0);
  EXPECT_DOUBLE_EQ(u.busbw_gbytes_per_s, 6.0);
  EXPECT_DOUBLE_EQ(make_timing(describe(Collective::AllReduce), 2, 8, 0).busbw_gbytes_per_s, 0.0);
}

TEST(Plan, AllReduceSendsAndReceivesTheWholeCount) {
  auto p = describe(Collective::AllReduce).plan(1000, 4, 3);
  EXPECT_EQ(p.total, 1000u);
  EXPECT_EQ(p.send_count, 1000u);
  EXPECT_EQ(p.recv_count, 1000u);
  EXPECT_EQ(p.inplace_send_offset, 0u);
  EXPECT_EQ(p.inplace_recv_offset, 0u);
}

TEST(Plan, AllGatherInPlaceInputSitsAtRankTimesCount) {
  auto p = describe(Collective::AllGather).plan(1003, 4, 3);  // rounded down to 4 x 250
  EXPECT_EQ(p.param_count, 250u);
  EXPECT_EQ(p.send_count, 250u);
  EXPECT_EQ(p.recv_count, 1000u);
  EXPECT_EQ(p.total, 1000u);
  EXPECT_EQ(p.inplace_send_offset, 750u);
  EXPECT_EQ(p.inplace_elements(), 1000u);
}

TEST(Plan, ReduceScatterInPlaceOutputSitsAtRankTimesCount) {
  auto p = describe(Collective::ReduceScatter).plan(1000, 4, 2);
  EXPECT_EQ(p.param_count, 250u);
  EXPECT_EQ(p.send_count, 1000u);
  EXPECT_EQ(p.recv_count, 250u);
  EXPECT_EQ(p.inplace_recv_offset, 500u);
}

TEST(Plan, AlltoallMovesCountOverNPerPeer) {
  auto p = describe(Collective::AlltoAll).plan(10, 3, 0);
  EXPECT_EQ(p.param_count, 3u);
  EXPECT_EQ(p.send_count, 9u);
  EXPECT_EQ(p.total, 9u);
}

TEST(Plan, TooSmallForTheRanksIsZero) {
  auto p = describe(Collective::AllGather).plan(2, 3, 1);
  EXPECT_EQ(p.total, 0u);
  EXPECT_EQ(p.param_count, 0u);
}

TEST(Descriptor, InPlaceUndefinedForAlltoallAndSendRecv) {
  EXPECT_FALSE(describe(Collective::AlltoAll).in_place);
  EXPECT_FALSE(describe(Collective::SendRecv).in_place);
  EXPECT_TRUE(describe(Collective::AllReduce).in_place);
}

TEST(Descriptor, OnlyReducingCollectivesTakeAnOperatorAndOnlyRootedOnesARoot) {
  for (const auto& d : all_collectives()) {
    bool reducing = d.id == Collective::AllReduce || d.id == Collective::ReduceScatter || d.id == Collective::Reduce;
    bool rooted = d.id == Collective::Broadcast || d.id == Collective::Reduce;
    EXPECT_EQ(d.has_op, reducing) << d.name;
    EXPECT_EQ(d.has_root, rooted) << d.name;
  }
  EXPECT_EQ(all_collectives().size(), 7u);
}

TEST(Descriptor, NamesParseInEveryUsualSpelling) {
  EXPECT_EQ(parse_collective("all_reduce"), Collective::AllReduce);
  EXPECT_EQ(parse_collective("allreduce"), Collective::AllReduce);
  EXPECT_EQ(parse_collective("all_reduce_perf"), Collective::AllReduce);
  EXPECT_EQ(parse_collective("AllGather"), Collective::AllGather);
  EXPECT_EQ(parse_collective("reduce-scatter"), Collective::ReduceScatter);
  EXPECT_EQ(parse_collective("alltoall_perf"), Collective::AlltoAll);
  EXPECT_EQ(parse_collective("sendrecv"), Collective::SendRecv);
  EXPECT_FALSE(parse_collective("allreduced").has_value());
  EXPECT_FALSE(parse_collective("").has_value());
}
