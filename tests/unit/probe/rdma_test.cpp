// RDMA collector: sys/class/infiniband on the prometheus/procfs capture (hfi1_0, mlx4_0,
// mlx5_0) and on bad input.
#include "probe/rdma.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "support/fixtures.hpp"
#include "test_util.hpp"

using namespace fabscope;
using fabscope::testing::has_note_containing;
using fabscope::testing::TempDir;
using fabscope::testing::write_file;
namespace fs = std::filesystem;

namespace {

struct ProcfsTree {
  TempDir dir;
  ProcfsTree() {
    fabscope::testing::unpack_ttar(fabscope::testing::fixture("procfs-infiniband/sys-class-infiniband-and-net.ttar"),
                                   dir.path());
  }
  core::Root root() const { return core::Root(dir.path()); }
};

const RdmaDevice& device(const std::vector<RdmaDevice>& devs, const std::string& name) {
  for (const auto& d : devs)
    if (d.name == name) return d;
  throw std::runtime_error("no device " + name);
}

}  // namespace

TEST(ParseCodedState, SplitsKernelCodeAndName) {
  auto s = probe::parse_coded_state("4: ACTIVE");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->code, 4);
  EXPECT_EQ(s->name, "ACTIVE");
  auto p = probe::parse_coded_state("5: LinkUp");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->code, 5);
  EXPECT_EQ(p->name, "LinkUp");
}

TEST(ParseCodedState, AcceptsNameWithoutCode) {
  auto s = probe::parse_coded_state("Disabled");
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->code);
  EXPECT_EQ(s->name, "Disabled");
}

TEST(ParseCodedState, RejectsGarbage) {
  EXPECT_FALSE(probe::parse_coded_state(""));
  EXPECT_FALSE(probe::parse_coded_state("x: ACTIVE"));
  EXPECT_FALSE(probe::parse_coded_state("4:"));
  EXPECT_FALSE(probe::parse_coded_state("4: ACT\x01VE"));
  EXPECT_FALSE(probe::parse_coded_state("999: ACTIVE"));
}

TEST(StateNames, KnownCodeMustCarryTheKernelName) {
  EXPECT_TRUE(probe::state_name_matches_code({4, "ACTIVE"}));
  EXPECT_FALSE(probe::state_name_matches_code({4, "A"}));  // "4: ACTIVE" cut short
  EXPECT_TRUE(probe::state_name_matches_code({9, "FUTURE"}));
  EXPECT_TRUE(probe::phys_state_name_matches_code({5, "LinkUp"}));
  EXPECT_TRUE(probe::phys_state_name_matches_code({7, "Phy Test"}));
  EXPECT_FALSE(probe::phys_state_name_matches_code({4, "ACTIVE"}));
}

TEST(CollectRdma, PhysStateWhoseNameContradictsItsCodeIsUnknown) {
  // The procfs capture's mlx5_0 phys_state reads "4: ACTIVE"; the kernel names code 4
  // "PortConfigurationTraining", so the value cannot be trusted either way.
  ProcfsTree t;
  std::vector<std::string> notes;
  auto devs = probe::collect_rdma(t.root(), notes);
  const auto& p = device(devs, "mlx5_0").ports.at(0);
  EXPECT_EQ(p.phys_state, "");
  EXPECT_FALSE(p.phys_state_code);
  EXPECT_TRUE(has_note_containing(notes, "mlx5_0/ports/1/phys_state"));
}

TEST(ParseRate, ReadsGbpsFromKernelText) {
  EXPECT_EQ(probe::parse_rate_gbps("100 Gb/sec (4X EDR)"), 100.0);
  EXPECT_EQ(probe::parse_rate_gbps("2.5 Gb/sec (1X SDR)"), 2.5);
  EXPECT_EQ(probe::parse_rate_gbps("400 Gb/sec (4X NDR)"), 400.0);
}

TEST(ParseRate, RejectsTextWithoutGbSec) {
  EXPECT_FALSE(probe::parse_rate_gbps("fast"));
  EXPECT_FALSE(probe::parse_rate_gbps("N/A"));
  EXPECT_FALSE(probe::parse_rate_gbps("x Gb/sec (4X EDR)"));
}

TEST(Gid, ZeroAndIpv4MappedAreRecognised) {
  EXPECT_TRUE(probe::is_zero_gid("0000:0000:0000:0000:0000:0000:0000:0000"));
  EXPECT_FALSE(probe::is_zero_gid("fe80:0000:0000:0000:0202:c9ff:fe00:0001"));
  EXPECT_TRUE(probe::is_ipv4_mapped_gid("0000:0000:0000:0000:0000:ffff:0a00:0001"));
  EXPECT_FALSE(probe::is_ipv4_mapped_gid("fe80:0000:0000:0000:0202:c9ff:fe00:0001"));
}

