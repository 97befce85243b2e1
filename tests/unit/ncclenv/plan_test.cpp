// plan(): what each variable becomes on the real captures, and on values changed one at a time.
#include <gtest/gtest.h>

#include "env_test_util.hpp"
#include "ncclenv/plan.hpp"

using namespace fabscope;
using namespace fabscope::ncclenv;
using fabscope::testing::device;
using fabscope::testing::ib_port;
using fabscope::testing::netdev;
using fabscope::testing::probe_fixture;
using fabscope::testing::roce_port;

namespace {

std::string value(const EnvPlan& p, const std::string& name) {
  const PlannedVar* v = p.find(name);
  return v ? v->value : "<unset>";
}

bool warned(const EnvPlan& p, const std::string& text) {
  for (const auto& w : p.warnings)
    if (w.find(text) != std::string::npos) return true;
  return false;
}

NodeInfo roce_node(int gid0, int gid1) {
  NodeInfo n;
  n.rdma_devices.push_back(device("mlx5_0", {roce_port(1, "eth2", gid0)}, "0000:17:00.0"));
  n.rdma_devices.push_back(device("mlx5_1", {roce_port(1, "eth3", gid1)}, "0000:18:00.0"));
  n.netdevs = {netdev("eth0"), netdev("eth2", "up", {"10.0.0.1/24"}), netdev("eth3", "up", {"10.0.1.1/24"}),
               netdev("lo", "unknown", {}, "")};
  return n;
}

}  // namespace

TEST(EnvPlan, RxeVm_HcaIsBothSoftRocePortsExactly) {
  const EnvPlan p = plan(probe_fixture("rxe-vm"), {});
  EXPECT_EQ(value(p, "NCCL_IB_HCA"), "=rxe0:1,rxe1:1");
  EXPECT_TRUE(p.rdma);
  EXPECT_TRUE(warned(p, "software RDMA devices"));
}

TEST(EnvPlan, RxeVm_GidIndexIsTheIpv4RoceV2Entry) {
  const EnvPlan p = plan(probe_fixture("rxe-vm"), {});
  EXPECT_EQ(value(p, "NCCL_IB_GID_INDEX"), "1");
  EXPECT_NE(p.find("NCCL_IB_GID_INDEX")->evidence.find("gid[1]=::ffff:10.9.0.1"), std::string::npos);
}

TEST(EnvPlan, RxeVm_SocketIfnameIsAVethCarryingRdmaNeverLo) {
  const EnvPlan p = plan(probe_fixture("rxe-vm"), {});
  EXPECT_EQ(value(p, "NCCL_SOCKET_IFNAME"), "=veth0");
  EXPECT_EQ(value(p, "NCCL_IB_QPS_PER_CONNECTION"), "4");  // Ethernet link layer
  EXPECT_EQ(value(p, "NCCL_IB_DISABLE"), "<unset>");
}

