// The registry against what run() reports (its ids against docs/checks.md:
// tests/unit/cli/findings_docs_test.cpp).
#include <gtest/gtest.h>

#include <set>

#include "checks/checks.hpp"
#include "node_builders.hpp"

using namespace fabscope;
using namespace fabscope::testing;

TEST(Registry, IdsAreUniqueAndPrefixedByTheirFamily) {
  std::set<std::string> seen;
  for (const auto& c : checks::registry()) {
    EXPECT_TRUE(seen.insert(c.id).second) << "duplicate " << c.id;
    EXPECT_EQ(c.id.rfind(c.family + ".", 0), 0u) << c.id;
    EXPECT_FALSE(c.title.empty()) << c.id;
  }
}

TEST(Registry, IdsUsedByShippedAlertRulesExist) {
  // deploy/prometheus/fabscope-rules.yml links these anchors; the exporter publishes the ids.
  std::set<std::string> ids;
  for (const auto& c : checks::registry()) ids.insert(c.id);
  for (const char* id : {"link.port_down", "link.rate_degraded", "link.symbol_errors", "link.link_downed",
                         "gdr.peermem_missing", "verbs.library_missing", "verbs.device_not_visible",
                         "verbs.sysfs_mismatch"})
    EXPECT_TRUE(ids.count(id)) << id;
}

TEST(Run, HealthyNodesHaveNoFindings) {
  EXPECT_TRUE(checks::run(healthy_ib_node()).empty());
  EXPECT_TRUE(checks::run(healthy_roce_node()).empty());
}

TEST(Run, EmptyNodeHasNoFindings) { EXPECT_TRUE(checks::run(NodeInfo{}).empty()); }

TEST(Run, FindingsComeMostSevereFirstWithRegisteredIdsAndAnchors) {
  NodeInfo n = healthy_roce_node();
  pci_dev(n, "0000:18:00.0").current_link_speed_gts = 8;   // info
  n.kernel.memlock_soft_bytes = 65536;                      // warn
  port0(n, "mlx5_1").state = "DOWN";                        // fail
  netdev(n, "eth2").mtu = 1500;                             // warn (two)
  auto fs = checks::run(n);
  ASSERT_GE(fs.size(), 4u);
  EXPECT_EQ(fs.front().id, "link.port_down");
  EXPECT_EQ(fs.back().id, "pcie.gpu_link_downclocked");
  std::set<std::string> ids;
  for (const auto& c : checks::registry()) ids.insert(c.id);
  Severity prev = Severity::Fail;
  for (const auto& f : fs) {
    EXPECT_TRUE(ids.count(f.id)) << f.id;
    EXPECT_EQ(f.docs, docs_anchor(f.id));
    EXPECT_LE(f.severity, prev);
    prev = f.severity;
    EXPECT_FALSE(f.subject.empty() || f.message.empty() || f.evidence.empty() || f.remedy.empty()) << f.id;
  }
}

TEST(Run, SeverityOfEachFindingIsAtMostItsRegisteredOne) {
  NodeInfo n = healthy_roce_node();
  port0(n, "mlx5_0").phys_state = "Polling";
  port0(n, "mlx5_0").state = "";
  for (const auto& f : checks::run(n))
    for (const auto& c : checks::registry())
      if (c.id == f.id) {
        EXPECT_LE(f.severity, c.severity) << f.id;
      }
}