TEST(RoceMtu, DerivedFromNetdevMtuLessRoceHeaders) {
  EXPECT_EQ(probe::roce_mtu_for_netdev_mtu(9000), 4096);
  EXPECT_EQ(probe::roce_mtu_for_netdev_mtu(4200), 4096);
  EXPECT_EQ(probe::roce_mtu_for_netdev_mtu(4096), 2048);  // 4096 - 96 headers < 4096
  EXPECT_EQ(probe::roce_mtu_for_netdev_mtu(1500), 1024);
  EXPECT_FALSE(probe::roce_mtu_for_netdev_mtu(300));
}

TEST(PreferredGid, PicksFirstRoceV2Ipv4Entry) {
  RdmaPort p;
  p.gids = {{0, "fe80:0000:0000:0000:0202:c9ff:fe00:0001", "IB/RoCE v1", "eth2", false},
            {1, "fe80:0000:0000:0000:0202:c9ff:fe00:0001", "RoCE v2", "eth2", false},
            {2, "0000:0000:0000:0000:0000:ffff:0a00:0001", "IB/RoCE v1", "eth2", true},
            {3, "0000:0000:0000:0000:0000:ffff:0a00:0001", "RoCE v2", "eth2", true}};
  EXPECT_EQ(probe::preferred_roce_v2_gid(p), 3);
  p.gids.pop_back();
  EXPECT_EQ(probe::preferred_roce_v2_gid(p), 1);
  p.gids.clear();
  EXPECT_FALSE(probe::preferred_roce_v2_gid(p));
}

TEST(CollectRdma, FindsEveryDeviceAndPortOfTheProcfsCapture) {
  ProcfsTree t;
  std::vector<std::string> notes;
  auto devs = probe::collect_rdma(t.root(), notes);
  ASSERT_EQ(devs.size(), 3u);
  EXPECT_EQ(devs[0].name, "hfi1_0");
  EXPECT_EQ(devs[1].name, "mlx4_0");
  EXPECT_EQ(devs[2].name, "mlx5_0");
  EXPECT_EQ(devs[1].ports.size(), 2u);
  EXPECT_EQ(devs[1].ports[1].port, 2);
}

TEST(CollectRdma, ReadsDeviceAttributes) {
  ProcfsTree t;
  std::vector<std::string> notes;
  auto devs = probe::collect_rdma(t.root(), notes);
  const auto& mlx5 = device(devs, "mlx5_0");
  EXPECT_EQ(mlx5.hca_type, "MT4118");
  EXPECT_EQ(mlx5.fw_ver, "14.28.2006");
  EXPECT_EQ(mlx5.board_id, "SM_2001000001034");
  EXPECT_EQ(mlx5.node_guid, "0a7f:bc12:45ef:d23b");
  // The capture has no device link: no PCI address, no NUMA node, and no invented value.
  EXPECT_EQ(mlx5.pci_address, "");
  EXPECT_FALSE(mlx5.numa_node);
}

TEST(CollectRdma, ParsesPortStateRateAndLinkLayer) {
  ProcfsTree t;
  std::vector<std::string> notes;
  auto devs = probe::collect_rdma(t.root(), notes);
  const auto& p = device(devs, "hfi1_0").ports.at(0);
  EXPECT_EQ(p.state, "ACTIVE");
  EXPECT_EQ(p.state_code, 4);
  EXPECT_EQ(p.phys_state, "LinkUp");
  EXPECT_EQ(p.phys_state_code, 5);
  EXPECT_EQ(p.rate, "100 Gb/sec (4X EDR)");
  EXPECT_EQ(p.rate_gbps, 100.0);
  EXPECT_EQ(p.link_layer, "InfiniBand");
}

TEST(CollectRdma, PortDataCountersAreBytesNotWords) {
  ProcfsTree t;
  std::vector<std::string> notes;
  auto devs = probe::collect_rdma(t.root(), notes);
  const auto& c = device(devs, "mlx4_0").ports.at(0).counters;
  // The files hold 4-byte words: port_xmit_data 26509113295, port_rcv_data 2221223609.
  EXPECT_EQ(c.at("port_xmit_data"), 26509113295ull * 4);
  EXPECT_EQ(c.at("port_rcv_data"), 2221223609ull * 4);
  // Other counters are taken as they are.
  auto raw = t.root().read_u64("sys/class/infiniband/mlx4_0/ports/1/counters/port_xmit_packets");
  ASSERT_TRUE(raw);
  EXPECT_EQ(c.at("port_xmit_packets"), *raw);
}

