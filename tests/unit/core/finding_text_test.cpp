// The one layout of findings in human output (core/finding_text.hpp).
#include "core/finding_text.hpp"

#include <gtest/gtest.h>

#include <sstream>

using namespace fabscope;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

Finding sample() {
  Finding f = make_finding("fabric.link_degraded", Severity::Warn, "S-leaf01:33 <-> S-spine02:4",
                           "the link trained at 1X while both ends support 4X", "width 1X, could be 4X; LIDs 12 and 40",
                           "ibportstate 12 33 reset; reseat or replace the cable", "docs/fabric.md");
  return f;
}

TEST(FindingText, OneBlockPerFindingWithEveryPart) {
  const auto text = core::render_finding_blocks({sample(), sample()}, 100);
  const auto l = lines_of(text);
  ASSERT_EQ(l.size(), 11u) << text;
  EXPECT_EQ(l[0], "WARN fabric.link_degraded  S-leaf01:33 <-> S-spine02:4");
  EXPECT_EQ(l[1], "     the link trained at 1X while both ends support 4X");
  EXPECT_EQ(l[2], "     evidence: width 1X, could be 4X; LIDs 12 and 40");
  EXPECT_EQ(l[3], "     remedy: ibportstate 12 33 reset; reseat or replace the cable");
  EXPECT_EQ(l[4], "     docs: docs/fabric.md#fabric-link_degraded");
  EXPECT_EQ(l[5], "");
  const auto short_text = core::render_finding_blocks({sample()}, 100, false);
  EXPECT_EQ(short_text.find("remedy"), std::string::npos);
  EXPECT_EQ(short_text.find("docs:"), std::string::npos);
  EXPECT_NE(short_text.find("evidence:"), std::string::npos);
}

// Narrow: every line fits; no word (a name, an anchor) is split; the subject moves to its own line
// rather than being cut.
TEST(FindingText, NarrowWrapsAtWordsAndNeverCutsANameOrAnAnchor) {
  Finding f = sample();
  f.subject = "a-very-long-switch-name-of-a-spine-in-row-seven:33 <-> another-long-leaf-name:4";
  f.docs = "docs/fabric.md#fabric-link_degraded_long_anchor";
  const auto text = core::render_finding_blocks({f}, 60);
  for (const auto& line : lines_of(text)) EXPECT_LE(line.size(), 60u) << line;
  EXPECT_NE(text.find("a-very-long-switch-name-of-a-spine-in-row-seven:33"), std::string::npos) << text;
  EXPECT_NE(text.find("docs/fabric.md#fabric-link_degraded_long_anchor"), std::string::npos) << text;
  EXPECT_EQ(lines_of(text)[0], "WARN fabric.link_degraded");
}

// A word longer than a whole line is the only thing ever split; control bytes print as '?'.
TEST(FindingText, OnlyOverlongWordsAreSplitAndEscapesArePrintable) {
  Finding f = sample();
  f.evidence = std::string(200, 'x');
  f.message = "bad \x1b[31mred";
  const auto text = core::render_finding_blocks({f}, 60);
  for (const auto& line : lines_of(text)) EXPECT_LE(line.size(), 60u) << line;
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
}

}  // namespace
