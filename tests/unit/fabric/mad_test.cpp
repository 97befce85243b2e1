// The MAD decoders and encoders (src/fabric/mad.cpp) on bytes captured from the simulator
// (tests/fixtures/fabric-mads, see its SOURCE), compared field by field with libibmad's own
// mad_decode_field where the test is linked with libibmad (FABSCOPE_TEST_LIBIBMAD).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "fabric/mad.hpp"
#include "support/fixtures.hpp"

#ifdef FABSCOPE_TEST_LIBIBMAD
#include <infiniband/mad.h>
#endif

using namespace fabscope::fabric;
using fabscope::testing::fixture;

namespace {

std::vector<std::uint8_t> load(const std::string& name) {
  std::ifstream f(fixture("fabric-mads/" + name + ".hex"));
  EXPECT_TRUE(f) << name;
  std::vector<std::uint8_t> out;
  std::string tok;
  while (f >> tok) out.push_back(static_cast<std::uint8_t>(std::stoul(tok, nullptr, 16)));
  EXPECT_EQ(out.size(), 256u) << name;
  return out;
}

std::span<const std::uint8_t> smp(const std::vector<std::uint8_t>& m) { return mad::smp_data(m); }
std::span<const std::uint8_t> pma(const std::vector<std::uint8_t>& m) { return mad::pma_data(m); }

#ifdef FABSCOPE_TEST_LIBIBMAD
std::uint64_t field(std::span<const std::uint8_t> data, MAD_FIELDS f) {
  std::vector<std::uint8_t> copy(data.begin(), data.end());
  std::uint64_t v = 0;  // a field of up to 32 bits is written as a uint32_t: the low half here
  mad_decode_field(copy.data(), f, &v);
  return v;
}
// The raw codes as IBA writes them, for the model's values.
int lanes(std::uint64_t code) {
  switch (code) {
    case 1: return 1;
    case 2: return 4;
    case 4: return 8;
    case 8: return 12;
    case 16: return 2;
    default: return 0;
  }
}
WidthMask width_codes(std::uint64_t bits) {
  WidthMask m = 0;
  for (std::uint64_t b = 1; b <= 16; b <<= 1)
    if (bits & b) m |= width_bit(lanes(b));
  return m;
}
#endif

const char* kPortInfos[] = {"switch-portinfo-0", "switch-portinfo-1", "switch-portinfo-3", "switch-portinfo-5",
                            "hca-portinfo-1"};

}  // namespace

TEST(FabricMad, PortInfoFromTheSimulator) {
  auto hca = mad::decode_port_info(smp(load("hca-portinfo-1")));
  EXPECT_EQ(hca.state, PortState::Active);
  EXPECT_EQ(hca.phys_state, PhysState::LinkUp);
  EXPECT_EQ(hca.lid, 1);
  EXPECT_EQ(hca.sm_lid, 1);
  EXPECT_TRUE(hca.capability_mask & mad::kCapIsSM);
  EXPECT_EQ(hca.width_active, 4);
  EXPECT_EQ(hca.speed_active, Speed::HDR);  // LinkSpeedExtActive over LinkSpeedActive (QDR)
  EXPECT_EQ(hca.mtu_active, 2048);
  EXPECT_EQ(hca.width_supported, width_bit(1) | width_bit(2) | width_bit(4) | width_bit(8) | width_bit(12));
  EXPECT_EQ(fastest(hca.speed_supported), Speed::HDR);

  // A switch's external port carries no capability mask: port 0's says extended speeds count.
  auto sw0 = mad::decode_port_info(smp(load("switch-portinfo-0")));
  EXPECT_EQ(sw0.lid, 3);
  auto narrow = mad::decode_port_info(smp(load("switch-portinfo-3")), sw0.capability_mask);
  EXPECT_EQ(narrow.width_active, 1);
  EXPECT_EQ(narrow.speed_active, Speed::HDR);
  auto without = mad::decode_port_info(smp(load("switch-portinfo-3")));
  EXPECT_EQ(without.speed_active, Speed::QDR);
  auto down = mad::decode_port_info(smp(load("switch-portinfo-5")), sw0.capability_mask);
  EXPECT_EQ(down.state, PortState::Down);
  EXPECT_EQ(down.phys_state, PhysState::Polling);
}

