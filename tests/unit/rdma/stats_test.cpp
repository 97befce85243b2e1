// Latency percentiles, rates, efficiency and the verdict of fabscope rdma.
#include <gtest/gtest.h>

#include "rdma/stats.hpp"

using namespace fabscope;
using namespace fabscope::rdma;

TEST(RdmaStats, LatencyStats_NearestRankPercentiles) {
  std::vector<double> s;
  for (int i = 100; i >= 1; --i) s.push_back(i);  // unsorted on purpose
  auto st = latency_stats(s);
  EXPECT_EQ(st.min_us, 1);
  EXPECT_EQ(st.max_us, 100);
  EXPECT_EQ(st.median_us, 50);
  EXPECT_EQ(st.p99_us, 99);
  EXPECT_DOUBLE_EQ(st.mean_us, 50.5);
  EXPECT_EQ(latency_stats({}).max_us, 0);
  EXPECT_EQ(latency_stats({7}).p99_us, 7);
}

TEST(RdmaStats, FillRates_GbpsMibAndMessageRate) {
  SizeResult r;
  r.iterations = 1000000;
  r.total_bytes = 125'000'000;  // 1 Gbit
  r.seconds = 0.5;
  fill_rates(r);
  EXPECT_DOUBLE_EQ(r.gbps, 2.0);
  EXPECT_DOUBLE_EQ(r.mib_per_s, 250'000'000 / 1048576.0);
  EXPECT_DOUBLE_EQ(r.msg_rate_mpps, 2.0);
}

namespace {
Result bw_result(double gbps, double rate, bool software = false) {
  Result r;
  r.options = normalized(Options{});
  r.local.device = "mlx5_0";
  r.local.rate_gbps = rate;
  r.remote.rate_gbps = rate;
  r.local.software = software;
  SizeResult s;
  s.bytes = 65536;
  s.gbps = gbps;
  r.sizes.push_back(s);
  r.completed = true;
  return r;
}
}  // namespace

TEST(RdmaStats, Judge_HealthyLinkIsOk) {
  Result r = bw_result(370, 400);
  judge(r);
  EXPECT_NEAR(*r.efficiency, 0.925, 1e-9);
  EXPECT_EQ(r.verdict.rfind("OK", 0), 0u) << r.verdict;
  EXPECT_TRUE(r.findings.empty());
}

TEST(RdmaStats, Judge_LowBandwidthWarns) {
  Result r = bw_result(150, 400);
  judge(r);
  EXPECT_EQ(r.verdict.rfind("WARN", 0), 0u) << r.verdict;
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].id, "rdma.low_bandwidth");
  EXPECT_EQ(exit_code_for(r.findings), 1);
}

TEST(RdmaStats, Judge_SoftwareDeviceIsNotJudgedOnRate) {
  Result r = bw_result(1, 10, true);
  judge(r);
  EXPECT_TRUE(r.findings.empty());
  EXPECT_NE(r.verdict.find("software"), std::string::npos) << r.verdict;
}

TEST(RdmaStats, Judge_BidirectionalComparesWithTwiceTheRate) {
  Result r = bw_result(740, 400);
  r.options.bidirectional = true;
  judge(r);
  EXPECT_NEAR(*r.efficiency, 0.925, 1e-9);
}

TEST(RdmaStats, Judge_MtuMismatchWarns) {
  Result r = bw_result(370, 400);
  r.local.active_mtu = 4096;
  r.remote.active_mtu = 1024;
  judge(r);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id, "rdma.mtu_mismatch");
}

TEST(RdmaStats, Judge_IncompleteRunFails) {
  Result r = bw_result(0, 400);
  r.completed = false;
  judge(r);
  EXPECT_EQ(r.verdict.rfind("FAIL", 0), 0u);
}
