// Path limits and verdicts: NVLink links x per-link rate, NIC rate across nodes, unknown paths.
#include <gtest/gtest.h>

#include "bench/efficiency.hpp"
#include "probe/probe.hpp"
#include "support/fixtures.hpp"

using namespace fabscope;
using namespace fabscope::bench;

namespace {
Topology nvlink_topo(int links) {
  Topology t;
  t.gpus = 2;
  t.nvlink_active = links;
  t.nvlink_link_gbytes_per_s = 25;
  return t;
}

Report report_with_peak(double busbw, std::uint64_t bytes, const Topology& t) {
  Report r;
  r.topo = t;
  r.env.nranks = 2;
  SizeResult s;
  s.bytes = bytes;
  s.out_of_place.busbw_gbytes_per_s = busbw;
  r.results.push_back(s);
  summarise(r);
  judge(r);
  return r;
}
}  // namespace

TEST(LinkRate, HopperAndAmpereLinksCarry25GBPerDirection) {
  std::string src;
  EXPECT_EQ(nvlink_link_rate("NVIDIA H200", 4u, src), 25.0);
  EXPECT_EQ(src, "NVML NVLink version 4");
  EXPECT_EQ(nvlink_link_rate("NVIDIA A100-SXM4-80GB", std::nullopt, src), 25.0);
  EXPECT_EQ(src, "GPU name");
}

TEST(LinkRate, BlackwellIs50AndUnknownIsUnknown) {
  std::string src;
  EXPECT_EQ(nvlink_link_rate("NVIDIA B200", 7u, src), 50.0);
  EXPECT_FALSE(nvlink_link_rate("Some GPU", std::nullopt, src).has_value());
}

TEST(PathLimit, EighteenNvlinksAre450GBPerSecond) {
  auto l = path_limit(nvlink_topo(18), 2, {});
  ASSERT_TRUE(l.gbytes_per_s);
  EXPECT_DOUBLE_EQ(*l.gbytes_per_s, 450.0);
  EXPECT_EQ(l.path, "NVLink");
  EXPECT_EQ(l.description, "18 links x 25 GB/s");
}

TEST(PathLimit, P2pDisabledHasNoKnownLimit) {
  auto l = path_limit(nvlink_topo(18), 2, {{"NCCL_P2P_DISABLE", "1"}});
  EXPECT_FALSE(l.gbytes_per_s);
  EXPECT_NE(l.description.find("NCCL_P2P_DISABLE"), std::string::npos);
}

TEST(PathLimit, AcrossNodesTheSlowestNicCounts) {
  Topology t = nvlink_topo(18);
  t.nodes = 2;
  t.nics = {{"mlx5_0:1", 400}, {"mlx5_1:1", 200}};
  auto l = path_limit(t, 16, {});
  ASSERT_TRUE(l.gbytes_per_s);
  EXPECT_DOUBLE_EQ(*l.gbytes_per_s, 25.0);
  EXPECT_EQ(l.path, "network");
}

TEST(PathLimit, NoNvlinkOrOneRankIsUnknown) {
  EXPECT_FALSE(path_limit(nvlink_topo(0), 2, {}).gbytes_per_s);
  EXPECT_FALSE(path_limit(nvlink_topo(18), 1, {}).gbytes_per_s);
  Topology multi;
  multi.nodes = 2;
  EXPECT_FALSE(path_limit(multi, 4, {}).gbytes_per_s);
}

TEST(Verdict, SeventyFivePercentOfNvlinkIsGood) {
  auto r = report_with_peak(338, 2ull << 30, nvlink_topo(18));
  EXPECT_EQ(r.summary.verdict_level, "good");
  ASSERT_TRUE(r.summary.efficiency);
  EXPECT_NEAR(*r.summary.efficiency, 338.0 / 450, 1e-9);
  EXPECT_NE(r.summary.verdict.find("75%"), std::string::npos) << r.summary.verdict;
}

TEST(Verdict, LowSaysWhatToCheck) {
  auto r = report_with_peak(100, 2ull << 30, nvlink_topo(18));
  EXPECT_EQ(r.summary.verdict_level, "low");
  EXPECT_NE(r.summary.verdict.find("fabscope probe"), std::string::npos);
}

TEST(Verdict, SmallSweepIsToldToGoLarger) {
  auto r = report_with_peak(250, 16u << 20, nvlink_topo(18));
  EXPECT_EQ(r.summary.verdict_level, "fair");
  EXPECT_NE(r.summary.verdict.find("-e 1G"), std::string::npos) << r.summary.verdict;
}

TEST(Verdict, UnknownLimitGivesNoVerdictAndSaysWhy) {
  auto r = report_with_peak(20, 1u << 30, nvlink_topo(0));
  EXPECT_EQ(r.summary.verdict_level, "unknown");
  EXPECT_FALSE(r.summary.efficiency);
  EXPECT_NE(r.summary.verdict.find("PCIe"), std::string::npos);
}

TEST(Topology, FromTheH200FixtureCountsGpusAndNoRdmaNic) {
  NodeInfo node = probe::collect(core::Root::from_option(fabscope::testing::fixture("h200x2-node").string()));
  auto t = topology_from(node, {}, 1, std::nullopt);
  EXPECT_EQ(t.gpus, 2);
  EXPECT_TRUE(t.nics.empty());
  EXPECT_FALSE(t.nvlink_active);  // the fixture has no NVML: NVLink unknown
}

TEST(Topology, NvlinkOfTheGpusUsedAndActiveRdmaPorts) {
  // The H200 fixture with the NVML answers of the live node filled in (18 links up), and a
  // RoCE port copied from the rxe-vm fixture.
  NodeInfo node = probe::collect(core::Root::from_option(fabscope::testing::fixture("h200x2-node").string()));
  for (auto& g : node.gpus) {
    g.name = "NVIDIA H200";
    g.nvlink_active = 18;
  }
  node.gpus[1].nvlink_active = 12;
  NodeInfo rxe = probe::collect(core::Root::from_option(fabscope::testing::fixture("rxe-vm").string()));
  node.rdma_devices = rxe.rdma_devices;
  auto only_first = topology_from(node, {node.gpus[0].pci_address}, 1, 4u);
  EXPECT_EQ(only_first.nvlink_active, 18);
  EXPECT_EQ(only_first.nvlink_link_gbytes_per_s, 25.0);
  auto both = topology_from(node, {}, 1, 4u);
  EXPECT_EQ(both.nvlink_active, 12);
  for (const auto& n : both.nics) EXPECT_GT(n.rate_gbps, 0);
}
