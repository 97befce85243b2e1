// /proc/net/bonding parsing on real files from the soft-RoCE VM (tests/fixtures/bonding/SOURCE).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "probe/bonding.hpp"
#include "support/fixtures.hpp"

using namespace fabscope;
using namespace fabscope::probe;
using fabscope::testing::fixture;
using fabscope::testing::TempDir;
using fabscope::testing::write_file;

namespace {
std::string text(const std::string& name) {
  std::ifstream in(fixture("bonding") / name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST(Bonding, ActiveBackupWithOneSlaveDown) {
  auto b = parse_bonding("bond0", text("active-backup-slave-down.txt"));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->mode, "fault-tolerance (active-backup)");
  EXPECT_EQ(b->mii_status, "up");
  EXPECT_EQ(b->active_slave, "vb0a");
  EXPECT_EQ(b->mii_polling_ms, 100);
  ASSERT_EQ(b->slaves.size(), 2u);
  EXPECT_EQ(b->slaves[0].name, "vb0a");
  EXPECT_EQ(b->slaves[0].mii_status, "up");
  EXPECT_EQ(b->slaves[0].speed_mbps, 10000);
  EXPECT_EQ(b->slaves[0].link_failure_count, 0u);
  EXPECT_EQ(b->slaves[1].name, "vb1a");
  EXPECT_EQ(b->slaves[1].mii_status, "down");
  EXPECT_EQ(b->slaves[1].link_failure_count, 1u);
  EXPECT_EQ(b->slaves[1].permanent_hw_addr, "ce:75:37:5b:55:82");
}

TEST(Bonding, NoActiveSlaveAndUnknownSpeed) {
  std::string t = text("active-backup-up.txt");
  t.replace(t.find("Currently Active Slave: vb0a"), 28, "Currently Active Slave: None");
  t.replace(t.find("Speed: 10000 Mbps"), 17, "Speed: Unknown");
  auto b = parse_bonding("bond0", t);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->active_slave, "");
  EXPECT_FALSE(b->slaves[0].speed_mbps);
}

TEST(Bonding, NotABondingFile) { EXPECT_FALSE(parse_bonding("x", "hello\nworld: 1\n")); }

TEST(Bonding, CollectedFromProcNetBonding) {
  TempDir t;
  write_file(t.path(), "proc/net/bonding/bond0", text("active-backup-slave-down.txt"));
  write_file(t.path(), "proc/net/bonding/junk", "not a bond\n");
  std::vector<std::string> notes;
  auto bonds = collect_bonds(core::Root(t.path()), notes);
  ASSERT_EQ(bonds.size(), 1u);
  EXPECT_EQ(bonds[0].name, "bond0");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("proc/net/bonding/junk"), std::string::npos);
}
