// nvlink.*: values shaped like two H200 of an HGX board as NVML reported them
// (tests/fixtures/nvml-h200x2: 18 active links each to NVSwitches, CRC data and ECC data
// counters non-zero, the rest zero), each test changing one fact.
#include <gtest/gtest.h>

#include "checks/checks.hpp"
#include "checks/families.hpp"
#include "core/nvlink_models.hpp"
#include "node_builders.hpp"

using namespace fabscope;
using namespace fabscope::testing;

namespace {
NodeInfo hgx_h200_pair() {
  NodeInfo n;
  for (int i = 0; i < 2; ++i) {
    Gpu g;
    g.index = i;
    g.pci_address = i == 0 ? "0000:00:06.0" : "0000:00:07.0";
    g.name = "NVIDIA H200";
    g.source = "nvml";
    for (int k = 0; k < 18; ++k) {
      NvLink l;
      l.link = k;
      l.active = true;
      l.version_code = 6;
      l.remote_type = "switch";
      l.replay_errors = l.recovery_errors = l.crc_flit_errors = 0;
      l.crc_data_errors = 410;
      l.ecc_data_errors = 798;
      g.nvlinks.push_back(l);
    }
    g.nvlink_total = g.nvlink_active = 18;
    n.gpus.push_back(g);
  }
  GpuPair p;
  p.gpu_a = "0000:00:06.0";
  p.gpu_b = "0000:00:07.0";
  p.level = "NV18";
  p.nvlinks = 18;
  p.source = "nvml";
  p.p2p_read = p.p2p_write = p.p2p_nvlink = p.p2p_atomics = "ok";
  n.gpu_topology.push_back(p);
  return n;
}

GpuPair pcie_pair(const std::string& a, const std::string& b, const std::string& level) {
  GpuPair p;
  p.gpu_a = a;
  p.gpu_b = b;
  p.level = level;
  p.nvlinks = 0;
  p.source = "nvml";
  return p;
}
}  // namespace

TEST(NvlinkChecks, HealthyHgxPairGivesNothing) {
  // CRC data and ECC data counts are corrected errors of healthy links: not judged.
  EXPECT_TRUE(checks::check_nvlink(hgx_h200_pair()).empty());
}

TEST(NvlinkChecks, LinkDownWarnsNamingIt) {
  auto n = hgx_h200_pair();
  n.gpus[1].nvlinks[7].active = false;
  auto fs = with_id(checks::check_nvlink(n), "nvlink.links_down");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].severity, Severity::Warn);
  EXPECT_EQ(fs[0].subject, "GPU1 0000:00:07.0");
  EXPECT_NE(fs[0].evidence.find("links down: 7"), std::string::npos) << fs[0].evidence;
  EXPECT_NE(fs[0].evidence.find("up 17/18"), std::string::npos) << fs[0].evidence;
}

TEST(NvlinkChecks, FewerLinksThanTheModelWarns) {
  auto n = hgx_h200_pair();
  n.gpus[0].nvlinks.resize(12);
  auto fs = with_id(checks::check_nvlink(n), "nvlink.links_missing");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_NE(fs[0].evidence.find("12"), std::string::npos);
  EXPECT_NE(fs[0].evidence.find("18"), std::string::npos);
}

TEST(NvlinkChecks, LoneGpuWithoutLinksIsNotJudged) {
  // One H200 passed through alone: NVML reports no links (tests/fixtures/nvml-h200x1).
  auto n = hgx_h200_pair();
  n.gpus.resize(1);
  n.gpus[0].nvlinks.clear();
  n.gpu_topology.clear();
  EXPECT_TRUE(checks::check_nvlink(n).empty());
}

TEST(NvlinkChecks, UnknownModelOrPcieCardHasNoUsualCount) {
  auto n = hgx_h200_pair();
  for (auto& g : n.gpus) {
    g.name = "NVIDIA H100 PCIe";
    g.nvlinks.resize(4);
  }
  EXPECT_TRUE(with_id(checks::check_nvlink(n), "nvlink.links_missing").empty());
  EXPECT_EQ(usual_nvlink_count("NVIDIA H20"), 18);
  EXPECT_EQ(usual_nvlink_count("NVIDIA A100-SXM4-80GB"), 12);
  EXPECT_FALSE(usual_nvlink_count("NVIDIA L40S"));
}

