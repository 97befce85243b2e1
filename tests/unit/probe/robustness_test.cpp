// Bad input everywhere at once: every file of a real tree replaced by "N/A", emptied, cut in half
// or overwritten with binary junk. collect() must finish, keep the structure that the directories
// give (devices, ports, interfaces, PCI functions), leave the values unknown and say so in notes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "probe/probe.hpp"
#include "support/fixtures.hpp"

using namespace fabscope;
namespace fs = std::filesystem;

namespace {

using Mangle = std::function<std::string(const std::string&)>;

NodeInfo collect_mangled(const std::string& fixture_name, const Mangle& mangle) {
  fabscope::testing::TempDir t;
  fabscope::testing::copy_tree(fabscope::testing::fixture(fixture_name), t.path());
  for (auto it = fs::recursive_directory_iterator(t.path()); it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_symlink() || !it->is_regular_file()) continue;
    std::string text;
    {
      std::ifstream in(it->path(), std::ios::binary);
      text.assign(std::istreambuf_iterator<char>(in), {});
    }
    std::ofstream(it->path(), std::ios::binary | std::ios::trunc) << mangle(text);
  }
  return probe::collect(core::Root(t.path()), probe::Options{false});
}

std::string junk(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < std::max<std::size_t>(text.size(), 16); ++i)
    out += static_cast<char>((i * 37 + 11) % 256);  // NULs, control bytes, 0x80..0xff
  return out;
}

class EveryFile : public ::testing::TestWithParam<const char*> {};

}  // namespace

TEST_P(EveryFile, NotApplicableLeavesValuesUnknown) {
  NodeInfo clean = probe::collect(core::Root(fabscope::testing::fixture(GetParam())), probe::Options{false});
  NodeInfo info = collect_mangled(GetParam(), [](const std::string&) { return "N/A\n"; });
  EXPECT_EQ(info.rdma_devices.size(), clean.rdma_devices.size());
  EXPECT_EQ(info.netdevs.size(), clean.netdevs.size());
  EXPECT_EQ(info.pci_devices.size(), clean.pci_devices.size());
  for (const auto& d : info.rdma_devices)
    for (const auto& p : d.ports) {
      EXPECT_FALSE(p.rate_gbps);
      EXPECT_FALSE(p.state_code);
      EXPECT_TRUE(p.counters.empty());
    }
  for (const auto& n : info.netdevs) EXPECT_FALSE(n.mtu);
  EXPECT_FALSE(info.probe_notes.empty());
}

TEST_P(EveryFile, EmptyFilesLeaveValuesUnknown) {
  NodeInfo info = collect_mangled(GetParam(), [](const std::string&) { return std::string(); });
  for (const auto& p : info.pci_devices) EXPECT_FALSE(p.class_code);
  EXPECT_FALSE(info.kernel.memlock_soft_bytes);
  EXPECT_FALSE(info.probe_notes.empty());
}

TEST_P(EveryFile, TruncatedFilesDoNotStopTheProbe) {
  NodeInfo clean = probe::collect(core::Root(fabscope::testing::fixture(GetParam())), probe::Options{false});
  NodeInfo info = collect_mangled(GetParam(), [](const std::string& s) { return s.substr(0, s.size() / 2); });
  EXPECT_EQ(info.netdevs.size(), clean.netdevs.size());
  // Cut values are unknown, never a shorter (wrong) value: PCI ids and port states have a fixed
  // shape, so none of them may differ from the clean read.
  for (const auto& d : info.pci_devices) {
    const PciDevice* c = clean.find_pci(d.address);
    ASSERT_TRUE(c);
    if (d.class_code) {
      EXPECT_EQ(d.class_code, c->class_code) << d.address;
    }
    if (!d.vendor.empty()) {
      EXPECT_EQ(d.vendor, c->vendor) << d.address;
    }
  }
  for (const auto& d : info.rdma_devices)
    for (const auto& p : d.ports) {
      EXPECT_EQ(p.state, "");
      EXPECT_EQ(p.phys_state, "");
    }
  EXPECT_FALSE(info.probe_notes.empty());
}

TEST_P(EveryFile, BinaryJunkLeavesValuesUnknownAndJsonValid) {
  NodeInfo info = collect_mangled(GetParam(), junk);
  for (const auto& d : info.rdma_devices) {
    EXPECT_EQ(d.fw_ver, "");
    for (const auto& p : d.ports) EXPECT_EQ(p.state, "");
  }
  EXPECT_TRUE(info.gpus.empty());  // no vendor/class: nothing is a GPU
  json j = info;
  EXPECT_NO_THROW((void)json::parse(j.dump()));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, EveryFile, ::testing::Values("h200x2-node", "rxe-vm"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (auto& c : n)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });
