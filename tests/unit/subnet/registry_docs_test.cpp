// The fabric ids against docs/checks.md: every id documented with its severity, every fabric-*
// anchor a registered id.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "subnet/judge.hpp"

using namespace fabscope;

namespace {

std::string checks_md() {
  std::ifstream in(std::string(FABSCOPE_SOURCE_DIR) + "/docs/checks.md");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST(FabricRegistry, EveryIdIsDocumentedWithItsSeverity) {
  const std::string text = checks_md();
  ASSERT_FALSE(text.empty());
  std::set<std::string> seen;
  for (const auto& c : subnet::fabric_checks()) {
    EXPECT_TRUE(seen.insert(c.id).second) << c.id;
    EXPECT_EQ(c.id.rfind("fabric.", 0), 0u) << c.id;
    std::string anchor = docs_anchor(c.id);
    anchor = anchor.substr(anchor.find('#') + 1);
    EXPECT_NE(text.find("<a id=\"" + anchor + "\"></a>"), std::string::npos) << c.id;
    auto pos = text.find("### " + c.id + "\n");
    ASSERT_NE(pos, std::string::npos) << c.id;
    EXPECT_NE(text.substr(pos, 200).find(std::string("**") + to_string(c.severity)), std::string::npos) << c.id;
  }
}

TEST(FabricRegistry, EveryFabricAnchorIsARegisteredId) {
  const std::string text = checks_md();
  std::set<std::string> ids;
  for (const auto& c : subnet::fabric_checks()) ids.insert(c.id);
  std::regex re("<a id=\"fabric-([^\"]+)\"></a>");
  int n = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it, ++n)
    EXPECT_TRUE(ids.count("fabric." + (*it)[1].str())) << (*it)[1];
  EXPECT_EQ(n, static_cast<int>(ids.size()));
}