TEST(EnvPlan, ProcfsInfiniband_SlowPortsLeftOut) {
  // hfi1_0 runs at 100 Gb/s; mlx4_0 (40) and mlx5_0 (25) are far below it.
  const EnvPlan p = plan(probe_fixture("procfs-infiniband"), {});
  EXPECT_EQ(value(p, "NCCL_IB_HCA"), "=hfi1_0:1");
  EXPECT_EQ(value(p, "NCCL_IB_GID_INDEX"), "<unset>");  // InfiniBand: no GID index needed
  EXPECT_EQ(value(p, "NCCL_IB_QPS_PER_CONNECTION"), "<unset>");
  bool noted = false;
  for (const auto& n : p.notes) noted = noted || n.find("mlx5_0:1 left out") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(EnvPlan, H200_NoRdmaMeansIbDisabledAndSocketTuningWithWarning) {
  const EnvPlan p = plan(probe_fixture("h200x2-node"), {});
  EXPECT_EQ(value(p, "NCCL_IB_DISABLE"), "1");
  EXPECT_EQ(p.vars.front().name, "NCCL_IB_DISABLE");
  EXPECT_EQ(value(p, "NCCL_SOCKET_NTHREADS"), "4");
  EXPECT_EQ(value(p, "NCCL_NSOCKS_PERTHREAD"), "4");
  EXPECT_EQ(value(p, "NCCL_SOCKET_IFNAME"), "=eth0");
  EXPECT_TRUE(warned(p, "slow"));
  EXPECT_EQ(value(p, "NCCL_IB_HCA"), "<unset>");
}

TEST(EnvPlan, GidIndex_ConsistentAcrossHcas) {
  const EnvPlan p = plan(roce_node(2, 2), {});
  EXPECT_EQ(value(p, "NCCL_IB_GID_INDEX"), "3");
}

TEST(EnvPlan, GidIndex_InconsistentIsAWarningNotAGuess) {
  const EnvPlan p = plan(roce_node(2, 4), {});
  EXPECT_EQ(value(p, "NCCL_IB_GID_INDEX"), "<unset>");
  EXPECT_TRUE(warned(p, "different indexes"));
}

TEST(EnvPlan, GidIndex_MissingIpv4EntryIsAWarning) {
  const EnvPlan p = plan(roce_node(2, 0), {});  // mlx5_1 has link-local entries only
  EXPECT_EQ(value(p, "NCCL_IB_GID_INDEX"), "<unset>");
  EXPECT_TRUE(warned(p, "no IPv4 RoCE v2 GID"));
}

TEST(EnvPlan, Hca_DefaultRoutePortLeftOutWhenOthersExist) {
  NodeInfo n = roce_node(2, 2);
  PlanOptions o;
  o.default_route_ifaces = {"eth2"};
  const EnvPlan p = plan(n, o);
  EXPECT_EQ(value(p, "NCCL_IB_HCA"), "=mlx5_1:1");
  EXPECT_EQ(value(p, "NCCL_SOCKET_IFNAME"), "=eth2");  // the default route reaches the other nodes
}

TEST(EnvPlan, Hca_DownPortLeftOut) {
  NodeInfo n;
  n.rdma_devices.push_back(device("mlx5_0", {ib_port(1, 400)}));
  n.rdma_devices.push_back(device("mlx5_1", {ib_port(1, 400, "DOWN", "Disabled")}));
  const EnvPlan p = plan(n, {});
  EXPECT_EQ(value(p, "NCCL_IB_HCA"), "=mlx5_0:1");
}

TEST(EnvPlan, Hca_AllPortsDownWarnsAndDoesNotDisableIb) {
  NodeInfo n;
  n.rdma_devices.push_back(device("mlx5_0", {ib_port(1, 400, "DOWN", "Polling")}));
  const EnvPlan p = plan(n, {});
  EXPECT_EQ(value(p, "NCCL_IB_HCA"), "<unset>");
  EXPECT_EQ(value(p, "NCCL_IB_DISABLE"), "<unset>");
  EXPECT_TRUE(warned(p, "no port is ACTIVE"));
}

TEST(EnvPlan, SocketIfname_MasterAddrPicksTheSubnet) {
  PlanOptions o;
  o.master_addr = "10.0.1.77";
  const EnvPlan p = plan(roce_node(2, 2), o);
  EXPECT_EQ(value(p, "NCCL_SOCKET_IFNAME"), "=eth3");
  EXPECT_NE(p.find("NCCL_SOCKET_IFNAME")->reason.find("10.0.1.1/24"), std::string::npos);
}

TEST(EnvPlan, SocketIfname_NeverDockerVirbrOrContainerVeth) {
  NodeInfo n;
  n.netdevs = {netdev("docker0", "up", {"172.17.0.1/16"}, ""), netdev("virbr0", "up", {}, ""),
               netdev("vethab12", "up", {}, ""), netdev("lo", "unknown", {}, ""), netdev("ens5", "up")};
  const EnvPlan p = plan(n, {});
  EXPECT_EQ(value(p, "NCCL_SOCKET_IFNAME"), "=ens5");
}

TEST(EnvPlan, TcAndSlOnlyFromFlags) {
  EXPECT_EQ(value(plan(roce_node(2, 2), {}), "NCCL_IB_TC"), "<unset>");
  PlanOptions o;
  o.roce_dscp = 26;
  o.ib_sl = 5;
  const EnvPlan p = plan(roce_node(2, 2), o);
  EXPECT_EQ(value(p, "NCCL_IB_TC"), "104");
  EXPECT_EQ(value(p, "NCCL_IB_SL"), "5");
  EXPECT_NE(p.find("NCCL_IB_TC")->reason.find("switches"), std::string::npos);
  EXPECT_TRUE(warned(p, "--ib-sl given but no selected port is InfiniBand"));
}

TEST(EnvPlan, RoceDscpCheckedAgainstThePfcPriority) {
  NodeInfo n = roce_node(2, 2);
  LosslessState l;
  l.netdev = "eth0";
  l.pfc_priorities = std::vector<int>{3};
  l.trust = "dscp";
  n.lossless = {l};
  PlanOptions o;
  o.roce_dscp = 26;  // 26 >> 3 = priority 3: lossless
  EXPECT_FALSE(warned(plan(n, o), "maps to priority"));
  o.roce_dscp = 46;  // priority 5
  EXPECT_TRUE(warned(plan(n, o), "--roce-dscp 46 maps to priority 5 on eth0"));
  n.lossless[0].apps = {DcbApp{5, 46, 3}};  // an application entry sends DSCP 46 to priority 3
  EXPECT_FALSE(warned(plan(n, o), "maps to priority"));
  n.lossless[0].trust = "pcp";
  EXPECT_TRUE(warned(plan(n, o), "trusts the VLAN priority (PCP)"));
}

namespace {
NodeInfo gpu_node(const std::string& level, bool peermem) {
  NodeInfo n;
  n.rdma_devices.push_back(device("mlx5_0", {ib_port(1, 400)}, "0000:17:00.0"));
  Gpu g;
  g.pci_address = "0000:18:00.0";
  n.gpus.push_back(g);
  n.gpu_nic_affinity.push_back({"0000:18:00.0", "mlx5_0", level});
  n.kernel.modules = {"nvidia", "mlx5_ib"};
  if (peermem) n.kernel.modules.push_back("nvidia_peermem");
  return n;
}
}  // namespace

TEST(EnvPlan, GdrLevel_FromGpuNicDistance) {
  EXPECT_EQ(value(plan(gpu_node("PIX", true), {}), "NCCL_NET_GDR_LEVEL"), "PXB");
  EXPECT_EQ(value(plan(gpu_node("PHB", true), {}), "NCCL_NET_GDR_LEVEL"), "PHB");
  const EnvPlan sys = plan(gpu_node("SYS", true), {});
  EXPECT_EQ(value(sys, "NCCL_NET_GDR_LEVEL"), "<unset>");
  EXPECT_TRUE(warned(sys, "placement"));
}

TEST(EnvPlan, GdrLevel_PeermemMissingIsWarned) {
  const EnvPlan p = plan(gpu_node("PXB", false), {});
  EXPECT_TRUE(warned(p, "nvidia_peermem"));
  EXPECT_FALSE(warned(plan(gpu_node("PXB", true), {}), "nvidia_peermem"));
}

TEST(EnvPlan, Ipv4Helpers) {
  EXPECT_EQ(gid_ipv4("0000:0000:0000:0000:0000:ffff:0a09:0001"), "10.9.0.1");
  EXPECT_EQ(gid_ipv4("fe80:0000:0000:0000:78db:90ff:fe26:5f89"), "");
  EXPECT_EQ(gid_ipv4("zz"), "");
  EXPECT_TRUE(subnet_contains("10.9.0.1/24", *parse_ipv4("10.9.0.200")));
  EXPECT_FALSE(subnet_contains("10.9.0.1/24", *parse_ipv4("10.9.1.1")));
  EXPECT_FALSE(parse_ipv4("10.9.0"));
  EXPECT_FALSE(parse_ipv4("256.1.1.1"));
  EXPECT_FALSE(subnet_contains("10.9.0.1/33", *parse_ipv4("10.9.0.1")));
}
