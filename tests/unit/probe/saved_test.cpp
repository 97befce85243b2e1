// A node description saved by `fabscope probe --json`, read back (check --node).
#include "probe/saved.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/json.hpp"
#include "support/fixtures.hpp"

using namespace fabscope;
using fabscope::testing::TempDir;
using fabscope::testing::write_file;

namespace {

std::string error_of(const std::string& path) {
  try {
    probe::load_saved_node(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(LoadSavedNode, ReadsTheGoldenProbeOfARealNode) {
  const auto path = (std::filesystem::path(FABSCOPE_SOURCE_DIR) / "tests/golden/probe/procfs-infiniband.json").string();
  NodeInfo n = probe::load_saved_node(path);
  ASSERT_EQ(n.rdma_devices.size(), 3u);  // hfi1_0, mlx4_0, mlx5_0
  EXPECT_EQ(n.rdma_devices[2].name, "mlx5_0");
  EXPECT_FALSE(n.rdma_devices[2].ports.empty());
}

TEST(LoadSavedNode, WhatIsNotANodeDescriptionIsAnErrorNamingTheFile) {
  TempDir t;
  write_file(t.path(), "junk.json", "not json");
  write_file(t.path(), "array.json", "[1, 2]");
  write_file(t.path(), "other.json", R"({"schema": "fabscope.check", "schema_version": 1})");
  const auto p = [&](const char* name) { return (t.path() / name).string(); };
  EXPECT_EQ(error_of(p("junk.json")), p("junk.json") + ": not a JSON object (expected the output of fabscope probe --json)");
  EXPECT_EQ(error_of(p("array.json")), p("array.json") + ": not a JSON object (expected the output of fabscope probe --json)");
  EXPECT_EQ(error_of(p("other.json")).rfind(p("other.json") + ": ", 0), 0u);
  EXPECT_NE(error_of(p("other.json")), p("other.json") + ": ");
  EXPECT_EQ(error_of(p("missing.json")).rfind(p("missing.json") + ": cannot open", 0), 0u);
}
