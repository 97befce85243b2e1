// PCI collector: sys/bus/pci/devices of the real 2xH200 capture, config-space ACS walk, paths.
#include "probe/pci.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/fixtures.hpp"
#include "test_util.hpp"

using namespace fabscope;
using fabscope::testing::fixture;
using fabscope::testing::has_note_containing;
using fabscope::testing::TempDir;
using fabscope::testing::write_file;
namespace fs = std::filesystem;

namespace {
const PciDevice& find(const std::vector<PciDevice>& v, const std::string& addr) {
  for (const auto& d : v)
    if (d.address == addr) return d;
  throw std::runtime_error("no PCI device " + addr);
}
std::vector<std::uint8_t> gpu_config() {
  core::Root root(fixture("h200x2-node"));
  return root.read_bytes("sys/bus/pci/devices/0000:00:06.0/config", 4096).value();
}
}  // namespace

TEST(LinkSpeed, ParsesKernelText) {
  EXPECT_EQ(probe::parse_link_speed_gts("32.0 GT/s PCIe"), 32.0);
  EXPECT_EQ(probe::parse_link_speed_gts("2.5 GT/s"), 2.5);
  EXPECT_EQ(probe::parse_link_speed_gts("8 GT/s"), 8.0);
}

TEST(LinkSpeed, UnknownAndGarbageAreNull) {
  EXPECT_FALSE(probe::parse_link_speed_gts("Unknown"));
  EXPECT_FALSE(probe::parse_link_speed_gts("fast GT/s"));
  EXPECT_FALSE(probe::parse_link_speed_gts(""));
}

TEST(PciPath, BridgesBetweenRootComplexAndDevice) {
  auto p = probe::parse_pci_path("../../../devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:02.0/0000:18:00.0",
                                 "0000:18:00.0");
  EXPECT_EQ(p.root_complex, "pci0000:15");
  EXPECT_EQ(p.upstream, (std::vector<std::string>{"0000:15:01.0", "0000:16:00.0", "0000:17:02.0"}));
}

TEST(PciPath, DeviceOnTheRootBusHasNoBridges) {
  auto p = probe::parse_pci_path("../../../devices/pci0000:00/0000:00:06.0", "0000:00:06.0");
  EXPECT_EQ(p.root_complex, "pci0000:00");
  EXPECT_TRUE(p.upstream.empty());
}

TEST(Acs, RealGpuConfigHasNoAcsCapability) {
  EXPECT_EQ(probe::find_acs_ctrl(gpu_config()).status, probe::AcsLookup::Status::Absent);
}

TEST(Acs, FoundWhenTheCapabilityIdIs0x000D) {
  // Derived from the real GPU config: the capability at 0x2f0 relabelled ACS (ID 0x000D).
  auto config = gpu_config();
  config[0x2f0] = 0x0d;
  config[0x2f1] = 0x00;
  config[0x2f6] = 0x1d;
  config[0x2f7] = 0x00;
  auto acs = probe::find_acs_ctrl(config);
  EXPECT_EQ(acs.status, probe::AcsLookup::Status::Present);
  EXPECT_EQ(acs.ctrl, 0x001d);
}

TEST(Acs, UnreadableWhenOnly256BytesAreVisible) {
  auto config = gpu_config();
  config.resize(256);
  EXPECT_EQ(probe::find_acs_ctrl(config).status, probe::AcsLookup::Status::Unreadable);
  config.resize(64);  // what a non-root reader gets
  EXPECT_EQ(probe::find_acs_ctrl(config).status, probe::AcsLookup::Status::Unreadable);
}

TEST(Acs, LoopingCapabilityListEndsAsMalformed) {
  auto config = gpu_config();
  // Point the capability at 0x12c back to 0x100: a cycle.
  std::uint32_t header = 0x0018 | (1u << 16) | (0x100u << 20);
  for (int i = 0; i < 4; ++i) config[0x12c + i] = static_cast<std::uint8_t>(header >> (8 * i));
  EXPECT_EQ(probe::find_acs_ctrl(config).status, probe::AcsLookup::Status::Malformed);
}

TEST(Acs, NextPointerPastTheEndIsMalformed) {
  auto config = gpu_config();
  config.resize(0x130);  // truncated inside the list
  EXPECT_EQ(probe::find_acs_ctrl(config).status, probe::AcsLookup::Status::Malformed);
}

TEST(CollectPci, ListsEveryFunctionOfTheH200Node) {
  std::vector<std::string> notes;
  auto pci = probe::collect_pci(core::Root(fixture("h200x2-node")), notes);
  EXPECT_EQ(pci.size(), 8u);
  EXPECT_TRUE(notes.empty()) << notes.front();
}

