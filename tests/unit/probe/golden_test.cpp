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

using namespace fabscope;
using fabscope::testing::fixture;

namespace {

std::filesystem::path golden_path(const std::string& name) {
  return std::filesystem::path(FABSCOPE_SOURCE_DIR) / "tests/golden/probe" / (name + ".json");
}

void compare_with_golden(const std::string& name, const core::Root& root) {
  NodeInfo info = probe::collect(root, probe::Options{false});
  json actual = info;
  actual.erase("root");
  auto path = golden_path(name);
  if (const char* update = std::getenv("FABSCOPE_UPDATE_GOLDEN"); update && *update) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream out(path);
    out << actual.dump(2) << "\n";
    ASSERT_TRUE(out.good()) << "cannot write " << path;
    GTEST_SKIP() << "rewrote " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing golden file " << path << " (run with FABSCOPE_UPDATE_GOLDEN=1)";
  json expected = json::parse(in);
  EXPECT_EQ(actual, expected) << "probe output differs from " << path << "; diff:\n"
                              << json::diff(expected, actual).dump(2);
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
  std::ifstream in(golden_path("h200x2-node"));
  ASSERT_TRUE(in);
  json j = json::parse(in);
  NodeInfo info = j.get<NodeInfo>();
  json again = info;
  again.erase("root");
  EXPECT_EQ(again, j);
}
