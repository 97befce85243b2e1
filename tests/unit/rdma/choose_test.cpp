// The automatic choices on the soft-RoCE capture (tests/fixtures/rxe-vm): rxe0 on veth0
// (10.9.0.1), rxe1 on veth1 (10.9.0.2), GID 1 the RoCE v2 IPv4 entry of each.
#include <gtest/gtest.h>

#include "core/root.hpp"
#include "probe/probe.hpp"
#include "rdma/choose.hpp"
#include "support/fixtures.hpp"

using namespace fabscope;
using namespace fabscope::rdma;

namespace {
NodeInfo rxe() { return probe::collect(core::Root(fabscope::testing::fixture("rxe-vm")), probe::Options{false}); }

const Choice* find(const Chosen& c, const std::string& what) {
  for (const auto& x : c.choices)
    if (x.what == what) return &x;
  return nullptr;
}
}  // namespace

TEST(RdmaChoose, GidIpv4_DecodesMappedAddresses) {
  EXPECT_EQ(gid_ipv4("0000:0000:0000:0000:0000:ffff:0a09:0002"), "10.9.0.2");
  EXPECT_EQ(gid_ipv4("fe80:0000:0000:0000:2ceb:fcff:fe37:917e"), "");
}

TEST(RdmaChoose, RouteSourceAddress_PicksThePortWhoseGidHoldsIt) {
  Chosen c = choose(rxe(), {"", std::nullopt, std::nullopt, "10.9.0.2", "10.9.0.1", false});
  ASSERT_TRUE(c.problems.empty()) << c.problems[0].message;
  EXPECT_EQ(c.endpoint.device, "rxe1");
  EXPECT_EQ(c.endpoint.gid_index, 1);
  EXPECT_EQ(c.endpoint.address, "10.9.0.2");
  EXPECT_EQ(c.endpoint.netdev, "veth1");
  EXPECT_TRUE(c.endpoint.software);
  ASSERT_TRUE(find(c, "device"));
  EXPECT_NE(find(c, "device")->reason.find("veth1 holds 10.9.0.2"), std::string::npos) << find(c, "device")->reason;
  ASSERT_TRUE(find(c, "gid_index"));
  EXPECT_NE(find(c, "gid_index")->reason.find("RoCE v2"), std::string::npos);
  ASSERT_TRUE(find(c, "mtu"));
  EXPECT_EQ(find(c, "mtu")->value, "4096");
}

TEST(RdmaChoose, Server_PicksThePortTheClientReached) {
  Chosen c = choose(rxe(), {"", std::nullopt, std::nullopt, "10.9.0.1", "10.9.0.2", true});
  EXPECT_EQ(c.endpoint.device, "rxe0");
  EXPECT_NE(find(c, "device")->reason.find("the client reached"), std::string::npos);
}

TEST(RdmaChoose, UnknownAddress_FallsBackToTheFirstActivePortAndSaysSo) {
  Chosen c = choose(rxe(), {"", std::nullopt, std::nullopt, "192.168.1.5", "peer", false});
  EXPECT_EQ(c.endpoint.device, "rxe0");
  EXPECT_NE(find(c, "device")->reason.find("no RDMA port holds 192.168.1.5"), std::string::npos);
}

TEST(RdmaChoose, DeviceOverride_IsRespected) {
  Chosen c = choose(rxe(), {"rxe1", 1, std::nullopt, "10.9.0.1", "x", false});
  EXPECT_EQ(c.endpoint.device, "rxe1");
  EXPECT_EQ(find(c, "device")->reason, "given with -d");
}

TEST(RdmaChoose, MissingDevice_IsAFailListingTheDevices) {
  Chosen c = choose(rxe(), {"mlx5_9", std::nullopt, std::nullopt, "", "", false});
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].id, "rdma.no_device");
  EXPECT_NE(c.problems[0].message.find("rxe0:1 ACTIVE"), std::string::npos) << c.problems[0].message;
}

TEST(RdmaChoose, EmptyGidIndex_FailsNamingTheGoodOne) {
  Chosen c = choose(rxe(), {"", std::nullopt, 7, "10.9.0.2", "10.9.0.1", false});
  ASSERT_FALSE(c.problems.empty());
  EXPECT_EQ(c.problems[0].id, "rdma.gid_index");
  EXPECT_EQ(c.problems[0].severity, Severity::Fail);
  EXPECT_NE(c.problems[0].remedy.find("-x 1"), std::string::npos) << c.problems[0].remedy;
}

TEST(RdmaChoose, LinkLocalGidIndex_WarnsBeforeTheRun) {
  Chosen c = choose(rxe(), {"", std::nullopt, 0, "10.9.0.2", "10.9.0.1", false});
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].id, "rdma.gid_index");
  EXPECT_EQ(c.problems[0].severity, Severity::Warn);
  EXPECT_EQ(c.endpoint.gid_index, 0);
}

TEST(RdmaChoose, PortDown_IsAFail) {
  fabscope::testing::TempDir t;
  fabscope::testing::copy_tree(fabscope::testing::fixture("rxe-vm"), t.path());
  fabscope::testing::write_file(t.path(), "sys/class/infiniband/rxe1/ports/1/state", "1: DOWN\n");
  NodeInfo n = probe::collect(core::Root(t.path()), probe::Options{false});
  Chosen c = choose(n, {"rxe1", std::nullopt, std::nullopt, "", "", false});
  bool down = false;
  for (const auto& f : c.problems) down = down || f.id == "rdma.port_down";
  EXPECT_TRUE(down);
}

TEST(RdmaChoose, NoDevices_IsAFail) {
  NodeInfo empty;
  Chosen c = choose(empty, {"", std::nullopt, std::nullopt, "10.0.0.1", "peer", false});
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_EQ(c.problems[0].id, "rdma.no_device");
}
