// The registry against docs/checks.md and against what run() reports.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "checks/checks.hpp"
#include "node_builders.hpp"

using namespace fabscope;
using namespace fabscope::testing;

namespace {

std::set<std::string> doc_anchors() {
  std::ifstream in(std::string(FABSCOPE_SOURCE_DIR) + "/docs/checks.md");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  std::set<std::string> out;
  std::regex re("<a id=\"([^\"]+)\"></a>");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
    out.insert((*it)[1]);
  return out;
}

std::string anchor_of(const std::string& id) {
  std::string a = docs_anchor(id);
  return a.substr(a.find('#') + 1);
}

}  // namespace

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

TEST(Registry, EveryIdHasItsAnchorInDocsChecksMd) {
  auto anchors = doc_anchors();
  ASSERT_FALSE(anchors.empty()) << "cannot read docs/checks.md";
  for (const auto& c : checks::registry()) EXPECT_TRUE(anchors.count(anchor_of(c.id))) << c.id;
}

TEST(Registry, EveryAnchorInDocsChecksMdIsARegisteredId) {
  std::set<std::string> registered;
  for (const auto& c : checks::registry()) registered.insert(anchor_of(c.id));
  // cluster-* anchors are the ids of `fabscope cluster` (cluster::registry(), tested in
  // tests/unit/cluster/registry_docs_test.cpp): they judge many nodes, not one. fabric-* are
  // `fabscope fabric`'s (subnet::fabric_checks(), tests/unit/subnet/registry_docs_test.cpp).
  for (const auto& a : doc_anchors()) {
    if (a.rfind("cluster-", 0) != 0 && a.rfind("fabric-", 0) != 0) {
      EXPECT_TRUE(registered.count(a)) << "docs/checks.md#" << a << " is no check id";
    }
  }
}

TEST(Registry, DocsStateTheRegisteredSeverity) {
  // Each section starts "**warn**" / "**fail**" / "**info**" right after its heading.
  std::ifstream in(std::string(FABSCOPE_SOURCE_DIR) + "/docs/checks.md");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  for (const auto& c : checks::registry()) {
    auto pos = text.find("### " + c.id + "\n");
    ASSERT_NE(pos, std::string::npos) << c.id;
    auto body = text.substr(pos, 200);
    EXPECT_NE(body.find(std::string("**") + to_string(c.severity)), std::string::npos) << c.id << ": " << body;
  }
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
