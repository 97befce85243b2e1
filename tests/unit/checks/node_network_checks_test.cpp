// lossless.*, bond.*, irq.*, sriov.*, firewall.*, congestion.*: each test changes one fact of a
// healthy node (node_builders.hpp); the firewall tests judge real nft captures.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "checks/checks.hpp"
#include "checks/families.hpp"
#include "node_builders.hpp"
#include "probe/firewall.hpp"
#include "support/fixtures.hpp"

using namespace fabscope;
using namespace fabscope::testing;

namespace {

std::vector<std::string> ids(const std::vector<Finding>& fs) {
  std::vector<std::string> out;
  for (const auto& f : fs) out.push_back(f.id);
  return out;
}

LosslessState roce_state(std::optional<std::vector<int>> pfc, std::optional<std::vector<int>> np,
                         std::optional<std::vector<int>> rp) {
  LosslessState s;
  s.netdev = "eth2";
  s.rdma_ports = {"mlx5_0:1"};
  s.pfc_priorities = std::move(pfc);
  s.ecn_np_priorities = std::move(np);
  s.ecn_rp_priorities = std::move(rp);
  if (!s.pfc_priorities) s.dcb_note = "the driver has no DCB support (dcbnl: EOPNOTSUPP)";
  if (!s.ecn_np_priorities) s.ecn_note = "no ECN switches in sysfs";
  return s;
}

NodeInfo with_lossless(LosslessState s) {
  NodeInfo n = healthy_roce_node();
  n.lossless = {std::move(s)};
  return n;
}

Bond bond(std::vector<BondSlave> slaves) {
  Bond b;
  b.name = "bond0";
  b.mode = "fault-tolerance (active-backup)";
  b.mii_status = "up";
  b.slaves = std::move(slaves);
  return b;
}

BondSlave slave(const std::string& name, const std::string& mii, std::optional<std::int64_t> speed,
                std::uint64_t failures = 0) {
  BondSlave s;
  s.name = name;
  s.mii_status = mii;
  s.speed_mbps = speed;
  s.link_failure_count = failures;
  return s;
}

NodeInfo with_firewall(const std::string& capture) {
  std::ifstream in(fixture("nft") / capture);
  std::stringstream ss;
  ss << in.rdbuf();
  NodeInfo n = healthy_roce_node();
  n.firewall = probe::parse_nft_json(ss.str());
  return n;
}

}  // namespace

// --- lossless

TEST(LosslessCheck, NothingExposedIsUnknownNotOk) {
  auto fs = checks::check_lossless(with_lossless(roce_state(std::nullopt, std::nullopt, std::nullopt)));
  ASSERT_EQ(ids(fs), std::vector<std::string>{"lossless.unknown"});
  EXPECT_EQ(fs[0].severity, Severity::Info);
  EXPECT_NE(fs[0].message.find("unknown, not ok"), std::string::npos);
  EXPECT_NE(fs[0].evidence.find("EOPNOTSUPP"), std::string::npos);
}

TEST(LosslessCheck, PfcAndEcnOnOnePriorityIsQuiet) {
  EXPECT_TRUE(checks::check_lossless(with_lossless(roce_state({{3}}, {{3}}, {{3}}))).empty());
}

TEST(LosslessCheck, NoPfcOnAnyPriorityWarns) {
  auto fs = checks::check_lossless(with_lossless(roce_state(std::vector<int>{}, {{3}}, {{3}})));
  ASSERT_EQ(ids(fs), std::vector<std::string>{"lossless.no_pfc"});
  EXPECT_EQ(fs[0].subject, "eth2");
  EXPECT_NE(fs[0].evidence.find("pfc=none"), std::string::npos);
}

TEST(LosslessCheck, PfcAndEcnOnDifferentPrioritiesWarns) {
  auto fs = checks::check_lossless(with_lossless(roce_state({{3}}, {{4}}, {{4}})));
  ASSERT_EQ(ids(fs), std::vector<std::string>{"lossless.pfc_ecn_split"});
  EXPECT_NE(fs[0].message.find("priority 3"), std::string::npos);
}

TEST(LosslessCheck, EcnOffOnThePfcPriorityWarns) {
  // The notification point is on, the reaction point is off: DCQCN does not run.
  auto fs = checks::check_lossless(with_lossless(roce_state({{3}}, {{3}}, std::vector<int>{})));
  ASSERT_EQ(ids(fs), std::vector<std::string>{"lossless.ecn_off"});
  EXPECT_NE(fs[0].message.find("priority 3, which PFC protects"), std::string::npos) << fs[0].message;
}

// --- bonds

