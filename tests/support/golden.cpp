#include "support/golden.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace fabscope::testing {

namespace {

bool update_requested() {
  const char* update = std::getenv("FABSCOPE_UPDATE_GOLDEN");
  return update && *update;
}

// Writes text to path (creating its folder); false when it could not.
bool rewrite(const std::filesystem::path& path, const std::string& text) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary);
  out << text;
  return out.good();
}

}  // namespace

std::filesystem::path golden_file(const std::string& rel) {
  return std::filesystem::path(FABSCOPE_SOURCE_DIR) / "tests/golden" / rel;
}

void expect_golden_text(const std::string& rel, const std::string& actual) {
  auto path = golden_file(rel);
  if (update_requested()) {
    ASSERT_TRUE(rewrite(path, actual)) << "cannot write " << path;
    GTEST_SKIP() << "rewrote " << path;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing golden file " << path << " (run with FABSCOPE_UPDATE_GOLDEN=1)";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str()) << "output differs from " << path;
}

void expect_golden_json(const std::string& rel, const nlohmann::json& actual) {
  auto path = golden_file(rel);
  if (update_requested()) {
    ASSERT_TRUE(rewrite(path, actual.dump(2) + "\n")) << "cannot write " << path;
    GTEST_SKIP() << "rewrote " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing golden file " << path << " (run with FABSCOPE_UPDATE_GOLDEN=1)";
  auto expected = nlohmann::json::parse(in);
  EXPECT_EQ(actual, expected) << "output differs from " << path << "; diff:\n"
                              << nlohmann::json::diff(expected, actual).dump(2);
}

}  // namespace fabscope::testing
