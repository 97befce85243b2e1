// Verbs collector: the translations of libibverbs values to sysfs spellings, and the
// collector's behaviour on a machine without RDMA devices. The collector itself is exercised
// against real rxe devices by the soft-RoCE VM test (tests/vm).
#include "probe/verbs.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "probe/rdma.hpp"

using namespace fabscope;

TEST(VerbsMtu, EnumMapsToBytesAsIbvMtuDefines) {
  // <infiniband/verbs.h>: IBV_MTU_256 = 1 ... IBV_MTU_4096 = 5
  EXPECT_EQ(probe::verbs_mtu_bytes(1), 256);
  EXPECT_EQ(probe::verbs_mtu_bytes(3), 1024);
  EXPECT_EQ(probe::verbs_mtu_bytes(5), 4096);
}

TEST(VerbsMtu, OutOfRangeEnumIsUnknown) {
  EXPECT_FALSE(probe::verbs_mtu_bytes(0));
  EXPECT_FALSE(probe::verbs_mtu_bytes(6));
  EXPECT_FALSE(probe::verbs_mtu_bytes(-1));
}

TEST(VerbsPortState, NamesMatchTheSysfsSpelling) {
  // sysfs writes "4: ACTIVE"; the probe keeps the name after the code.
  auto sysfs = probe::parse_coded_state("4: ACTIVE");
  ASSERT_TRUE(sysfs);
  EXPECT_EQ(probe::verbs_port_state_name(4), sysfs->name);
  EXPECT_EQ(probe::verbs_port_state_name(1), probe::parse_coded_state("1: DOWN")->name);
  EXPECT_EQ(probe::verbs_port_state_name(5), "ACTIVE_DEFER");
  EXPECT_EQ(probe::verbs_port_state_name(6), "");
}

TEST(VerbsPhysState, NamesMatchTheSysfsSpelling) {
  EXPECT_EQ(probe::verbs_phys_state_name(5), probe::parse_coded_state("5: LinkUp")->name);
  EXPECT_EQ(probe::verbs_phys_state_name(3), probe::parse_coded_state("3: Disabled")->name);
  EXPECT_EQ(probe::verbs_phys_state_name(2), probe::parse_coded_state("2: Polling")->name);
  EXPECT_EQ(probe::verbs_phys_state_name(0), "");
  EXPECT_EQ(probe::verbs_phys_state_name(8), "");
}

TEST(VerbsLinkLayer, UnspecifiedMeansInfiniBand) {
  EXPECT_EQ(probe::verbs_link_layer_name(0), "InfiniBand");
  EXPECT_EQ(probe::verbs_link_layer_name(1), "InfiniBand");
  EXPECT_EQ(probe::verbs_link_layer_name(2), "Ethernet");
  EXPECT_EQ(probe::verbs_link_layer_name(3), "");
}

TEST(VerbsGidType, NamesTheThreeGidTypes) {
  EXPECT_EQ(probe::verbs_gid_type_name(0), "IB");
  EXPECT_EQ(probe::verbs_gid_type_name(1), "RoCE v1");
  EXPECT_EQ(probe::verbs_gid_type_name(2), "RoCE v2");
  EXPECT_EQ(probe::verbs_gid_type_name(3), "");
}

TEST(VerbsRate, AgreesWithTheRatesSysfsWrites) {
  // (width code, speed code) as ibv_query_port returns them, beside the kernel's rate text
  // for the same port: rxe in the VM, and the hfi1/mlx4/mlx5 ports of the procfs capture.
  EXPECT_EQ(probe::verbs_rate_gbps(1, 8), probe::parse_rate_gbps("10 Gb/sec (1X FDR10)"));
  EXPECT_EQ(probe::verbs_rate_gbps(2, 32), probe::parse_rate_gbps("100 Gb/sec (4X EDR)"));
  EXPECT_EQ(probe::verbs_rate_gbps(2, 16), probe::parse_rate_gbps("56 Gb/sec (4X FDR)"));
  EXPECT_EQ(probe::verbs_rate_gbps(2, 4), probe::parse_rate_gbps("40 Gb/sec (4X QDR)"));
  EXPECT_EQ(probe::verbs_rate_gbps(1, 1), probe::parse_rate_gbps("2.5 Gb/sec (1X)"));
  EXPECT_EQ(probe::verbs_rate_gbps(2, 128), probe::parse_rate_gbps("400 Gb/sec (4X NDR)"));
}

TEST(VerbsRate, UnknownCodesAreUnknown) {
  EXPECT_FALSE(probe::verbs_rate_gbps(3, 8));
  EXPECT_FALSE(probe::verbs_rate_gbps(1, 3));
}

TEST(FormatGid, WritesEightGroupsLikeSysfs) {
  // ::ffff:10.9.0.1, the RoCE v2 GID of rxe0 in the VM; sysfs gids/1 reads as below.
  const std::uint8_t raw[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 9, 0, 1};
  EXPECT_EQ(probe::format_gid(raw), "0000:0000:0000:0000:0000:ffff:0a09:0001");
  EXPECT_TRUE(probe::is_ipv4_mapped_gid(probe::format_gid(raw)));
}

TEST(FormatGuid, KeepsNetworkByteOrder) {
  // ibv_devinfo and sysfs node_guid of rxe0 in the VM: 94c8:d9ff:fe9b:183a
  const std::uint8_t be[8] = {0x94, 0xc8, 0xd9, 0xff, 0xfe, 0x9b, 0x18, 0x3a};
  std::uint64_t guid_be;
  std::memcpy(&guid_be, be, sizeof guid_be);
  EXPECT_EQ(probe::format_guid_be(guid_be), "94c8:d9ff:fe9b:183a");
}

TEST(CollectVerbs, SaysWhyWhenNotAvailable) {
  // On build machines without RDMA hardware: no crash, and an explanation when unavailable.
  VerbsInfo v = probe::collect_verbs();
  EXPECT_FALSE(v.status.empty());
  if (!v.available) {
    EXPECT_TRUE(v.devices.empty());
  }
  for (const auto& d : v.devices) EXPECT_FALSE(d.name.empty());
}