TEST(BondCheck, HealthyBondIsQuiet) {
  NodeInfo n = healthy_roce_node();
  n.bonds = {bond({slave("eth0", "up", 25000), slave("eth1", "up", 25000)})};
  EXPECT_TRUE(checks::check_bonds(n).empty());
}

TEST(BondCheck, OneSlaveDownWarns) {
  NodeInfo n = healthy_roce_node();
  n.bonds = {bond({slave("eth0", "up", 25000), slave("eth1", "down", std::nullopt, 1)})};
  auto fs = checks::check_bonds(n);
  ASSERT_EQ(ids(fs), std::vector<std::string>{"bond.slave_down"});
  EXPECT_NE(fs[0].message.find("1 of 2 slaves (eth1 down)"), std::string::npos) << fs[0].message;
}

TEST(BondCheck, AllSlavesDownFails) {
  NodeInfo n = healthy_roce_node();
  n.bonds = {bond({slave("eth0", "down", std::nullopt), slave("eth1", "down", std::nullopt)})};
  n.bonds[0].mii_status = "down";
  auto fs = checks::check_bonds(n);
  ASSERT_EQ(ids(fs), std::vector<std::string>{"bond.down"});
  EXPECT_EQ(fs[0].severity, Severity::Fail);
}

TEST(BondCheck, SlavesOfDifferentSpeedsWarn) {
  NodeInfo n = healthy_roce_node();
  n.bonds = {bond({slave("eth0", "up", 25000), slave("eth1", "up", 10000)})};
  EXPECT_EQ(ids(checks::check_bonds(n)), std::vector<std::string>{"bond.speed_mismatch"});
}

TEST(BondCheck, LinkFailuresGrowingBetweenProbesWarn) {
  NodeInfo a = healthy_roce_node();
  a.bonds = {bond({slave("eth0", "up", 25000, 3), slave("eth1", "up", 25000, 0)})};
  NodeInfo b = a;
  EXPECT_TRUE(checks::check_bond_rates(a, b, 10).empty());  // old failures are not judged
  b.bonds[0].slaves[0].link_failure_count = 5;
  auto fs = checks::check_bond_rates(a, b, 10);
  ASSERT_EQ(ids(fs), std::vector<std::string>{"bond.link_failures"});
  EXPECT_EQ(fs[0].subject, "bond0:eth0");
  EXPECT_NE(fs[0].evidence.find("3 -> 5 over 10 s"), std::string::npos) << fs[0].evidence;
}

// --- IRQ placement

NodeInfo two_node_irqs(std::vector<std::vector<int>> affinities) {
  NodeInfo n = healthy_roce_node();
  n.numa_nodes = {NumaNode{0, {0, 1, 2, 3}}, NumaNode{1, {4, 5, 6, 7}}};
  NicIrqs nic;
  nic.pci_address = "0000:65:00.0";
  nic.rdma_devices = {"mlx5_1"};
  nic.numa_node = 1;
  int irq = 100;
  for (auto& a : affinities) {
    IrqInfo i;
    i.irq = irq++;
    i.affinity_cpus = a;
    i.count = 1000;
    nic.irqs.push_back(i);
  }
  n.nic_irqs = {nic};
  return n;
}

TEST(IrqCheck, VectorsOnTheLocalNodeAreQuiet) {
  EXPECT_TRUE(checks::check_irq(two_node_irqs({{4}, {5}, {6}, {0}})).empty());
}

TEST(IrqCheck, MostVectorsOnTheOtherNodeWarn) {
  auto fs = checks::check_irq(two_node_irqs({{0}, {1}, {2}, {5}}));
  ASSERT_EQ(ids(fs), std::vector<std::string>{"irq.remote_numa"});
  EXPECT_NE(fs[0].message.find("3 of 4 interrupt vectors"), std::string::npos) << fs[0].message;
  EXPECT_NE(fs[0].evidence.find("cpus 4-7"), std::string::npos) << fs[0].evidence;
  EXPECT_NE(fs[0].remedy.find("set_irq_affinity_cpulist.sh 4-7"), std::string::npos);
}

TEST(IrqCheck, AffinitySpanningBothNodesCountsAsLocal) {
  EXPECT_TRUE(checks::check_irq(two_node_irqs({{0, 1, 2, 3, 4, 5, 6, 7}, {0, 4}})).empty());
}

TEST(IrqCheck, SingleNodeMachinesAreNotJudged) {
  NodeInfo n = two_node_irqs({{0}, {1}});
  n.numa_nodes.pop_back();
  EXPECT_TRUE(checks::check_irq(n).empty());
}

// --- SR-IOV