TEST(CollectRdma, ReadsHwCounters) {
  ProcfsTree t;
  std::vector<std::string> notes;
  auto devs = probe::collect_rdma(t.root(), notes);
  const auto& hw = device(devs, "mlx5_0").ports.at(0).hw_counters;
  EXPECT_EQ(hw.size(), 25u);
  EXPECT_TRUE(hw.count("out_of_sequence"));
  EXPECT_TRUE(device(devs, "mlx4_0").ports.at(0).hw_counters.empty());
}

TEST(CollectRdma, CountersCanBeSkipped) {
  ProcfsTree t;
  std::vector<std::string> notes;
  auto devs = probe::collect_rdma(t.root(), notes, {.gids = false, .counters = false});
  EXPECT_TRUE(device(devs, "mlx5_0").ports.at(0).counters.empty());
  EXPECT_EQ(device(devs, "mlx5_0").ports.at(0).state, "ACTIVE");
}

TEST(CollectRdma, NoInfinibandClassMeansNoDevicesAndNoNotes) {
  TempDir t;
  std::vector<std::string> notes;
  EXPECT_TRUE(probe::collect_rdma(core::Root(t.path()), notes).empty());
  EXPECT_TRUE(notes.empty());
}

TEST(CollectRdma, NaCounterIsLeftOutWithANote) {
  ProcfsTree t;
  write_file(t.dir.path(), "sys/class/infiniband/mlx4_0/ports/1/counters/VL15_dropped", "N/A (no PMA)\n");
  std::vector<std::string> notes;
  auto devs = probe::collect_rdma(t.root(), notes);
  const auto& c = device(devs, "mlx4_0").ports.at(0).counters;
  EXPECT_FALSE(c.count("VL15_dropped"));
  EXPECT_TRUE(c.count("symbol_error"));
  EXPECT_TRUE(has_note_containing(notes, "VL15_dropped"));
}

TEST(CollectRdma, GarbageStateIsUnknownWithANote) {
  ProcfsTree t;
  write_file(t.dir.path(), "sys/class/infiniband/mlx5_0/ports/1/state", "\x7f\x45LF garbage\n");
  std::vector<std::string> notes;
  auto devs = probe::collect_rdma(t.root(), notes);
  const auto& p = device(devs, "mlx5_0").ports.at(0);
  EXPECT_EQ(p.state, "");
  EXPECT_FALSE(p.state_code);
  EXPECT_EQ(p.link_layer, "InfiniBand");  // the rest of the port is still read
  EXPECT_TRUE(has_note_containing(notes, "mlx5_0/ports/1/state"));
}

TEST(CollectRdma, BinaryRateIsUnknownWithANote) {
  ProcfsTree t;
  write_file(t.dir.path(), "sys/class/infiniband/mlx5_0/ports/1/rate", std::string("25\0Gb", 5));
  std::vector<std::string> notes;
  auto devs = probe::collect_rdma(t.root(), notes);
  EXPECT_FALSE(device(devs, "mlx5_0").ports.at(0).rate_gbps);
  EXPECT_EQ(device(devs, "mlx5_0").ports.at(0).rate, "");
  EXPECT_TRUE(has_note_containing(notes, "mlx5_0/ports/1/rate"));
}

TEST(CollectRdma, MissingRequiredPortFileIsNoted) {
  ProcfsTree t;
  fs::remove(t.dir.path() / "sys/class/infiniband/hfi1_0/ports/1/link_layer");
  std::vector<std::string> notes;
  auto devs = probe::collect_rdma(t.root(), notes);
  EXPECT_EQ(device(devs, "hfi1_0").ports.at(0).link_layer, "");
  EXPECT_TRUE(has_note_containing(notes, "hfi1_0/ports/1/link_layer: missing"));
}

TEST(CollectRdma, TruncatedEmptyFileIsUnknown) {
  ProcfsTree t;
  write_file(t.dir.path(), "sys/class/infiniband/mlx4_0/fw_ver", "");
  std::vector<std::string> notes;
  auto devs = probe::collect_rdma(t.root(), notes);
  EXPECT_EQ(device(devs, "mlx4_0").fw_ver, "");
  EXPECT_TRUE(has_note_containing(notes, "mlx4_0/fw_ver"));
}

TEST(CollectRdma, DeviceThatVanishedAfterListingIsSkippedWithANote) {
  ProcfsTree t;
  // A class entry whose target is gone: what a hot-unplug between readdir and open leaves.
  fs::create_directory_symlink("../../devices/virtual/infiniband/mlx5_9",
                               t.dir.path() / "sys/class/infiniband/mlx5_9");
  std::vector<std::string> notes;
  auto devs = probe::collect_rdma(t.root(), notes);
  EXPECT_EQ(devs.size(), 3u);
  EXPECT_TRUE(has_note_containing(notes, "mlx5_9"));
}

