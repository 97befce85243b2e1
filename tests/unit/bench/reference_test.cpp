// The reference check: the O(1) closed forms of reference.hpp agree with a brute-force
// simulation of every rank's inputs, for every collective, type, operator and several rank counts.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "bench/reference.hpp"

using namespace fabscope::bench;

namespace {

// Brute force: reduce input_value over all ranks in 64-bit integers, then wrap like the type.
double brute_reduce(RedOp op, DataType t, int n, std::size_t index) {
  std::int64_t acc = op == RedOp::Prod ? 1 : 0;
  int lo = 1 << 30, hi = -(1 << 30);
  for (int r = 0; r < n; ++r) {
    int v = ref::input_value(op, r, index);
    if (op == RedOp::Prod) acc *= v;
    else acc += v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (op == RedOp::Max) return hi;
  if (op == RedOp::Min) return lo;
  if (op == RedOp::Prod && acc > (1LL << 62)) return ref::is_float_type(t) ? INFINITY : 0;
  if (op == RedOp::Avg) {
    if (ref::is_float_type(t)) return static_cast<double>(acc) / n;
    return static_cast<double>(static_cast<std::int64_t>(ref::wrap_to_type(acc, t)) / n);
  }
  return ref::wrap_to_type(acc, t);
}

}  // namespace

TEST(Reference, ClosedFormReductionMatchesBruteForce) {
  for (DataType t : all_types())
    for (RedOp op : all_ops())
      for (int n : {1, 2, 3, 5, 7, 8, 9, 16, 64, 130})
        for (std::size_t i : {0ul, 1ul, 2ul, 7ul, 8ul, 13ul, 1000003ul}) {
          double want = brute_reduce(op, t, n, i);
          double got = ref::reduced_value(op, t, n, i);
          if (std::isinf(want)) EXPECT_TRUE(std::isinf(got));
          else EXPECT_DOUBLE_EQ(got, want) << type_name(t) << " " << op_name(op) << " n=" << n << " i=" << i;
        }
}

TEST(Reference, InputsAreSmallIntegersExactInEveryType) {
  for (RedOp op : all_ops())
    for (int r = 0; r < 20; ++r)
      for (std::size_t i = 0; i < 50; ++i) {
        int v = ref::input_value(op, r, i);
        EXPECT_GE(v, 0);
        EXPECT_LE(v, 4);
      }
}

TEST(Reference, InputsDifferBetweenRanksSoASwappedBlockIsCaught) {
  int differing = 0;
  for (std::size_t i = 0; i < 100; ++i)
    if (ref::input_value(RedOp::Sum, 0, i) != ref::input_value(RedOp::Sum, 1, i)) ++differing;
  EXPECT_EQ(differing, 100);
}

TEST(Reference, AllGatherBlockSComesFromRankS) {
  auto e = ref::expected(Collective::AllGather, RedOp::Sum, DataType::Float, 4, 1, 0, 10, 25);
  EXPECT_TRUE(e.checked);
  EXPECT_EQ(e.value, ref::input_value(RedOp::Sum, 2, 5));
}

TEST(Reference, ReduceScatterRankRGetsBlockROfTheReduction) {
  auto e = ref::expected(Collective::ReduceScatter, RedOp::Max, DataType::Int32, 4, 3, 0, 10, 4);
  EXPECT_EQ(e.value, ref::reduced_value(RedOp::Max, DataType::Int32, 4, 34));
}

TEST(Reference, AlltoallBlockSIsRankSsBlockForMe) {
  auto e = ref::expected(Collective::AlltoAll, RedOp::Sum, DataType::Float, 4, 2, 0, 10, 37);
  EXPECT_EQ(e.value, ref::input_value(RedOp::Sum, 3, 2 * 10 + 7));
}

TEST(Reference, SendRecvRingReceivesFromThePreviousRank) {
  EXPECT_EQ(ref::expected(Collective::SendRecv, RedOp::Sum, DataType::Float, 4, 0, 0, 100, 9).value,
            ref::input_value(RedOp::Sum, 3, 9));
  EXPECT_EQ(ref::expected(Collective::SendRecv, RedOp::Sum, DataType::Float, 4, 2, 0, 100, 9).value,
            ref::input_value(RedOp::Sum, 1, 9));
}

TEST(Reference, GatherRootHoldsEveryRanksBlockOthersAreNotChecked) {
  auto e = ref::expected(Collective::Gather, RedOp::Sum, DataType::Float, 4, 2, 2, 10, 37);
  EXPECT_TRUE(e.checked);
  EXPECT_EQ(e.value, ref::input_value(RedOp::Sum, 3, 7));
  EXPECT_FALSE(ref::expected(Collective::Gather, RedOp::Sum, DataType::Float, 4, 1, 2, 10, 37).checked);
}

TEST(Reference, ScatterRankRGetsBlockROfTheRootsInput) {
  auto e = ref::expected(Collective::Scatter, RedOp::Sum, DataType::Float, 4, 3, 1, 10, 4);
  EXPECT_EQ(e.value, ref::input_value(RedOp::Sum, 1, 34));
}

TEST(Reference, HypercubeEndsLikeAnAllGather) {
  for (std::size_t i : {0u, 9u, 10u, 39u})
    EXPECT_EQ(ref::expected(Collective::HyperCube, RedOp::Sum, DataType::Int32, 4, 1, 0, 10, i).value,
              ref::expected(Collective::AllGather, RedOp::Sum, DataType::Int32, 4, 1, 0, 10, i).value);
}

TEST(Reference, AlltoallvSegmentsComeFromEachSourceInRankOrder) {
  // 4 ranks, 256 floats per peer (4096 B in all): rank 1 receives 168 floats from rank 0
  // (distance 1), none from itself, 512 from rank 2 (distance 3) and 340 from rank 3 (distance 2),
  // in source order.
  const int n = 4, me = 1;
  auto at = [&](std::size_t i) { return ref::expected(Collective::AlltoAllv, RedOp::Sum, DataType::Float, n, me, 0, 256, i); };
  // Rank 0 sends rank 0 nothing, so rank 1's segment starts at rank 0's element 0.
  EXPECT_EQ(at(0).value, ref::input_value(RedOp::Sum, 0, 0));
  EXPECT_EQ(at(167).value, ref::input_value(RedOp::Sum, 0, 167));
  // Rank 2's segment for rank 1 follows its segment for rank 0 (340 floats): offset 340.
  EXPECT_EQ(at(168).value, ref::input_value(RedOp::Sum, 2, 340));
  // Rank 3's segment for rank 1 follows its segment for rank 0 (distance 1: 168 floats).
  EXPECT_EQ(at(168 + 512).value, ref::input_value(RedOp::Sum, 3, 168));
  EXPECT_TRUE(at(1019).checked);
  EXPECT_FALSE(at(1020).checked);  // past what rank 1 receives
}

TEST(Reference, BroadcastEveryRankHoldsTheRootsInput) {
  EXPECT_EQ(ref::expected(Collective::Broadcast, RedOp::Sum, DataType::Half, 8, 5, 3, 100, 42).value,
            ref::input_value(RedOp::Sum, 3, 42));
}

TEST(Reference, ReduceIsOnlyCheckedOnTheRoot) {
  EXPECT_FALSE(ref::expected(Collective::Reduce, RedOp::Sum, DataType::Float, 4, 1, 2, 10, 0).checked);
  EXPECT_TRUE(ref::expected(Collective::Reduce, RedOp::Sum, DataType::Float, 4, 2, 2, 10, 0).checked);
}

TEST(Reference, NonReducingCollectivesIgnoreTheOperatorForInputs) {
  EXPECT_EQ(ref::input_op(Collective::AllGather, RedOp::Prod), RedOp::Sum);
  EXPECT_EQ(ref::input_op(Collective::AllReduce, RedOp::Prod), RedOp::Prod);
}

TEST(Reference, Int8SumWrapsLikeTheHardware) {
  // 64 ranks of values up to 4: the sum passes 127 and wraps.
  double v = ref::reduced_value(RedOp::Sum, DataType::Int8, 200, 0);
  EXPECT_GE(v, -128);
  EXPECT_LE(v, 127);
}

TEST(Reference, HalfProductPastItsRangeIsInfinite) {
  // 200 ranks: index 0 gets a two from every rank r with r % 8 == 0: 25 twos, past 65504.
  EXPECT_TRUE(std::isinf(ref::reduced_value(RedOp::Prod, DataType::Half, 200, 0)));
  EXPECT_EQ(ref::reduced_value(RedOp::Prod, DataType::Float, 200, 0), std::ldexp(1.0, 25));
}

TEST(Reference, ToleranceIsZeroForExactResultsAndIntegers) {
  EXPECT_EQ(ref::tolerance(DataType::Float, RedOp::Sum, 8, 20), 0);
  EXPECT_EQ(ref::tolerance(DataType::Int32, RedOp::Avg, 8, 2), 0);
  EXPECT_GT(ref::tolerance(DataType::Float, RedOp::Avg, 3, 1.5), 0);
  EXPECT_GT(ref::tolerance(DataType::Bfloat16, RedOp::Sum, 128, 300), 0);  // past 256
}

TEST(Reference, UnwrittenNanSentinelNeverMatches) {
  EXPECT_FALSE(ref::matches(std::numeric_limits<double>::quiet_NaN(), 3, 1));
  EXPECT_TRUE(ref::matches(INFINITY, INFINITY, 0));
  EXPECT_FALSE(ref::matches(3.0001, 3, 0));
}
