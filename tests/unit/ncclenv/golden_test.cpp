// Golden files: plan() on each real fixture, rendered in every format, compared with
// tests/golden/env/<fixture>.<format>. After an intended change, regenerate with
//   FABSCOPE_UPDATE_GOLDEN=1 <build>/tests/fabscope_ncclenv_tests --gtest_filter='EnvGolden*'
// and review the diff (tests/golden/env/README.md).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "env_test_util.hpp"
#include "ncclenv/plan.hpp"
#include "ncclenv/render.hpp"
#include "support/golden.hpp"

using namespace fabscope;
using namespace fabscope::ncclenv;

namespace {

void compare_with_golden(const std::string& file, const std::string& actual) {
  fabscope::testing::expect_golden_text("env/" + file, actual);
}

struct Case {
  std::string fixture;
  std::string format;
};

class EnvGolden : public ::testing::TestWithParam<Case> {};

TEST_P(EnvGolden, MatchesGoldenFile) {
  const auto& c = GetParam();
  const NodeInfo node = fabscope::testing::probe_fixture(c.fixture);
  const EnvPlan p = plan(node, PlanOptions{});
  RenderOptions ro;
  ro.gpus_per_node = std::max<int>(1, static_cast<int>(node.gpus.size()));
  compare_with_golden(c.fixture + "." + c.format, render(p, parse_format(c.format), ro));
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const char* f : {"rxe-vm", "procfs-infiniband", "h200x2-node"})
    for (const auto& fmt : format_names()) cases.push_back({f, fmt});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllFormats, EnvGolden, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           std::string n = i.param.fixture + "_" + i.param.format;
                           for (auto& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

// The operator's flags on the RoCE capture: DSCP, master address (no IPv4 known on a capture:
// a warning, not a guess), nodes and ranks for the launchers.
TEST(EnvGoldenFlags, RxeVmWithOperatorFlags) {
  const NodeInfo node = fabscope::testing::probe_fixture("rxe-vm");
  PlanOptions o;
  o.master_addr = "10.9.0.1";
  o.roce_dscp = 26;
  const EnvPlan p = plan(node, o);
  RenderOptions ro;
  ro.nodes = 4;
  ro.gpus_per_node = 8;
  ro.master_addr = o.master_addr;
  compare_with_golden("rxe-vm-flags.torchrun", render(p, Format::Torchrun, ro));
}

}  // namespace