TEST(CollectPci, ReadsGpuIdentityAndLink) {
  std::vector<std::string> notes;
  auto pci = probe::collect_pci(core::Root(fixture("h200x2-node")), notes);
  const auto& gpu = find(pci, "0000:00:06.0");
  EXPECT_EQ(gpu.class_code, 0x030200u);
  EXPECT_EQ(gpu.vendor, "0x10de");
  EXPECT_EQ(gpu.device, "0x2335");
  EXPECT_EQ(gpu.driver, "nvidia");
  EXPECT_EQ(gpu.current_link_speed_gts, 32.0);
  EXPECT_EQ(gpu.max_link_speed_gts, 32.0);
  EXPECT_EQ(gpu.current_link_width, 16);
  EXPECT_EQ(gpu.root_complex, "pci0000:00");
  EXPECT_TRUE(gpu.upstream.empty());
  EXPECT_FALSE(gpu.is_bridge);
  EXPECT_FALSE(gpu.acs_enabled);
}

TEST(CollectPci, NumaNodeMinusOneIsUnknown) {
  std::vector<std::string> notes;
  auto pci = probe::collect_pci(core::Root(fixture("h200x2-node")), notes);
  EXPECT_FALSE(find(pci, "0000:00:06.0").numa_node);  // the file says -1
}

TEST(CollectPci, HostBridgeIsNotAPciBridge) {
  std::vector<std::string> notes;
  auto pci = probe::collect_pci(core::Root(fixture("h200x2-node")), notes);
  EXPECT_FALSE(find(pci, "0000:00:00.0").is_bridge);  // class 0x0600, not 0x0604
}

class PciVariant : public ::testing::Test {
 protected:
  void SetUp() override { fabscope::testing::copy_tree(fixture("h200x2-node"), t.path()); }
  std::vector<PciDevice> collect() { return probe::collect_pci(core::Root(t.path()), notes); }
  std::string dev(const std::string& addr) { return "sys/devices/pci0000:00/" + addr + "/"; }
  TempDir t;
  std::vector<std::string> notes;
};

TEST_F(PciVariant, BridgeWithAcsRedirectIsEnabled) {
  // The host bridge's real config, reclassified as a PCI bridge with an ACS capability at 0x100
  // whose control register has P2P Request Redirect (bit 2) set.
  auto path = t.path() / dev("0000:00:00.0");
  write_file(path, "class", "0x060400\n");
  auto bytes = core::Root(t.path()).read_bytes(dev("0000:00:00.0") + "config", 4096).value();
  bytes[0x100] = 0x0d;
  bytes[0x101] = 0x00;
  bytes[0x106] = 0x04;
  std::ofstream(path / "config", std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  auto pci = collect();
  const auto& d = find(pci, "0000:00:00.0");
  EXPECT_TRUE(d.is_bridge);
  EXPECT_EQ(d.acs_ctrl, 0x0004);
  EXPECT_EQ(d.acs_enabled, true);
}

TEST_F(PciVariant, BridgeWithShortConfigHasUnknownAcs) {
  write_file(t.path() / dev("0000:00:00.0"), "class", "0x060400\n");
  write_file(t.path() / dev("0000:00:00.0"), "config", std::string(64, '\0'));
  auto pci = collect();
  const auto& d = find(pci, "0000:00:00.0");
  EXPECT_FALSE(d.acs_enabled);
  EXPECT_FALSE(d.acs_ctrl);
  // 64 bytes is the kernel's answer to a non-root reader: said so, so that check does not judge it.
  EXPECT_TRUE(has_note_containing(notes, "0000:00:00.0/config: ACS control not readable as this user"));
}

TEST_F(PciVariant, BridgeWith256ByteConfigHasUnknownAcsWithoutNote) {
  // A conventional PCI bridge has no extended config space: nothing to read, nothing to report.
  write_file(t.path() / dev("0000:00:00.0"), "class", "0x060400\n");
  write_file(t.path() / dev("0000:00:00.0"), "config", std::string(256, '\0'));
  auto pci = collect();
  EXPECT_FALSE(find(pci, "0000:00:00.0").acs_enabled);
  EXPECT_FALSE(has_note_containing(notes, "not readable as this user"));
}

TEST_F(PciVariant, UnknownLinkSpeedIsNullWithoutNote) {
  write_file(t.path() / dev("0000:00:06.0"), "current_link_speed", "Unknown\n");
  auto pci = collect();
  const auto& d = find(pci, "0000:00:06.0");
  EXPECT_FALSE(d.current_link_speed_gts);
  EXPECT_EQ(d.max_link_speed_gts, 32.0);
  EXPECT_FALSE(has_note_containing(notes, "current_link_speed"));
}

TEST_F(PciVariant, GarbageClassIsUnknownWithNote) {
  write_file(t.path() / dev("0000:00:06.0"), "class", "0xZZ\n");
  auto pci = collect();
  const auto& d = find(pci, "0000:00:06.0");
  EXPECT_FALSE(d.class_code);
  EXPECT_TRUE(has_note_containing(notes, "0000:00:06.0/class"));
}

TEST_F(PciVariant, FunctionRemovedAfterListingIsSkippedWithNote) {
  fs::remove_all(t.path() / dev("0000:00:07.0"));
  auto pci = collect();
  EXPECT_EQ(pci.size(), 7u);
  EXPECT_TRUE(has_note_containing(notes, "0000:00:07.0"));
}
