// The cluster ids' registry (their docs: tests/unit/cli/findings_docs_test.cpp).
#include <gtest/gtest.h>

#include "cluster/registry.hpp"
#include "core/error.hpp"

using namespace fabscope;

TEST(ClusterRegistry, EveryIdIsOfTheClusterFamily) {
  for (const auto& c : cluster::registry()) {
    EXPECT_EQ(c.family, "cluster");
    EXPECT_EQ(c.id.rfind("cluster.", 0), 0u);
  }
}

TEST(ClusterRegistry, UnregisteredIdIsRefused) {
  EXPECT_THROW(cluster::registered_finding("cluster.nonsense", Severity::Warn, "", "", "", ""), Error);
}
