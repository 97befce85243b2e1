// One size's result from both sides' measurements: what each role reports after the done
// messages crossed (rdma/merge.hpp).
#include <gtest/gtest.h>

#include "rdma/merge.hpp"
#include "rdma/stats.hpp"

using namespace fabscope;
using namespace fabscope::rdma;

namespace {

// A measurement of `iterations` 64 KiB messages over `seconds`, rates filled.
SizeResult measured(std::uint64_t iterations, double seconds) {
  SizeResult r;
  r.bytes = 65536;
  r.iterations = iterations;
  r.total_bytes = iterations * 65536;
  r.seconds = seconds;
  fill_rates(r);
  return r;
}

SizeResult nothing_measured() {
  SizeResult r;
  r.bytes = 65536;
  return r;
}

constexpr BwRole kSender{true, false, false};
constexpr BwRole kReceiverAlone{false, true, false};
constexpr BwRole kPassive{false, false, false};
constexpr BwRole kBothWays{true, false, true};

}  // namespace

TEST(RdmaMergeBw, PassiveSide_ReportsTheInitiatorsMeasurement) {
  const SizeResult theirs = measured(5000, 0.25);
  const SizeResult r = merge_bw(nothing_measured(), theirs, kPassive, std::nullopt);
  EXPECT_EQ(r.iterations, 5000u);
  EXPECT_EQ(r.total_bytes, theirs.total_bytes);
  EXPECT_DOUBLE_EQ(r.seconds, 0.25);
  EXPECT_DOUBLE_EQ(r.gbps, theirs.gbps);
  EXPECT_EQ(r.peer_total_bytes, theirs.total_bytes);
}

TEST(RdmaMergeBw, PassiveSide_ItsCheckOfTheWrittenData_ReplacesThePeers) {
  SizeResult theirs = measured(5000, 0.25);
  theirs.data_verified = true;
  EXPECT_EQ(merge_bw(nothing_measured(), theirs, kPassive, false).data_verified, false);
  EXPECT_EQ(merge_bw(nothing_measured(), theirs, kPassive, std::nullopt).data_verified, true);
}

TEST(RdmaMergeBw, Sender_KeepsItsMeasurementAndTakesThePeersCountAndCheck) {
  const SizeResult mine = measured(5000, 0.25);
  SizeResult theirs = nothing_measured();
  theirs.total_bytes = 5000 * 65536;
  theirs.data_verified = true;
  const SizeResult r = merge_bw(mine, theirs, kSender, std::nullopt);
  EXPECT_EQ(r.iterations, 5000u);
  EXPECT_DOUBLE_EQ(r.gbps, mine.gbps);
  EXPECT_EQ(r.peer_total_bytes, 5000u * 65536);
  EXPECT_EQ(r.data_verified, true);
}

TEST(RdmaMergeBw, ActiveSide_OwnCheckComesBeforeThePeers) {
  SizeResult mine = measured(5000, 0.25);
  mine.data_verified = false;  // a READ that found the wrong bytes
  SizeResult theirs = nothing_measured();
  theirs.data_verified = true;
  EXPECT_EQ(merge_bw(mine, theirs, kSender, std::nullopt).data_verified, false);
}

TEST(RdmaMergeBw, ActiveSide_WrittenCheckComesBeforeItsOwn) {
  SizeResult mine = measured(5000, 0.25);
  mine.data_verified = true;
  EXPECT_EQ(merge_bw(mine, measured(5000, 0.25), kBothWays, false).data_verified, false);
}

TEST(RdmaMergeBw, ReceiverAlone_CountsItsMessagesOverTheSendersSeconds) {
  const SizeResult mine = measured(1000, 0.09);  // first receive came after the first message crossed
  const SizeResult r = merge_bw(mine, measured(1000, 0.1), kReceiverAlone, std::nullopt);
  EXPECT_EQ(r.iterations, 1000u);
  EXPECT_DOUBLE_EQ(r.seconds, 0.1);
  EXPECT_DOUBLE_EQ(r.gbps, 1000.0 * 65536 * 8 / 0.1 / 1e9);
}

TEST(RdmaMergeBw, ReceiverAlone_KeepsItsSecondsWhenTheSenderTimedNothing) {
  const SizeResult r = merge_bw(measured(1000, 0.09), nothing_measured(), kReceiverAlone, std::nullopt);
  EXPECT_DOUBLE_EQ(r.seconds, 0.09);
}

TEST(RdmaMergeBw, Bidirectional_SumsBothSidesOverTheLongerTime) {
  const SizeResult r = merge_bw(measured(5000, 0.25), measured(4000, 0.3), kBothWays, std::nullopt);
  EXPECT_EQ(r.iterations, 9000u);
  EXPECT_EQ(r.total_bytes, 9000u * 65536);
  EXPECT_DOUBLE_EQ(r.seconds, 0.3);
  EXPECT_DOUBLE_EQ(r.gbps, 9000.0 * 65536 * 8 / 0.3 / 1e9);
  EXPECT_EQ(r.peer_total_bytes, 4000u * 65536);
}

TEST(RdmaMergeLat, Client_ReportsItsSamplesWithTheServersCount) {
  SizeResult mine = measured(1000, 0.01);
  mine.latency = LatencyStats{1, 2, 3, 4, 2.5};
  SizeResult server = nothing_measured();
  server.total_bytes = 1000 * 65536;
  const SizeResult r = merge_lat(mine, server, true, Op::Write);
  ASSERT_TRUE(r.latency);
  EXPECT_EQ(r.latency->median_us, 2);
  EXPECT_EQ(r.iterations, 1000u);
  EXPECT_EQ(r.peer_total_bytes, 1000u * 65536);
}

TEST(RdmaMergeLat, Server_ReportsTheClientsMeasurementWithItsOwnCount) {
  SizeResult client = measured(1000, 0.01);
  client.latency = LatencyStats{1, 2, 3, 4, 2.5};
  SizeResult mine = nothing_measured();
  mine.total_bytes = 999 * 65536;
  const SizeResult r = merge_lat(mine, client, false, Op::Send);
  ASSERT_TRUE(r.latency);
  EXPECT_EQ(r.iterations, 1000u);
  EXPECT_EQ(r.peer_total_bytes, 999u * 65536);
}

TEST(RdmaMergeLat, Read_HasNoPeerCount) {
  SizeResult server = nothing_measured();
  server.total_bytes = 65536;
  EXPECT_FALSE(merge_lat(measured(1000, 0.01), server, true, Op::Read).peer_total_bytes);
  EXPECT_FALSE(merge_lat(nothing_measured(), measured(1000, 0.01), false, Op::Read).peer_total_bytes);
}