#ifdef FABSCOPE_TEST_LIBIBMAD
TEST(FabricMad, PortInfoEqualsLibibmad) {
  for (const char* name : kPortInfos) {
    SCOPED_TRACE(name);
    auto m = load(name);
    auto d = smp(m);
    auto p = mad::decode_port_info(d);
    EXPECT_EQ(p.lid, field(d, IB_PORT_LID_F));
    EXPECT_EQ(p.sm_lid, field(d, IB_PORT_SMLID_F));
    EXPECT_EQ(p.capability_mask, field(d, IB_PORT_CAPMASK_F));
    EXPECT_EQ(static_cast<int>(p.state), static_cast<int>(field(d, IB_PORT_STATE_F)));
    EXPECT_EQ(static_cast<int>(p.phys_state), static_cast<int>(field(d, IB_PORT_PHYS_STATE_F)));
    EXPECT_EQ(p.link_down_default, static_cast<int>(field(d, IB_PORT_LINK_DOWN_DEF_F)));
    EXPECT_EQ(p.lmc, static_cast<int>(field(d, IB_PORT_LMC_F)));
    EXPECT_EQ(p.width_active, lanes(field(d, IB_PORT_LINK_WIDTH_ACTIVE_F)));
    EXPECT_EQ(p.width_enabled, width_codes(field(d, IB_PORT_LINK_WIDTH_ENABLED_F)));
    EXPECT_EQ(p.width_supported, width_codes(field(d, IB_PORT_LINK_WIDTH_SUPPORTED_F)));
    EXPECT_EQ(p.mtu_active, 128 << field(d, IB_PORT_NEIGHBOR_MTU_F));
    EXPECT_EQ(p.mtu_max, 128 << field(d, IB_PORT_MTU_CAP_F));
    // Speeds: extended when the port (or its switch's port 0) says so, as iblinkinfo does.
    auto with_ext = mad::decode_port_info(d, mad::kCapExtendedSpeeds);
    std::uint64_t ext = field(d, IB_PORT_LINK_SPEED_EXT_ACTIVE_F), base = field(d, IB_PORT_LINK_SPEED_ACTIVE_F);
    Speed want = ext == 1 ? Speed::FDR : ext == 2 ? Speed::EDR : ext == 4 ? Speed::HDR : ext == 8 ? Speed::NDR
               : base == 1 ? Speed::SDR : base == 2 ? Speed::DDR : base == 4 ? Speed::QDR : Speed::Unknown;
    EXPECT_EQ(with_ext.speed_active, want);
    std::uint64_t ext_sup = field(d, IB_PORT_LINK_SPEED_EXT_SUPPORTED_F);
    EXPECT_EQ(static_cast<bool>(with_ext.speed_supported & speed_bit(Speed::HDR)), static_cast<bool>(ext_sup & 4));
    EXPECT_EQ(static_cast<bool>(with_ext.speed_supported & speed_bit(Speed::FDR)), static_cast<bool>(ext_sup & 1));
    std::uint64_t sup = field(d, IB_PORT_LINK_SPEED_SUPPORTED_F);
    EXPECT_EQ(static_cast<bool>(p.speed_supported & speed_bit(Speed::QDR)), static_cast<bool>(sup & 4));
    EXPECT_EQ(static_cast<bool>(p.speed_supported & speed_bit(Speed::SDR)), static_cast<bool>(sup & 1));
  }
}

TEST(FabricMad, NodeInfoAndSmInfoEqualLibibmad) {
  for (const char* name : {"switch-nodeinfo", "hca-nodeinfo"}) {
    SCOPED_TRACE(name);
    auto m = load(name);
    auto d = smp(m);
    auto n = mad::decode_node_info(d);
    EXPECT_EQ(static_cast<int>(n.type), static_cast<int>(field(d, IB_NODE_TYPE_F)));
    EXPECT_EQ(n.num_ports, static_cast<int>(field(d, IB_NODE_NPORTS_F)));
    EXPECT_EQ(n.system_guid, field(d, IB_NODE_SYSTEM_GUID_F));
    EXPECT_EQ(n.node_guid, field(d, IB_NODE_GUID_F));
    EXPECT_EQ(n.port_guid, field(d, IB_NODE_PORT_GUID_F));
    EXPECT_EQ(n.device_id, field(d, IB_NODE_DEVID_F));
    EXPECT_EQ(n.revision, field(d, IB_NODE_REVISION_F));
    EXPECT_EQ(n.local_port, static_cast<int>(field(d, IB_NODE_LOCAL_PORT_F)));
    EXPECT_EQ(n.vendor_id, field(d, IB_NODE_VENDORID_F));
  }
  auto m = load("hca-sminfo");
  auto d = smp(m);
  auto s = mad::decode_sm_info(d);
  EXPECT_EQ(s.guid, field(d, IB_SMINFO_GUID_F));
  EXPECT_EQ(s.act_count, field(d, IB_SMINFO_ACT_F));
  EXPECT_EQ(s.priority, static_cast<int>(field(d, IB_SMINFO_PRIO_F)));
  EXPECT_EQ(static_cast<int>(s.state), static_cast<int>(field(d, IB_SMINFO_STATE_F)));
  EXPECT_EQ(s.state, SmState::Master);
}