TEST(NvlinkChecks, PairOverPcieWhereOthersHaveNvlinkWarns) {
  auto n = hgx_h200_pair();
  Gpu g3 = n.gpus[1];
  g3.index = 2;
  g3.pci_address = "0000:00:08.0";
  n.gpus.push_back(g3);
  n.gpu_topology.push_back(pcie_pair("0000:00:06.0", "0000:00:08.0", "SYS"));
  auto nv = n.gpu_topology[0];
  nv.gpu_a = "0000:00:07.0";
  nv.gpu_b = "0000:00:08.0";
  n.gpu_topology.push_back(nv);
  auto fs = with_id(checks::check_nvlink(n), "nvlink.topology_asymmetric");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].subject, "0000:00:06.0-0000:00:08.0");
  EXPECT_NE(fs[0].evidence.find("SYS"), std::string::npos);
}

TEST(NvlinkChecks, NoNvlinkAnywhereIsNotAsymmetric) {
  NodeInfo n;
  n.gpu_topology.push_back(pcie_pair("0000:17:00.0", "0000:65:00.0", "SYS"));
  n.gpu_topology.push_back(pcie_pair("0000:17:00.0", "0000:18:00.0", "PIX"));
  EXPECT_TRUE(checks::check_nvlink(n).empty());
}

TEST(NvlinkChecks, P2pRefusedOverNvlinkWarnsWithNvmlsReason) {
  auto n = hgx_h200_pair();
  n.gpu_topology[0].p2p_read = "disabled_by_regkey";
  n.gpu_topology[0].p2p_write = "disabled_by_regkey";
  auto fs = with_id(checks::check_nvlink(n), "nvlink.p2p_disabled");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_NE(fs[0].evidence.find("read disabled_by_regkey"), std::string::npos) << fs[0].evidence;
  EXPECT_NE(fs[0].remedy.find("NVreg_RegistryDwords"), std::string::npos);
}

TEST(NvlinkChecks, P2pUnreadIsNotJudged) {
  auto n = hgx_h200_pair();
  n.gpu_topology[0].p2p_read = n.gpu_topology[0].p2p_write = n.gpu_topology[0].p2p_nvlink = "";
  EXPECT_TRUE(with_id(checks::check_nvlink(n), "nvlink.p2p_disabled").empty());
}

TEST(NvlinkChecks, ReplayErrorsWarnWithTheirTotals) {
  auto n = hgx_h200_pair();
  n.gpus[0].nvlinks[2].replay_errors = 5;
  n.gpus[0].nvlinks[9].crc_flit_errors = 3;
  auto fs = with_id(checks::check_nvlink(n), "nvlink.errors");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].subject, "GPU0 0000:00:06.0");
  EXPECT_NE(fs[0].evidence.find("replay 5"), std::string::npos) << fs[0].evidence;
  EXPECT_NE(fs[0].evidence.find("CRC flit 3"), std::string::npos) << fs[0].evidence;
  EXPECT_NE(fs[0].evidence.find("links 2,9"), std::string::npos) << fs[0].evidence;
}

TEST(NvlinkChecks, GrowingReplayCounterOverTheIntervalWarns) {
  auto before = hgx_h200_pair(), after = hgx_h200_pair();
  after.gpus[1].nvlinks[4].recovery_errors = 2;
  auto fs = with_id(checks::check_nvlink_rates(before, after, 60), "nvlink.errors_growing");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_NE(fs[0].evidence.find("recovery +2 on links 4 over 60 s"), std::string::npos) << fs[0].evidence;
  // And through run(after, before, seconds), the entry point of check --interval.
  EXPECT_EQ(with_id(checks::run(after, before, 60), "nvlink.errors_growing").size(), 1u);
}

TEST(NvlinkChecks, GrowingCrcDataCountersAreNotJudged) {
  // Under a 1 GiB all-reduce they grew by 1-12 per link on healthy H200s (nvml-h200x2-bench).
  auto before = hgx_h200_pair(), after = hgx_h200_pair();
  for (auto& l : after.gpus[0].nvlinks) {
    *l.crc_data_errors += 12;
    *l.ecc_data_errors += 18;
  }
  EXPECT_TRUE(checks::check_nvlink_rates(before, after, 60).empty());
}

TEST(NvlinkChecks, EveryIdIsRegisteredInTheNodeTable) {
  for (const char* id : {"nvlink.links_down", "nvlink.links_missing", "nvlink.topology_asymmetric",
                         "nvlink.p2p_disabled", "nvlink.errors", "nvlink.errors_growing"})
    EXPECT_NE(find_finding(checks::registry(), id), nullptr) << id;
}
