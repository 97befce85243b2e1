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

using fabscope::json;
using fabscope::testing::fixture;

namespace {

void compare_with_golden(const std::string& name, const std::filesystem::path& root, int exit_code) {
  auto r = fabscope::testing::run_fabscope("check --json --root " + fabscope::testing::quote(root.string()), "",
                                           false);
  ASSERT_EQ(r.exit_code, exit_code) << r.out;
  json actual = json::parse(r.out);
  auto path = std::filesystem::path(FABSCOPE_SOURCE_DIR) / "tests/golden/check" / (name + ".json");
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
  EXPECT_EQ(actual, expected) << "check output differs from " << path << "; diff:\n"
                              << json::diff(expected, actual).dump(2);
}

}  // namespace

TEST(CheckGolden, H200x2Node) { compare_with_golden("h200x2-node", fixture("h200x2-node"), 1); }

TEST(CheckGolden, RxeVm) { compare_with_golden("rxe-vm", fixture("rxe-vm"), 1); }

TEST(CheckGolden, ProcfsInfiniband) {
  fabscope::testing::TempDir t;
  fabscope::testing::unpack_ttar(fixture("procfs-infiniband/sys-class-infiniband-and-net.ttar"), t.path());
  compare_with_golden("procfs-infiniband", t.path(), 1);
}
