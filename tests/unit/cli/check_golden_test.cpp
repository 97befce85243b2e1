// Golden files: `fabscope check --json` on each real fixture tree, compared with
// tests/golden/check/<fixture>.json. After an intended change, regenerate with
//   FABSCOPE_UPDATE_GOLDEN=1 <build>/tests/fabscope_cli_tests --gtest_filter='CheckGolden*'
// and review the diff (tests/golden/check/README.md).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "support/cli_run.hpp"
#include "core/json.hpp"
#include "support/fixtures.hpp"
#include "support/golden.hpp"

using fabscope::json;
using fabscope::testing::fixture;

namespace {

void compare_with_golden(const std::string& name, const std::filesystem::path& root, int exit_code) {
  auto r = fabscope::testing::run_fabscope("check --json --root " + fabscope::testing::quote(root.string()), "",
                                           false);
  ASSERT_EQ(r.exit_code, exit_code) << r.out;
  fabscope::testing::expect_golden_json("check/" + name + ".json", json::parse(r.out));
}

}  // namespace

TEST(CheckGolden, H200x2Node) { compare_with_golden("h200x2-node", fixture("h200x2-node"), 1); }

TEST(CheckGolden, RxeVm) { compare_with_golden("rxe-vm", fixture("rxe-vm"), 1); }

TEST(CheckGolden, ProcfsInfiniband) {
  fabscope::testing::TempDir t;
  fabscope::testing::unpack_ttar(fixture("procfs-infiniband/sys-class-infiniband-and-net.ttar"), t.path());
  compare_with_golden("procfs-infiniband", t.path(), 1);
}