TEST(CollectRdma, OverflowingWordCounterIsLeftOut) {
  ProcfsTree t;
  write_file(t.dir.path(), "sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_data", "18446744073709551615\n");
  std::vector<std::string> notes;
  auto devs = probe::collect_rdma(t.root(), notes);
  EXPECT_FALSE(device(devs, "mlx5_0").ports.at(0).counters.count("port_xmit_data"));
  EXPECT_TRUE(has_note_containing(notes, "counters/port_xmit_data: too large to count in bytes"));
}

// The GID walk on the real Soft-RoCE capture (tests/fixtures/rxe-vm): rxe0 on veth0 (MTU 9000),
// GID 0 fe80:: link-local and GID 1 ::ffff:10.9.0.1, both RoCE v2, as ibv_devinfo -v shows in
// the capture's MACHINE.txt.
class RxeGids : public ::testing::Test {
 protected:
  void SetUp() override { fabscope::testing::copy_tree(fabscope::testing::fixture("rxe-vm"), t.path()); }
  const RdmaPort& port() {
    devs = probe::collect_rdma(core::Root(t.path()), notes);
    return device(devs, "rxe0").ports.at(0);
  }
  std::string port_dir() const { return "sys/devices/virtual/infiniband/rxe0/ports/1/"; }
  TempDir t;
  std::vector<std::string> notes;
  std::vector<RdmaDevice> devs;
};

TEST_F(RxeGids, ListsNonZeroEntriesWithTypeAndNetdev) {
  const auto& p = port();
  ASSERT_EQ(p.gids.size(), 2u);
  EXPECT_EQ(p.gids[0].gid, "fe80:0000:0000:0000:78db:90ff:fe26:5f89");
  EXPECT_FALSE(p.gids[0].ipv4_mapped);
  EXPECT_EQ(p.gids[1].index, 1);
  EXPECT_EQ(p.gids[1].gid, "0000:0000:0000:0000:0000:ffff:0a09:0001");
  EXPECT_EQ(p.gids[1].type, "RoCE v2");
  EXPECT_EQ(p.gids[1].netdev, "veth0");
  EXPECT_TRUE(p.gids[1].ipv4_mapped);
}

TEST_F(RxeGids, PreferredRoceV2GidIsTheIpv4One) {
  EXPECT_EQ(probe::preferred_roce_v2_gid(port()), 1);
}

TEST_F(RxeGids, PortNetdevComesFromGidNdevs) {
  EXPECT_EQ(port().netdev, "veth0");
}

TEST_F(RxeGids, ActiveMtuMatchesWhatVerbsReported) {
  // veth0 MTU 9000; ibv_devinfo in MACHINE.txt: active_mtu 4096 (5).
  EXPECT_EQ(port().active_mtu, 4096);
}

TEST_F(RxeGids, LowNetdevMtuLowersTheActiveMtu) {
  // Derived: veth0's MTU set to 1500.
  write_file(t.path(), "sys/devices/virtual/net/veth0/mtu", "1500\n");
  EXPECT_EQ(port().active_mtu, 1024);
}

TEST_F(RxeGids, SoftwareDeviceHasNoPciAddress) {
  port();
  EXPECT_EQ(device(devs, "rxe0").pci_address, "");
  EXPECT_FALSE(device(devs, "rxe0").numa_node);
}

TEST_F(RxeGids, GidsCanBeSkipped) {
  auto d = probe::collect_rdma(core::Root(t.path()), notes, {.gids = false, .counters = true});
  EXPECT_TRUE(device(d, "rxe0").ports.at(0).gids.empty());
  EXPECT_FALSE(device(d, "rxe0").ports.at(0).hw_counters.empty());
}

TEST_F(RxeGids, IndicesSortNumerically) {
  // Derived: GID 1 copied into slot 10, which sorts before 2 as text.
  write_file(t.path(), port_dir() + "gids/10", "0000:0000:0000:0000:0000:ffff:0a09:0001\n");
  const auto& gids = port().gids;
  ASSERT_EQ(gids.size(), 3u);
  EXPECT_EQ(gids.back().index, 10);
}

TEST_F(RxeGids, EmptyFirmwareIsUnknownWithANote) {
  // rxe writes fw_ver as a bare newline.
  port();
  EXPECT_EQ(device(devs, "rxe0").fw_ver, "");
  EXPECT_TRUE(has_note_containing(notes, "rxe0/fw_ver: empty"));
}
