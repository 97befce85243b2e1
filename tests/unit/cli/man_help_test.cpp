// The manual pages are --help rendered by groff: for every command, the words of its page
// (from SYNOPSIS to SEE ALSO, headings aside) are the words of `fabscope ... --help`
// (headings aside), in the same order. Pages come from the build (fabscope-docgen).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli_run.hpp"

namespace {

namespace fs = std::filesystem;
using fabscope::testing::quote;
using fabscope::testing::run_fabscope;

using fabscope::testing::run_shell;

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

// --help without its headings ("Usage:", "Options:", ...).
std::vector<std::string> help_words(const std::string& help) {
  std::string kept;
  std::istringstream lines(help);
  std::string line;
  while (std::getline(lines, line)) {
    if (line == "Options:" || line == "Arguments:" || line == "Examples:" || line == "Commands:") continue;
    if (line.rfind("Usage: ", 0) == 0) line = line.substr(7);
    kept += line + "\n";
  }
  return words(kept);
}

// The rendered page from SYNOPSIS to SEE ALSO; section headings (unindented lines) dropped.
std::vector<std::string> page_words(const fs::path& page) {
  const std::string text =
      run_shell("LC_ALL=C.UTF-8 groff -man -Tutf8 -P-cbou -rLL=100n " + quote(page.string()) + " 2>&1");
  std::string kept;
  std::istringstream lines(text);
  std::string line;
  bool in_body = false;
  while (std::getline(lines, line)) {
    if (line == "SYNOPSIS") in_body = true;
    if (line == "SEE ALSO") break;
    if (!in_body || line.empty() || line[0] != ' ') continue;
    kept += line + "\n";
  }
  return words(kept);
}

std::string command_of(const fs::path& page) {
  std::string stem = page.stem().string();  // fabscope-env-lint
  if (stem == "fabscope") return "";
  std::string cmd = stem.substr(std::string("fabscope-").size());
  std::replace(cmd.begin(), cmd.end(), '-', ' ');
  return cmd;
}

std::vector<fs::path> pages() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(FABSCOPE_DOCGEN_DIR) / "man1"))
    if (e.path().extension() == ".1") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& w : v) s += w + " ";
  return s;
}

TEST(ManPages, GroffIsInstalled) {
  // The comparison needs groff (Debian: groff-base, which man-db depends on).
  EXPECT_NE(run_shell("groff --version 2>&1").find("GNU groff"), std::string::npos)
      << "install groff-base (scripts/install-deps.sh)";
}

TEST(ManPages, OnePerCommandOfTheRegistryAndOneForFabscope) {
  auto top = run_fabscope("--help", "", false);
  std::istringstream lines(top.out);
  std::string line;
  bool in_list = false;
  int commands = 0;
  while (std::getline(lines, line)) {
    if (line == "Commands:") { in_list = true; continue; }
    if (!in_list) continue;
    if (line.empty()) break;
    std::istringstream w(line);
    std::string name;
    w >> name;
    ++commands;
    EXPECT_TRUE(fs::exists(fs::path(FABSCOPE_DOCGEN_DIR) / "man1" / ("fabscope-" + name + ".1"))) << name;
  }
  EXPECT_GE(commands, 8);
  EXPECT_TRUE(fs::exists(fs::path(FABSCOPE_DOCGEN_DIR) / "man1" / "fabscope.1"));
  EXPECT_TRUE(fs::exists(fs::path(FABSCOPE_DOCGEN_DIR) / "man1" / "fabscope-env-lint.1"));
}

TEST(ManPages, EveryPageSaysWhatItsHelpSays) {
  const auto all = pages();
  ASSERT_GE(all.size(), 10u);
  for (const auto& page : all) {
    const std::string cmd = command_of(page);
    auto help = run_fabscope(cmd.empty() ? "--help" : cmd + " --help", "", false);
    ASSERT_EQ(help.exit_code, 0) << cmd;
    const auto expected = help_words(help.out);
    const auto got = page_words(page);
    ASSERT_FALSE(expected.empty()) << cmd;
    // First difference, for a readable failure.
    std::size_t i = 0;
    while (i < expected.size() && i < got.size() && expected[i] == got[i]) ++i;
    EXPECT_TRUE(i == expected.size() && i == got.size())
        << page.filename() << " differs from 'fabscope " << cmd << " --help' at word " << i << ": help '"
        << (i < expected.size() ? expected[i] : "<end>") << "', page '" << (i < got.size() ? got[i] : "<end>")
        << "'\nhelp: " << join(expected) << "\npage: " << join(got);
  }
}

TEST(ManPages, NameSectionsAreWhatisEntries) {
  // lexgrog (man-db) reads "name \- description" from NAME: what `apropos fabscope` finds.
  if (run_shell("command -v lexgrog").empty()) GTEST_SKIP() << "lexgrog (man-db) not installed";
  for (const auto& page : pages()) {
    auto out = run_shell("lexgrog " + quote(page.string()) + " 2>&1");
    EXPECT_NE(out.find(": \"" + page.stem().string() + " - "), std::string::npos) << out;
  }
}

}  // namespace
