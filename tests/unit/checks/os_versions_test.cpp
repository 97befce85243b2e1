// os.* and versions.*: each test changes one value of a healthy node (node_builders.hpp).
#include <gtest/gtest.h>

#include "checks/families.hpp"
#include "node_builders.hpp"

using namespace fabscope;
using namespace fabscope::testing;

TEST(OsCheck, HealthyNodeHasNoFindings) { EXPECT_TRUE(checks::check_os(healthy_ib_node()).empty()); }

TEST(OsCheck, LimitedMemlockOnRdmaNode_Warns) {
  NodeInfo n = healthy_ib_node();
  n.kernel.memlock_soft_bytes = 8ull << 20;
  auto fs = checks::check_os(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "os.memlock_limited");
  EXPECT_NE(fs[0].evidence.find("soft=8.0 MiB (8388608 bytes) hard=unlimited"), std::string::npos)
      << fs[0].evidence;
}

TEST(OsCheck, MemlockIsNotJudgedWithoutRdmaOrWhenUnknown) {
  NodeInfo n = healthy_ib_node();
  n.kernel.memlock_soft_bytes = 65536;
  NodeInfo no_rdma = n;
  no_rdma.rdma_devices.clear();
  EXPECT_TRUE(checks::check_os(no_rdma).empty());
  n.kernel.memlock_soft_bytes.reset();
  EXPECT_TRUE(checks::check_os(n).empty());
}

TEST(OsCheck, SmallSocketBuffers_WarnAndNameEachLowSysctl) {
  NodeInfo n = healthy_ib_node();
  n.kernel.sysctls["net.core.wmem_max"] = "212992";
  auto fs = checks::check_os(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "os.socket_buffers_small");
  EXPECT_EQ(fs[0].message.rfind("net.core.wmem_max below 16 MiB", 0), 0u) << fs[0].message;
  EXPECT_EQ(fs[0].evidence, "net.core.rmem_max=67108864 net.core.wmem_max=212992");
}

TEST(OsCheck, SocketBuffersOfExactly16MiBAreEnough) {
  NodeInfo n = healthy_ib_node();
  n.kernel.sysctls["net.core.rmem_max"] = "16777216";
  n.kernel.sysctls["net.core.wmem_max"] = "16777216";
  EXPECT_TRUE(checks::check_os(n).empty());
}

TEST(OsCheck, UnreadableOrGarbageSysctlIsNotJudged) {
  NodeInfo n = healthy_ib_node();
  n.kernel.sysctls.erase("net.core.rmem_max");
  n.kernel.sysctls["net.core.wmem_max"] = "lots";
  EXPECT_TRUE(checks::check_os(n).empty());
}

TEST(OsCheck, IommuOnWithoutPassthrough_Warns) {
  NodeInfo n = healthy_ib_node();
  n.kernel.cmdline += " intel_iommu=on";
  auto fs = checks::check_os(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "os.iommu_not_passthrough");
  EXPECT_EQ(fs[0].evidence, "proc/cmdline: intel_iommu=on, no iommu=pt");
}

TEST(OsCheck, IommuWithPassthroughIsFine) {
  for (const char* pt : {" iommu=pt", " iommu.passthrough=1"}) {
    NodeInfo n = healthy_ib_node();
    n.kernel.cmdline += std::string(" amd_iommu=on") + pt;
    EXPECT_TRUE(checks::check_os(n).empty()) << pt;
  }
}

TEST(OsCheck, CmdlineAfterDoubleDashIsForInit) {
  NodeInfo n = healthy_ib_node();
  n.kernel.cmdline += " -- intel_iommu=on";
  EXPECT_TRUE(checks::check_os(n).empty());
}

TEST(OsCheck, NodeWithoutGpusOrRdmaGetsNoOsFindings) {
  NodeInfo n;  // a login node with every setting "wrong" for training
  n.kernel.memlock_soft_bytes = 65536;
  n.kernel.sysctls = {{"net.core.rmem_max", "212992"}, {"net.core.wmem_max", "212992"}};
  n.kernel.cmdline = "intel_iommu=on";
  EXPECT_TRUE(checks::check_os(n).empty());
}

TEST(VersionsCheck, HealthyNodeHasNoFindings) { EXPECT_TRUE(checks::check_versions(healthy_ib_node()).empty()); }

TEST(VersionsCheck, NcclOlderThan2_14_Warns) {
  NodeInfo n = healthy_ib_node();
  n.versions.nccl = "2.13.4";
  n.versions.nccl_code = 21304;
  auto fs = checks::check_versions(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "versions.nccl_old");
  EXPECT_NE(fs[0].message.find("NCCL 2.13.4"), std::string::npos);
}

TEST(VersionsCheck, NcclCodeAloneIsEnough_BothEncodings) {
  for (int code : {21304, 2804}) {  // 2.13.4 (since 2.9: x10000), 2.8.4 (before: x1000)
    NodeInfo n = healthy_ib_node();
    n.versions.nccl.clear();
    n.versions.nccl_code = code;
    EXPECT_EQ(checks::check_versions(n).size(), 1u) << code;
  }
  NodeInfo n = healthy_ib_node();
  n.versions.nccl.clear();
  n.versions.nccl_code = 21403;
  EXPECT_TRUE(checks::check_versions(n).empty());
}

TEST(VersionsCheck, UnknownNcclIsNotJudged) {
  NodeInfo n = healthy_ib_node();
  n.versions.nccl.clear();
  n.versions.nccl_code.reset();
  EXPECT_TRUE(checks::check_versions(n).empty());
  n.versions.nccl = "garbage";
  EXPECT_TRUE(checks::check_versions(n).empty());
}

TEST(VersionsCheck, FirmwareDiffersBetweenHcasOfOneType_Warns) {
  NodeInfo n = healthy_ib_node();
  n.rdma_devices[1].fw_ver = "28.40.1000";
  auto fs = checks::check_versions(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "versions.fw_mismatch");
  EXPECT_EQ(fs[0].subject, "hca_type MT4129");
  EXPECT_EQ(fs[0].evidence, "fw_ver: mlx5_0=28.39.1002 mlx5_1=28.40.1000");
}

TEST(VersionsCheck, FirmwareOfDifferentTypesOrUnknownIsNotCompared) {
  NodeInfo n = healthy_ib_node();
  n.rdma_devices[1].fw_ver = "28.40.1000";
  n.rdma_devices[1].hca_type = "MT4123";
  EXPECT_TRUE(checks::check_versions(n).empty());
  n.rdma_devices[1].hca_type = "MT4129";
  n.rdma_devices[1].fw_ver = "";
  EXPECT_TRUE(checks::check_versions(n).empty());
}
