// Every finding id fabscope rdma can report has a section in docs/rdma.md (the docs anchor of
// each finding points there).
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace {
std::string read(const std::string& rel) {
  std::ifstream in(std::string(FABSCOPE_SOURCE_DIR) + "/" + rel);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST(RdmaDocs, EveryFindingIdHasASection) {
  std::string src = read("src/rdma/findings.cpp");
  std::string doc = read("docs/rdma.md");
  ASSERT_FALSE(src.empty());
  ASSERT_FALSE(doc.empty());
  std::set<std::string> ids;
  std::regex re("\"(rdma\\.[a-z_]+)\"");
  for (auto it = std::sregex_iterator(src.begin(), src.end(), re); it != std::sregex_iterator(); ++it)
    ids.insert((*it)[1]);
  EXPECT_GE(ids.size(), 15u);
  for (const auto& id : ids) EXPECT_NE(doc.find("### " + id + "\n"), std::string::npos) << id;
}