TEST(FabricMad, CountersEqualLibibmad) {
  auto cm = load("pma-classportinfo");
  auto cap = mad::decode_pma_capability(pma(cm));
  EXPECT_EQ(cap, field(pma(cm), IB_CPI_CAPMASK_F));
  EXPECT_TRUE(cap & mad::kPmaXmitWait);
  EXPECT_TRUE(cap & mad::kPmaExtWidth);

  auto m = load("pma-portcounters");
  auto d = pma(m);
  Counters c;
  mad::decode_port_counters(d, true, c);
  EXPECT_EQ(mad::decode_port_select(d), static_cast<int>(field(d, IB_PC_PORT_SELECT_F)));
  const std::pair<Counter, MAD_FIELDS> pairs[] = {
      {Counter::SymbolErrorCounter, IB_PC_ERR_SYM_F},
      {Counter::LinkErrorRecoveryCounter, IB_PC_LINK_RECOVERS_F},
      {Counter::LinkDownedCounter, IB_PC_LINK_DOWNED_F},
      {Counter::PortRcvErrors, IB_PC_ERR_RCV_F},
      {Counter::PortRcvRemotePhysicalErrors, IB_PC_ERR_PHYSRCV_F},
      {Counter::PortRcvSwitchRelayErrors, IB_PC_ERR_SWITCH_REL_F},
      {Counter::PortXmitDiscards, IB_PC_XMT_DISCARDS_F},
      {Counter::PortXmitConstraintErrors, IB_PC_ERR_XMTCONSTR_F},
      {Counter::PortRcvConstraintErrors, IB_PC_ERR_RCVCONSTR_F},
      {Counter::LocalLinkIntegrityErrors, IB_PC_ERR_LOCALINTEG_F},
      {Counter::ExcessiveBufferOverrunErrors, IB_PC_ERR_EXCESS_OVR_F},
      {Counter::VL15Dropped, IB_PC_VL15_DROPPED_F},
      {Counter::PortXmitData, IB_PC_XMT_BYTES_F},
      {Counter::PortRcvData, IB_PC_RCV_BYTES_F},
      {Counter::PortXmitPkts, IB_PC_XMT_PKTS_F},
      {Counter::PortRcvPkts, IB_PC_RCV_PKTS_F},
      {Counter::PortXmitWait, IB_PC_XMT_WAIT_F},
  };
  for (auto [counter, f] : pairs) EXPECT_EQ(c[counter], field(d, f)) << counter_name(counter);
  // What the capture set with PerformanceSet (SOURCE).
  EXPECT_EQ(c[Counter::SymbolErrorCounter], 55u);
  EXPECT_EQ(c[Counter::LinkDownedCounter], 3u);
  EXPECT_EQ(c[Counter::PortRcvErrors], 1234u);
  EXPECT_EQ(c[Counter::LocalLinkIntegrityErrors], 9u);
  EXPECT_EQ(c[Counter::ExcessiveBufferOverrunErrors], 5u);
  EXPECT_EQ(c[Counter::PortXmitWait], 777u);

  auto xm = load("pma-portcounters-ext");
  auto xd = pma(xm);
  mad::decode_port_counters_ext(xd, c);
  EXPECT_TRUE(c.extended);
  EXPECT_EQ(c[Counter::PortXmitData], field(xd, IB_PC_EXT_XMT_BYTES_F));
  EXPECT_EQ(c[Counter::PortRcvData], field(xd, IB_PC_EXT_RCV_BYTES_F));
  EXPECT_EQ(c[Counter::PortXmitPkts], field(xd, IB_PC_EXT_XMT_PKTS_F));
  EXPECT_EQ(c[Counter::PortRcvPkts], field(xd, IB_PC_EXT_RCV_PKTS_F));
  EXPECT_EQ(mad::decode_port_select(xd), static_cast<int>(field(xd, IB_PC_EXT_PORT_SELECT_F)));
  EXPECT_EQ(c[Counter::SymbolErrorCounter], 55u);  // the error counters stay PortCounters'
}

