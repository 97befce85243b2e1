// Every finding id of every module (cli::findings()) against its docs page: a "### <id>"
// heading, and where the page marks its sections with anchors (<a id="...">), the id's anchor,
// with no anchor that is not a registered id of that page; where it states severities in bold
// after the heading, the registered one.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "cli/findings.hpp"

using namespace fabscope;

namespace {

const std::string& findings_page_text(const std::string& page) {
  static std::map<std::string, std::string> pages;
  auto [it, fresh] = pages.emplace(page, "");
  if (fresh) {
    std::ifstream in(std::string(FABSCOPE_SOURCE_DIR) + "/" + page);
    std::stringstream ss;
    ss << in.rdbuf();
    it->second = ss.str();
  }
  return it->second;
}

std::string findings_anchor_of(const FindingInfo& f) {
  const std::string a = docs_anchor(f.id, f.docs);
  return a.substr(a.find('#') + 1);
}

std::set<std::string> findings_anchors_in(const std::string& text) {
  std::set<std::string> out;
  std::regex re("<a id=\"([^\"]+)\"></a>");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
    out.insert((*it)[1]);
  return out;
}

}  // namespace

TEST(FindingIds, EveryModuleRegistersItsIdsOnceWithFamilyTitleAndPage) {
  const auto& all = cli::findings().all();
  std::set<std::string> families;
  for (const auto& f : all) {
    EXPECT_EQ(f.id.rfind(f.family + ".", 0), 0u) << f.id << " is not of family " << f.family;
    EXPECT_FALSE(f.title.empty()) << f.id;
    EXPECT_EQ(f.docs.rfind("docs/", 0), 0u) << f.id << ": " << f.docs;
    families.insert(f.family);
  }
  // Node checks, the fabric, many nodes, env lint, logs, the RDMA engine, a running job.
  for (const char* family : {"link", "verbs", "fabric", "cluster", "env", "nccllog", "rdma", "job"})
    EXPECT_TRUE(families.count(family)) << family << ": no id registered";
}

TEST(FindingIds, EveryIdHasAHeadingInItsDocsPage) {
  for (const auto& f : cli::findings().all()) {
    const std::string& text = findings_page_text(f.docs);
    ASSERT_FALSE(text.empty()) << "cannot read " << f.docs;
    EXPECT_NE(text.find("### " + f.id + "\n"), std::string::npos) << f.docs << " has no heading ### " << f.id;
  }
}

TEST(FindingIds, PagesWithAnchorsHaveOneForEveryIdAndNoOther) {
  std::map<std::string, std::set<std::string>> registered;  // page -> anchors of its ids
  for (const auto& f : cli::findings().all()) registered[f.docs].insert(findings_anchor_of(f));
  for (const auto& [page, want] : registered) {
    const auto have = findings_anchors_in(findings_page_text(page));
    if (have.empty()) continue;  // a page without anchors (the heading is the section)
    for (const auto& a : want) EXPECT_TRUE(have.count(a)) << page << " has no <a id=\"" << a << "\">";
    for (const auto& a : have) EXPECT_TRUE(want.count(a)) << page << "#" << a << " is no registered id";
  }
}

TEST(FindingIds, PagesThatStateSeveritiesStateTheRegisteredOne) {
  // docs/checks.md starts each section "**warn**" / "**fail**" / "**info**" after its heading.
  for (const auto& f : cli::findings().all()) {
    if (f.docs != "docs/checks.md") continue;
    const std::string& text = findings_page_text(f.docs);
    auto pos = text.find("### " + f.id + "\n");
    ASSERT_NE(pos, std::string::npos) << f.id;
    const std::string body = text.substr(pos, 200);
    EXPECT_NE(body.find(std::string("**") + to_string(f.severity)), std::string::npos) << f.id << ": " << body;
  }
}
