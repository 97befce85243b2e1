#include "exporter/port_reader.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "support/fixtures.hpp"

namespace fabscope::exporter {
namespace {

namespace fs = std::filesystem;
using fabscope::testing::TempDir;

class PortReaderOnCapture : public ::testing::Test {
 protected:
  void SetUp() override {
    fabscope::testing::unpack_ttar(fabscope::testing::fixture("procfs-infiniband/sys-class-infiniband-and-net.ttar"),
                                   dir.path());
    // The capture's mlx5_0 port 1 phys_state reads "4: ACTIVE", a port state name the kernel
    // never writes there (code 4 is PortConfigurationTraining): a hand edit upstream. The exporter
    // counts it as a read error (PhysStateNotTheKernelsNameForItsCode_IsAReadError); the other
    // tests start from the value a real mlx5 port in LinkUp shows.
    fabscope::testing::write_file(port_dir("mlx5_0", 1), "phys_state", "5: LinkUp\n");
  }
  fs::path port_dir(const std::string& dev, int port) {
    return dir.path() / "sys/class/infiniband" / dev / "ports" / std::to_string(port);
  }
  static const RdmaPort& port(const std::vector<RdmaDevice>& devs, const std::string& dev, int n) {
    for (const auto& d : devs)
      if (d.name == dev)
        for (const auto& p : d.ports)
          if (p.port == n) return p;
    throw std::runtime_error("no port " + dev);
  }
  TempDir dir;
};

TEST_F(PortReaderOnCapture, LaterScrapes_ReuseTheLayoutButReadNewValues) {
  PortReader r{core::Root(dir.path())};
  std::vector<probe::Note> notes;
  r.read(notes);
  fabscope::testing::write_file(port_dir("mlx5_0", 1), "counters/port_xmit_data", "2880761508849\n");
  fabscope::testing::write_file(port_dir("mlx5_0", 1), "hw_counters/out_of_sequence", "7\n");
  fabscope::testing::write_file(port_dir("mlx5_0", 1), "state", "1: DOWN\n");
  const auto& devs = r.read(notes);
  EXPECT_EQ(r.layout_walks(), 1u);
  EXPECT_EQ(port(devs, "mlx5_0", 1).counters.at("port_xmit_data"), 2880761508849ull * 4);
  EXPECT_EQ(port(devs, "mlx5_0", 1).hw_counters.at("out_of_sequence"), 7u);
  EXPECT_EQ(port(devs, "mlx5_0", 1).state_code, 1);
  EXPECT_EQ(port(devs, "mlx5_0", 1).state, "DOWN");
  EXPECT_TRUE(notes.empty());
}

TEST_F(PortReaderOnCapture, SameValuesAsAFullWalk) {
  PortReader fast{core::Root(dir.path())};
  PortReader walk{core::Root(dir.path()), std::chrono::milliseconds(0)};
  std::vector<probe::Note> notes;
  fast.read(notes);
  auto a = fast.read(notes);
  auto b = walk.read(notes);
  EXPECT_EQ(walk.layout_walks(), 1u);
  EXPECT_EQ(json(a).dump(), json(b).dump());
}

TEST_F(PortReaderOnCapture, CounterTurningToGarbage_IsNotedAndLeftOut) {
  PortReader r{core::Root(dir.path())};
  std::vector<probe::Note> notes;
  r.read(notes);
  fabscope::testing::write_file(port_dir("mlx4_0", 2), "counters/symbol_error", "N/A (no PMA)\n");
  const auto& devs = r.read(notes);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].file, "sys/class/infiniband/mlx4_0/ports/2/counters/symbol_error");
  EXPECT_EQ(notes[0].kind, probe::NoteKind::BadValue);
  EXPECT_EQ(notes[0].detail, "not a number: 'N/A (no PMA)'");
  EXPECT_EQ(port(devs, "mlx4_0", 2).counters.count("symbol_error"), 0u);
  EXPECT_EQ(port(devs, "mlx4_0", 2).counters.count("port_rcv_data"), 1u);
}

TEST_F(PortReaderOnCapture, DeviceVanishing_IsNotedAndTheLayoutWalkedAgain) {
  PortReader r{core::Root(dir.path())};
  std::vector<probe::Note> notes;
  r.read(notes);
  fs::remove_all(dir.path() / "sys/class/infiniband/mlx4_0");
  const auto& devs = r.read(notes);
  EXPECT_EQ(r.layout_walks(), 2u);
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].file.find("mlx4_0"), std::string::npos) << notes[0].text();
  EXPECT_EQ(notes[0].kind, probe::NoteKind::Removed);
  for (const auto& d : devs) EXPECT_NE(d.name, "mlx4_0");
  EXPECT_EQ(devs.size(), 2u);
}

TEST_F(PortReaderOnCapture, NewDevice_AppearsAfterTheLayoutAge) {
  PortReader r{core::Root(dir.path()), std::chrono::milliseconds(0)};
  std::vector<probe::Note> notes;
  EXPECT_EQ(r.read(notes).size(), 3u);
  fabscope::testing::copy_tree(dir.path() / "sys/class/infiniband/mlx5_0", dir.path() / "sys/class/infiniband/mlx5_1");
  EXPECT_EQ(r.read(notes).size(), 4u);
}

// The capture has no device/ links, so no port carries a netdev: the test gives mlx5_0 the
// capture's eth0 (MTU 1500) as its PCI function's netdev for port 1 (dev_port 0).
TEST_F(PortReaderOnCapture, NetdevMtus_AreReadOnEveryScrape) {
  fabscope::testing::write_file(dir.path() / "sys/class/infiniband/mlx5_0/device/net/eth0", "dev_port", "0\n");
  PortReader r{core::Root(dir.path())};
  std::vector<probe::Note> notes;
  r.read(notes);
  EXPECT_EQ(r.netdev_mtus(), (std::map<std::string, int>{{"eth0", 1500}}));
  fabscope::testing::write_file(dir.path() / "sys/class/net/eth0", "mtu", "9000\n");
  r.read(notes);
  EXPECT_EQ(r.layout_walks(), 1u);
  EXPECT_EQ(r.netdev_mtus(), (std::map<std::string, int>{{"eth0", 9000}}));
  EXPECT_TRUE(notes.empty());
  fabscope::testing::write_file(dir.path() / "sys/class/net/eth0", "mtu", "jumbo\n");
  r.read(notes);
  EXPECT_TRUE(r.netdev_mtus().empty());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].file, "sys/class/net/eth0/mtu");
  EXPECT_EQ(notes[0].kind, probe::NoteKind::BadValue);
  EXPECT_EQ(notes[0].detail, "not an MTU");
}

// Soft-RoCE has no PCI function: its ports name their netdev only in the GID table, which the
// exporter's layout walk does not read; entry 0's ndevs file still gives it (rxe0 -> veth0).
TEST(PortReaderOnRxe, NetdevOfASoftRocePort_ComesFromGidEntryZero) {
  PortReader r{core::Root(fabscope::testing::fixture("rxe-vm"))};
  std::vector<probe::Note> notes;
  r.read(notes);
  EXPECT_EQ(r.netdev_mtus(), (std::map<std::string, int>{{"veth0", 9000}, {"veth1", 9000}}));
}

}  // namespace
}  // namespace fabscope::exporter
