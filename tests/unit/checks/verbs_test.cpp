// verbs.* checks on the live probe of the soft-RoCE VM (tests/fixtures/rxe-vm/probe-live.json:
// sysfs and libibverbs views of rxe0/rxe1 taken at the same moment), and on variants of it with
// one value changed.
#include "checks/verbs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "node_builders.hpp"
#include "support/fixtures.hpp"

using namespace fabscope;
using fabscope::testing::with_id;

namespace {

NodeInfo rxe_vm() {
  std::ifstream in(fabscope::testing::fixture("rxe-vm") / "probe-live.json");
  return json::parse(in).get<NodeInfo>();
}

VerbsPort& verbs_port(NodeInfo& n, const std::string& dev) {
  for (auto& d : n.verbs->devices)
    if (d.name == dev) return d.ports.at(0);
  throw std::runtime_error("no verbs device " + dev);
}

RdmaPort& sysfs_port(NodeInfo& n, const std::string& dev) {
  for (auto& d : n.rdma_devices)
    if (d.name == dev) return d.ports.at(0);
  throw std::runtime_error("no sysfs device " + dev);
}

}  // namespace

TEST(VerbsCheck, RealRxeCaptureHasNoDisagreement) {
  NodeInfo n = rxe_vm();
  ASSERT_TRUE(n.verbs && n.verbs->available);
  EXPECT_TRUE(checks::check_verbs(n).empty());
}

TEST(VerbsCheck, NoVerbsViewMeansNoFindings) {
  NodeInfo n = rxe_vm();
  n.verbs.reset();
  EXPECT_TRUE(checks::check_verbs(n).empty());
}

TEST(VerbsCheck, BuildWithoutVerbsSupportIsNotAFinding) {
  NodeInfo n = rxe_vm();
  n.verbs = VerbsInfo{false, "not built in: fabscope was built without libibverbs-dev", {}};
  EXPECT_TRUE(checks::check_verbs(n).empty());
}

TEST(VerbsCheck, MissingLibibverbsWarnsWhenSysfsHasDevices) {
  NodeInfo n = rxe_vm();
  n.verbs = VerbsInfo{false, "libibverbs.so.1 not loadable (install libibverbs1): file not found", {}};
  auto fs = with_id(checks::check_verbs(n), "verbs.library_missing");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].severity, Severity::Warn);
  EXPECT_NE(fs[0].evidence.find("not loadable"), std::string::npos);
}

TEST(VerbsCheck, MissingProviderMakesEveryDeviceNotVisible) {
  // Real: the same VM with /etc/libibverbs.d/rxe.driver moved away.
  std::ifstream in(fabscope::testing::fixture("rxe-vm") / "probe-live-no-provider.json");
  NodeInfo n = json::parse(in).get<NodeInfo>();
  auto fs = checks::check_verbs(n);
  ASSERT_EQ(fs.size(), 2u);
  EXPECT_EQ(fs[0].id, "verbs.device_not_visible");
  EXPECT_EQ(fs[0].subject, "rxe0");
  EXPECT_EQ(fs[1].subject, "rxe1");
  EXPECT_NE(fs[0].evidence.find("0 device(s)"), std::string::npos);
}

TEST(VerbsCheck, DeviceMissingFromVerbsIsNotVisible) {
  NodeInfo n = rxe_vm();
  auto& devs = n.verbs->devices;
  devs.erase(std::remove_if(devs.begin(), devs.end(), [](const auto& d) { return d.name == "rxe1"; }), devs.end());
  auto fs = checks::check_verbs(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "verbs.device_not_visible");
  EXPECT_EQ(fs[0].subject, "rxe1");
}

TEST(VerbsCheck, DeviceVerbsCannotOpenIsNotVisible) {
  NodeInfo n = rxe_vm();
  n.verbs->devices.at(0).error = "ibv_open_device failed: Permission denied";
  auto fs = with_id(checks::check_verbs(n), "verbs.device_not_visible");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].evidence, "ibv_open_device failed: Permission denied");
}

TEST(VerbsCheck, ActiveMtuDisagreementNamesBothValues) {
  NodeInfo n = rxe_vm();
  verbs_port(n, "rxe0").active_mtu = 1024;
  auto fs = checks::check_verbs(n);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "verbs.sysfs_mismatch");
  EXPECT_EQ(fs[0].subject, "rxe0:1");
  EXPECT_EQ(fs[0].evidence, "active_mtu: sysfs='4096' verbs='1024'");
}

TEST(VerbsCheck, PortStateDisagreementIsFlagged) {
  NodeInfo n = rxe_vm();
  verbs_port(n, "rxe1").state = "DOWN";
  auto fs = with_id(checks::check_verbs(n), "verbs.sysfs_mismatch");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_NE(fs[0].evidence.find("state: sysfs='ACTIVE' verbs='DOWN'"), std::string::npos);
}

TEST(VerbsCheck, GidMissingFromVerbsIsFlagged) {
  NodeInfo n = rxe_vm();
  verbs_port(n, "rxe0").gids.pop_back();
  auto fs = with_id(checks::check_verbs(n), "verbs.sysfs_mismatch");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_NE(fs[0].evidence.find("verbs='absent'"), std::string::npos);
}

TEST(VerbsCheck, GidNetdevDisagreementIsFlagged) {
  NodeInfo n = rxe_vm();
  verbs_port(n, "rxe0").gids.at(0).netdev = "veth1";
  auto fs = with_id(checks::check_verbs(n), "verbs.sysfs_mismatch");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_NE(fs[0].evidence.find(".netdev: sysfs='veth0' verbs='veth1'"), std::string::npos);
}

TEST(VerbsCheck, SysfsRoceV1SpellingMatchesVerbsRoceV1) {
  // sysfs writes "IB/RoCE v1" for RoCE v1 entries; verbs says "RoCE v1".
  NodeInfo n = rxe_vm();
  sysfs_port(n, "rxe0").gids.at(0).type = "IB/RoCE v1";
  verbs_port(n, "rxe0").gids.at(0).type = "RoCE v1";
  EXPECT_TRUE(checks::check_verbs(n).empty());
}

TEST(VerbsCheck, UnknownSysfsStateIsNotADisagreement) {
  NodeInfo n = rxe_vm();
  sysfs_port(n, "rxe0").state = "";
  sysfs_port(n, "rxe0").active_mtu.reset();
  EXPECT_TRUE(checks::check_verbs(n).empty());
}

TEST(VerbsCheck, FindingsPointAtTheirDocsAnchor) {
  NodeInfo n = rxe_vm();
  verbs_port(n, "rxe0").active_mtu = 1024;
  auto fs = checks::check_verbs(n);
  ASSERT_FALSE(fs.empty());
  EXPECT_EQ(fs[0].docs, "docs/checks.md#verbs-sysfs_mismatch");
}