NodeInfo with_vfs(bool vfs_as_rdma) {
  NodeInfo n = healthy_roce_node();
  pci_dev(n, "0000:17:00.0").sriov_numvfs = 2;
  pci_dev(n, "0000:17:00.0").sriov_totalvfs = 8;
  if (vfs_as_rdma) {
    for (const char* addr : {"0000:17:00.2", "0000:17:00.3"}) {
      PciDevice vf = pci(addr, "pci0000:15", {"0000:15:01.0", "0000:15:02.0", "0000:15:03.0"});
      vf.physfn = "0000:17:00.0";
      n.pci_devices.push_back(vf);
    }
    n.rdma_devices.push_back(hca("mlx5_2", "0000:17:00.2", n.rdma_devices[0].ports[0]));
    n.rdma_devices.push_back(hca("mlx5_3", "0000:17:00.3", n.rdma_devices[0].ports[0]));
    n.rdma_devices.back().ports[0].state = "DOWN";
  }
  return n;
}

TEST(SriovCheck, NoVfsIsQuiet) { EXPECT_TRUE(checks::check_sriov(healthy_roce_node()).empty()); }

TEST(SriovCheck, VfsPassedToGuestsAreInfo) {
  auto fs = checks::check_sriov(with_vfs(false));
  ASSERT_EQ(ids(fs), std::vector<std::string>{"sriov.vfs_enabled"});
  EXPECT_EQ(fs[0].severity, Severity::Info);
  EXPECT_NE(fs[0].evidence.find("sriov_numvfs=2 sriov_totalvfs=8"), std::string::npos);
}

TEST(SriovCheck, PfAndItsVfsBothRdmaDevicesWarn) {
  auto fs = checks::check_sriov(with_vfs(true));
  ASSERT_EQ(ids(fs), (std::vector<std::string>{"sriov.vfs_enabled", "sriov.pf_and_vfs", "sriov.vf_devices"}));
  EXPECT_EQ(fs[1].severity, Severity::Warn);
  EXPECT_NE(fs[1].remedy.find("NCCL_IB_HCA==mlx5_0"), std::string::npos) << fs[1].remedy;
  EXPECT_NE(fs[2].message.find("ACTIVE: mlx5_2"), std::string::npos) << fs[2].message;
  EXPECT_NE(fs[2].evidence.find("mlx5_3=VF of 0000:17:00.0[DOWN]"), std::string::npos) << fs[2].evidence;
}

// --- firewall, on real nft captures

TEST(FirewallCheck, UnknownRulesetGivesNoFinding) {
  NodeInfo n = healthy_roce_node();
  n.firewall.note = "nft not found";
  EXPECT_TRUE(checks::check_firewall(n).empty());
}

TEST(FirewallCheck, DropRuleForRoceV2IsQuotedAndInfoOnHardwareRoce) {
  auto fs = checks::check_firewall(with_firewall("drop-roce-v2.json"));
  ASSERT_EQ(ids(fs), std::vector<std::string>{"firewall.roce_v2_blocked"});
  EXPECT_EQ(fs[0].severity, Severity::Info);  // mlx5 RoCE bypasses netfilter
  EXPECT_NE(fs[0].message.find("'udp dport 4791 counter drop' (handle 3)"), std::string::npos) << fs[0].message;
}

TEST(FirewallCheck, DropRuleForRoceV2WarnsWithSoftwareRoce) {
  NodeInfo n = with_firewall("drop-roce-v2.json");
  for (auto& d : n.rdma_devices) d.pci_address.clear();  // rxe devices have no PCI parent
  auto fs = checks::check_firewall(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].severity, Severity::Warn);
}

TEST(FirewallCheck, DefaultDropPolicyBlocksRoceAndNcclPorts) {
  auto fs = checks::check_firewall(with_firewall("default-drop-ssh-only.json"));
  ASSERT_EQ(ids(fs), (std::vector<std::string>{"firewall.roce_v2_blocked", "firewall.nccl_tcp_blocked",
                                                 "firewall.nccl_tcp_blocked"}));
  EXPECT_NE(fs[1].message.find("by the chain's policy"), std::string::npos) << fs[1].message;
  EXPECT_EQ(fs[1].severity, Severity::Warn);
  EXPECT_NE(fs[2].message.find("29500"), std::string::npos);
}

TEST(FirewallCheck, ClusterSubnetAcceptedMakesTheDropConditional) {
  auto fs = checks::check_firewall(with_firewall("default-drop-cluster-allowed.json"));
  ASSERT_EQ(fs.size(), 3u);
  for (const auto& f : fs) {
    EXPECT_EQ(f.severity, Severity::Info) << f.message;
    EXPECT_NE(f.message.find("ip saddr 10.9.0.0/16"), std::string::npos) << f.message;
  }
}

