#include "core/args.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "core/error.hpp"

using fabscope::core::ArgParser;

namespace {
ArgParser make() {
  ArgParser p("probe", "Probe the node.");
  p.option("--root", "DIR", "root", "/")
      .flag("--json", "json")
      .option("-b,--minbytes", "SIZE", "min", "8")
      .multi("--hca", "NAME", "device")
      .positional("FILE", "files", true)
      .example("fabscope probe --json", "as JSON");
  return p;
}
}  // namespace

TEST(ArgParser, ParsesLongShortInlineAndPositionals) {
  auto p = make();
  std::ostringstream out;
  ASSERT_TRUE(p.parse({"--root=/tmp", "--json", "-b", "64", "--hca", "a", "--hca", "b", "x", "--",
                       "--y"},
                      out));
  EXPECT_EQ(p.get("root"), "/tmp");
  EXPECT_TRUE(p.has("json"));
  EXPECT_EQ(p.get_int("minbytes", 0, 1 << 20), 64);
  EXPECT_EQ(p.get_all("hca"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(p.positionals(), (std::vector<std::string>{"x", "--y"}));
}

TEST(ArgParser, DefaultsApplyWhenAbsent) {
  auto p = make();
  std::ostringstream out;
  ASSERT_TRUE(p.parse(std::vector<std::string>{}, out));
  EXPECT_EQ(p.get("root"), "/");
  EXPECT_FALSE(p.has("root"));
}

TEST(ArgParser, UnknownOptionAndMissingValueNameTheFlag) {
  std::ostringstream out;
  auto p = make();
  try {
    p.parse({"--rooot", "x"}, out);
    FAIL();
  } catch (const fabscope::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--rooot"), std::string::npos);
  }
  auto q = make();
  EXPECT_THROW(q.parse({"--root"}, out), fabscope::UsageError);
}

TEST(ArgParser, BadNumberNamesFlagAndValue) {
  auto p = make();
  std::ostringstream out;
  p.parse({"-b", "12x"}, out);
  try {
    p.get_int("minbytes", 0, 100);
    FAIL();
  } catch (const fabscope::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--minbytes '12x'"), std::string::npos);
  }
}

TEST(ArgParser, HelpListsOptionsAndExamples) {
  auto p = make();
  std::ostringstream out;
  EXPECT_FALSE(p.parse({"--help"}, out));
  EXPECT_NE(out.str().find("--root DIR"), std::string::npos);
  EXPECT_NE(out.str().find("Examples:\n  fabscope probe --json"), std::string::npos);
}
