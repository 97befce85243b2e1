// Golden files: collect() on each fixture, as JSON, compared with tests/golden/probe/<fixture>.json.
// The "root" key (the absolute fixture path) is left out. After an intended change, regenerate with
//   FABSCOPE_UPDATE_GOLDEN=1 <build>/tests/fabscope_probe_tests --gtest_filter='Golden*'
// and review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/json.hpp"
#include "probe/probe.hpp"
#include "support/fixtures.hpp"
#include "support/golden.hpp"

using namespace fabscope;
using fabscope::testing::fixture;

namespace {

void compare_with_golden(const std::string& name, const core::Root& root) {
  NodeInfo info = probe::collect(root, probe::Options{false});
  json actual = info;
  actual.erase("root");
  fabscope::testing::expect_golden_json("probe/" + name + ".json", actual);
}

}  // namespace

TEST(Golden, H200x2Node) { compare_with_golden("h200x2-node", core::Root(fixture("h200x2-node"))); }

TEST(Golden, RxeVm) { compare_with_golden("rxe-vm", core::Root(fixture("rxe-vm"))); }

TEST(Golden, VirtioNode) { compare_with_golden("virtio-2cpu-node", core::Root(fixture("virtio-2cpu-node"))); }

TEST(Golden, ProcfsInfiniband) {
  fabscope::testing::TempDir t;
  fabscope::testing::unpack_ttar(fixture("procfs-infiniband/sys-class-infiniband-and-net.ttar"), t.path());
  compare_with_golden("procfs-infiniband", core::Root(t.path()));
}

TEST(Golden, GoldenJsonReadsBackIntoTheSameNodeInfo) {
  std::ifstream in(fabscope::testing::golden_file("probe/h200x2-node.json"));
  ASSERT_TRUE(in);
  json j = json::parse(in);
  NodeInfo info = j.get<NodeInfo>();
  json again = info;
  again.erase("root");
  EXPECT_EQ(again, j);
}