TEST(FirewallCheck, RejectOfHighTcpPortsBlocksNcclButNotRoce) {
  auto fs = checks::check_firewall(with_firewall("reject-tcp-high-ports.json"));
  ASSERT_EQ(ids(fs), (std::vector<std::string>{"firewall.nccl_tcp_blocked", "firewall.nccl_tcp_blocked"}));
  EXPECT_EQ(fs[0].severity, Severity::Warn);
  EXPECT_NE(fs[0].message.find("32768-60999"), std::string::npos);
}

TEST(FirewallCheck, EphemeralRangeComesFromTheSysctl) {
  NodeInfo n = with_firewall("reject-tcp-high-ports.json");
  n.kernel.sysctls["net.ipv4.ip_local_port_range"] = "200 900";  // below the rejected 1024+
  auto fs = checks::check_firewall(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_NE(fs[0].message.find("29500"), std::string::npos);
}

// --- congestion rates

TEST(CongestionCheck, RatesNeedTwoProbes) {
  NodeInfo a = healthy_roce_node();
  port0(a, "mlx5_0").counters["port_xmit_discards"] = 1000;
  EXPECT_TRUE(checks::run(a).empty());
}

TEST(CongestionCheck, DiscardsAboveOneInTenThousandWarn) {
  NodeInfo a = healthy_roce_node();
  auto& p = port0(a, "mlx5_0");
  p.counters["port_xmit_discards"] = 10;
  p.counters["port_xmit_packets"] = 1'000'000;
  NodeInfo b = a;
  port0(b, "mlx5_0").counters["port_xmit_discards"] = 12;  // 2 in 1,000,000: below 0.01%
  port0(b, "mlx5_0").counters["port_xmit_packets"] = 2'000'000;
  EXPECT_TRUE(checks::check_counter_rates(a, b, 10).empty());
  port0(b, "mlx5_0").counters["port_xmit_discards"] = 310;  // 300 in 1,000,000: 0.03%
  auto fs = checks::check_counter_rates(a, b, 10);
  ASSERT_EQ(ids(fs), std::vector<std::string>{"congestion.xmit_discards"});
  EXPECT_NE(fs[0].message.find("0.0300%"), std::string::npos) << fs[0].message;
}

TEST(CongestionCheck, RoceLossCountersAndCnps) {
  NodeInfo a = healthy_roce_node();
  auto& p = port0(a, "mlx5_0");
  p.counters["port_rcv_packets"] = 0;
  p.hw_counters = {{"out_of_sequence", 0}, {"packet_seq_err", 0}, {"rnr_nak_retry_err", 0},
                   {"np_cnp_sent", 0}, {"rp_cnp_handled", 0}};
  NodeInfo b = a;
  auto& q = port0(b, "mlx5_0");
  q.counters["port_rcv_packets"] = 100000;
  q.hw_counters = {{"out_of_sequence", 50}, {"packet_seq_err", 4}, {"rnr_nak_retry_err", 1},
                   {"np_cnp_sent", 900}, {"rp_cnp_handled", 20}};
  auto fs = checks::run(b, a, 5);
  EXPECT_EQ(ids(fs), (std::vector<std::string>{"congestion.out_of_sequence", "congestion.packet_seq_err",
                                                "congestion.rnr_retry_exceeded", "congestion.cnp"}));
}

TEST(CongestionCheck, ClearedCountersAreNotARate) {
  NodeInfo a = healthy_roce_node();
  port0(a, "mlx5_0").counters["port_xmit_discards"] = 500;
  NodeInfo b = a;
  port0(b, "mlx5_0").counters["port_xmit_discards"] = 3;
  EXPECT_TRUE(checks::check_counter_rates(a, b, 10).empty());
}

TEST(CongestionCheck, RxeCounterNamesCount) {
  NodeInfo a = healthy_roce_node();
  port0(a, "mlx5_0").hw_counters = {{"rcvd_pkts", 0}, {"out_of_seq_request", 0}};
  NodeInfo b = a;
  port0(b, "mlx5_0").hw_counters = {{"rcvd_pkts", 1000}, {"out_of_seq_request", 7}};
  auto fs = checks::check_counter_rates(a, b, 1);
  ASSERT_EQ(ids(fs), std::vector<std::string>{"congestion.out_of_sequence"});
  EXPECT_NE(fs[0].evidence.find("out_of_seq_request +7"), std::string::npos) << fs[0].evidence;
}