TEST(FabricMad, SwitchInfoEqualsLibibmad) {
  auto m = load("switch-switchinfo");
  auto d = smp(m);
  auto w = mad::decode_switch_info(d);
  EXPECT_EQ(w.linear_fdb_cap, field(d, IB_SW_LINEAR_FDB_CAP_F));
  EXPECT_EQ(w.random_fdb_cap, field(d, IB_SW_RANDOM_FDB_CAP_F));
  EXPECT_EQ(w.mcast_fdb_cap, field(d, IB_SW_MCAST_FDB_CAP_F));
  EXPECT_EQ(w.linear_fdb_top, field(d, IB_SW_LINEAR_FDB_TOP_F));
  EXPECT_EQ(w.default_port, static_cast<int>(field(d, IB_SW_DEF_PORT_F)));
  EXPECT_EQ(w.life_time, static_cast<int>(field(d, IB_SW_LIFE_TIME_F)));
  EXPECT_EQ(w.port_state_change, field(d, IB_SW_STATE_CHANGE_F) != 0);
  EXPECT_EQ(w.lids_per_port, field(d, IB_SW_LIDS_PER_PORT_F));
  EXPECT_EQ(w.partition_enforcement_cap, field(d, IB_SW_PARTITION_ENFORCE_CAP_F));
  EXPECT_EQ(w.enhanced_port0, field(d, IB_SW_ENHANCED_PORT0_F) != 0);
  EXPECT_EQ(w.mcast_fdb_top, field(d, IB_SW_MCAST_FDB_TOP_F));
  // Every bit set: each field at its full width, none spilling into its neighbour.
  std::vector<std::uint8_t> ones(64, 0xff);
  auto all = mad::decode_switch_info(ones);
  EXPECT_EQ(all.linear_fdb_top, field(ones, IB_SW_LINEAR_FDB_TOP_F));
  EXPECT_EQ(all.life_time, static_cast<int>(field(ones, IB_SW_LIFE_TIME_F)));
  EXPECT_EQ(all.enhanced_port0, field(ones, IB_SW_ENHANCED_PORT0_F) != 0);
  EXPECT_EQ(all.mcast_fdb_top, field(ones, IB_SW_MCAST_FDB_TOP_F));
}

TEST(FabricMad, RequestsAsLibibmadReadsThem) {
  auto p = mad::pma_get(mad::PortCounters, 7, 0x1234567890ull);
  EXPECT_EQ(mad_get_field(p.data(), 0, IB_MAD_BASEVER_F), 1u);
  EXPECT_EQ(mad_get_field(p.data(), 0, IB_MAD_MGMTCLASS_F), 0x04u);
  EXPECT_EQ(mad_get_field(p.data(), 0, IB_MAD_CLASSVER_F), 1u);
  EXPECT_EQ(mad_get_field(p.data(), 0, IB_MAD_METHOD_F), 1u);
  EXPECT_EQ(mad_get_field(p.data(), 0, IB_MAD_ATTRID_F), 0x12u);
  EXPECT_EQ(mad_get_field64(p.data(), 0, IB_MAD_TRID_F), 0x1234567890ull);
  EXPECT_EQ(mad_get_field(p.data(), IB_PC_DATA_OFFS, IB_PC_PORT_SELECT_F), 7u);

  auto s = mad::smp_dr_get(mad::LinearForwardingTable, 2, 9, {1, 31, 4});
  EXPECT_EQ(mad_get_field(s.data(), 0, IB_MAD_MGMTCLASS_F), 0x81u);
  EXPECT_EQ(mad_get_field(s.data(), 0, IB_MAD_ATTRID_F), 0x19u);
  EXPECT_EQ(mad_get_field(s.data(), 0, IB_MAD_ATTRMOD_F), 2u);
  EXPECT_EQ(mad_get_field(s.data(), 0, IB_DRSMP_HOPCNT_F), 3u);
  EXPECT_EQ(mad_get_field(s.data(), 0, IB_DRSMP_HOPPTR_F), 0u);
  EXPECT_EQ(mad_get_field(s.data(), 0, IB_DRSMP_DIRECTION_F), 0u);
  EXPECT_EQ(mad_get_field(s.data(), 0, IB_DRSMP_DRSLID_F), 0xffffu);
  EXPECT_EQ(mad_get_field(s.data(), 0, IB_DRSMP_DRDLID_F), 0xffffu);
  EXPECT_EQ(s[128 + 1], 1);
  EXPECT_EQ(s[128 + 2], 31);
  EXPECT_EQ(s[128 + 3], 4);
}
#endif

