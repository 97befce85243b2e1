// gdr.* and pcie.*: each test changes one value of a healthy node (node_builders.hpp).
#include <gtest/gtest.h>

#include <algorithm>

#include "checks/families.hpp"
#include "node_builders.hpp"

using namespace fabscope;
using namespace fabscope::testing;

namespace {
void drop_module(NodeInfo& n, const std::string& name) {
  auto& m = n.kernel.modules;
  m.erase(std::remove(m.begin(), m.end(), name), m.end());
}
}  // namespace

TEST(GdrCheck, HealthyNodeHasNoFindings) { EXPECT_TRUE(checks::check_gdr(healthy_ib_node()).empty()); }

TEST(GdrCheck, PeermemNotLoaded_Warns) {
  NodeInfo n = healthy_ib_node();
  drop_module(n, "nvidia_peermem");
  auto fs = checks::check_gdr(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "gdr.peermem_missing");
  EXPECT_EQ(fs[0].severity, Severity::Warn);
  EXPECT_NE(fs[0].evidence.find("HCAs mlx5_0,mlx5_1"), std::string::npos) << fs[0].evidence;
  EXPECT_NE(fs[0].remedy.find("modprobe nvidia_peermem"), std::string::npos);
}

TEST(GdrCheck, LegacyNvPeerMemCounts) {
  NodeInfo n = healthy_ib_node();
  drop_module(n, "nvidia_peermem");
  n.kernel.modules.push_back("nv_peer_mem");
  EXPECT_TRUE(checks::check_gdr(n).empty());
}

TEST(GdrCheck, UnknownModuleListIsNotJudged) {
  NodeInfo n = healthy_ib_node();
  n.kernel.modules.clear();
  EXPECT_TRUE(checks::check_gdr(n).empty());
}

TEST(GdrCheck, NoGpuOrNoHcaIsNotJudged) {
  NodeInfo n = healthy_ib_node();
  drop_module(n, "nvidia_peermem");
  NodeInfo no_gpu = n;
  no_gpu.gpus.clear();
  EXPECT_TRUE(checks::check_gdr(no_gpu).empty());
  NodeInfo soft = n;  // only software RDMA (rxe): GPUDirect RDMA does not apply
  for (auto& d : soft.rdma_devices) d.pci_address.clear();
  EXPECT_TRUE(checks::check_gdr(soft).empty());
}

TEST(PcieCheck, HealthyNodeHasNoFindings) { EXPECT_TRUE(checks::check_pcie(healthy_ib_node()).empty()); }

TEST(PcieCheck, GpuAtLowerSpeed_IsInfoBecauseIdleGpusDownclock) {
  NodeInfo n = healthy_ib_node();
  pci_dev(n, "0000:18:00.0").current_link_speed_gts = 2.5;
  auto fs = checks::check_pcie(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "pcie.gpu_link_downclocked");
  EXPECT_EQ(fs[0].severity, Severity::Info);
  EXPECT_EQ(fs[0].subject, "gpu 0000:18:00.0");
  EXPECT_NE(fs[0].message.find("idle"), std::string::npos);
  EXPECT_NE(fs[0].evidence.find("current_link_speed=2.5 GT/s max_link_speed=32 GT/s"), std::string::npos)
      << fs[0].evidence;
}

TEST(PcieCheck, GpuWithFewerLanes_Warns) {
  NodeInfo n = healthy_ib_node();
  pci_dev(n, "0000:66:00.0").current_link_width = 8;
  auto fs = checks::check_pcie(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "pcie.gpu_link_narrow");
  EXPECT_EQ(fs[0].severity, Severity::Warn);
  EXPECT_NE(fs[0].message.find("x8 of x16"), std::string::npos);
}

TEST(PcieCheck, HcaBelowMaxSpeed_Warns) {
  NodeInfo n = healthy_ib_node();
  pci_dev(n, "0000:65:00.0").current_link_speed_gts = 16;
  auto fs = checks::check_pcie(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "pcie.nic_link_degraded");
  EXPECT_EQ(fs[0].subject, "mlx5_1");
}

TEST(PcieCheck, UnknownMaximumIsNotJudged) {
  NodeInfo n = healthy_ib_node();
  pci_dev(n, "0000:65:00.0").current_link_speed_gts = 16;
  pci_dev(n, "0000:65:00.0").max_link_speed_gts.reset();
  EXPECT_TRUE(checks::check_pcie(n).empty());
}

TEST(PcieCheck, GpuWhoseClosestHcaIsAcrossSockets_IsFar) {
  NodeInfo n = healthy_ib_node();
  n.gpu_nic_affinity[0].level = "NODE";  // 0000:18:00.0 <-> mlx5_0; mlx5_1 stays SYS
  auto fs = checks::check_pcie(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "pcie.gpu_nic_far");
  EXPECT_EQ(fs[0].subject, "gpu 0000:18:00.0");
  EXPECT_EQ(fs[0].evidence, "mlx5_0=NODE mlx5_1=SYS");
}

TEST(PcieCheck, UnknownDistanceIsNotCalledFar) {
  NodeInfo n = healthy_ib_node();
  n.gpu_nic_affinity[0].level = "";
  EXPECT_TRUE(checks::check_pcie(n).empty());
}

TEST(PcieCheck, AffinityToNetdevsOnNodesWithoutHcasIsNotJudged) {
  NodeInfo n = healthy_ib_node();
  n.rdma_devices.clear();
  n.gpu_nic_affinity = {{"0000:18:00.0", "eth0", "SYS"}, {"0000:66:00.0", "eth0", "SYS"}};
  EXPECT_TRUE(checks::check_pcie(n).empty());
}

TEST(PcieCheck, AcsOnSwitchPortBetweenGpuAndHca_Warns) {
  NodeInfo n = healthy_ib_node();
  auto& down = pci_dev(n, "0000:15:04.0");  // the switch port above GPU 0000:18:00.0
  down.acs_enabled = true;
  down.acs_ctrl = 0x1d;
  auto fs = checks::check_pcie(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "pcie.acs_enabled");
  EXPECT_EQ(fs[0].subject, "bridge 0000:15:04.0");
  EXPECT_EQ(fs[0].evidence, "acs_ctrl=0x001d pairs: 0000:18:00.0<->mlx5_0");
}

TEST(PcieCheck, AcsAboveTheCommonSwitchIsNotOnThePeerPath) {
  NodeInfo n = healthy_ib_node();
  pci_dev(n, "0000:15:01.0").acs_enabled = true;  // root port above both GPU and HCA
  EXPECT_TRUE(checks::check_pcie(n).empty());
}

TEST(PcieCheck, AcsUnknownIsNotJudged) {
  NodeInfo n = healthy_ib_node();
  pci_dev(n, "0000:15:04.0").acs_enabled.reset();
  EXPECT_TRUE(checks::check_pcie(n).empty());
}