TEST(FabricMad, NodeDescriptionLftAndHeader) {
  auto m = load("switch-nodedesc");
  EXPECT_EQ(mad::decode_node_desc(smp(m)), "S-leaf1");
  auto h = mad::decode_header(m);
  EXPECT_EQ(h.mgmt_class, mad::SmpDirected);
  EXPECT_EQ(h.method, mad::GetResp);
  EXPECT_EQ(h.attr_id, mad::NodeDesc);
  auto lft = mad::decode_lft_block(smp(load("switch-lft-0")));
  EXPECT_EQ(lft[1], 1);  // H-node1 (LID 1) hangs off S-leaf1 port 1
  EXPECT_EQ(lft[3], 0);  // S-leaf1's own LID: port 0
  auto n = mad::decode_node_info(smp(load("switch-nodeinfo")));
  EXPECT_EQ(n.type, NodeType::Switch);
  EXPECT_EQ(n.num_ports, 8);
  EXPECT_EQ(n.node_guid, 0x200000u);
}

TEST(FabricMad, SwitchInfoFromTheSimulator) {
  auto m = load("switch-switchinfo");
  EXPECT_EQ(mad::decode_header(m).attr_id, mad::SwitchInfo);
  auto w = mad::decode_switch_info(smp(m));
  EXPECT_EQ(w.linear_fdb_top, 10);  // the highest LID OpenSM gave (smpquery switchinfo: LinearFdbTop 10)
  EXPECT_EQ(w.linear_fdb_cap, 30720);
  EXPECT_EQ(w.mcast_fdb_cap, 1024);
  EXPECT_EQ(w.life_time, 18);
  EXPECT_EQ(w.partition_enforcement_cap, 64);
  EXPECT_FALSE(w.enhanced_port0);
  EXPECT_THROW(mad::decode_switch_info(std::vector<std::uint8_t>(19)), fabscope::Error);
}

TEST(FabricMad, ShortInputIsAnErrorNamingTheAttribute) {
  std::vector<std::uint8_t> shortbuf(63);
  EXPECT_THROW(mad::decode_port_info(shortbuf), fabscope::Error);
  EXPECT_THROW(mad::smp_data(shortbuf), fabscope::Error);
  EXPECT_THROW(mad::pma_data(std::vector<std::uint8_t>(255)), fabscope::Error);
  Counters c;
  try {
    mad::decode_port_counters(std::vector<std::uint8_t>(43), true, c);
    FAIL() << "no error";
  } catch (const fabscope::Error& e) {
    EXPECT_NE(std::string(e.what()).find("PortCounters: 43 bytes, need 44"), std::string::npos) << e.what();
  }
  mad::decode_port_counters(std::vector<std::uint8_t>(40), false, c);  // no PortXmitWait: 40 bytes do
  EXPECT_FALSE(c[Counter::PortXmitWait]);
  EXPECT_THROW(mad::decode_header(std::vector<std::uint8_t>(23)), fabscope::Error);
}

TEST(FabricMad, UnknownCodesDecodeAsUnknown) {
  std::vector<std::uint8_t> d(64, 0xff);
  auto p = mad::decode_port_info(d);
  EXPECT_EQ(p.state, PortState::Unknown);
  EXPECT_EQ(p.phys_state, PhysState::Unknown);
  EXPECT_EQ(p.mtu_active, 0);
  EXPECT_EQ(p.speed_active, Speed::Unknown);  // 0xf is no single LinkSpeedActive code...
  std::vector<std::uint8_t> n(64, 0xff);
  EXPECT_EQ(mad::decode_node_info(n).type, NodeType::Unknown);
  EXPECT_EQ(mad::decode_sm_info(n).state, SmState::NotActive);
}

TEST(FabricMad, DirectedRoutePaths) {
  EXPECT_EQ(mad::parse_dr_path("0"), std::vector<std::uint8_t>{});
  EXPECT_EQ(mad::parse_dr_path("0,1,31"), (std::vector<std::uint8_t>{1, 31}));
  for (const char* bad : {"", "1,2", "0,", "0,,1", "0,256", "0,0", "0,x", " 0"})
    EXPECT_THROW(mad::parse_dr_path(bad), fabscope::Error) << bad;
  std::string long_path = "0";
  for (int i = 0; i < 64; ++i) long_path += ",1";
  EXPECT_THROW(mad::parse_dr_path(long_path), fabscope::Error);
}
