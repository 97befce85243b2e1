// Rendering on values: what roff, bash and zsh would misread is escaped.
#include <gtest/gtest.h>

#include "core/args.hpp"
#include "docgen/docgen.hpp"

namespace {

using fabscope::core::ArgParser;
using fabscope::docgen::CommandDoc;

CommandDoc doc() {
  ArgParser p("demo", "First line of the summary.\n.starts with a dot, has a back\\slash and 'quotes'");
  p.option("--format", "FORMAT", "one of [a] or b: it's \"x\"", "a")
      .choices("format", {"a", "b"})
      .multi("--env-file", "FILE", "read FILE")
      .option("--root", "DIR", "root")
      .positional("WHAT", "what to do")
      .choices("WHAT", {"run", "stop"})
      .example("fabscope demo --format=b | grep '^x'", "filter")
      .footer("Exit codes: 0 ok.\n3 usage.");
  return {"demo", "a demo", p.spec()};
}

TEST(ManRender, EscapesRoffSyntaxAndKeepsTheFooterLines) {
  const auto d = doc();
  const auto page = fabscope::docgen::render_man(d, {d}, "9.9");
  EXPECT_NE(page.find(".TH FABSCOPE\\-DEMO 1 \"\" \"fabscope 9.9\""), std::string::npos) << page;
  EXPECT_NE(page.find(".SH NAME\nfabscope\\-demo \\- a demo\n"), std::string::npos) << page;
  EXPECT_NE(page.find("\n\\&.starts with a dot, has a back\\eslash and \\(aqquotes\\(aq\n"), std::string::npos)
      << page;
  EXPECT_NE(page.find("\\fB\\-\\-env\\-file\\fR \\fIFILE\\fR\nread FILE (repeatable)\n"), std::string::npos) << page;
  EXPECT_NE(page.find("grep \\(aq\\(hax\\(aq"), std::string::npos) << page;
  EXPECT_NE(page.find(".SH EXIT STATUS\nExit codes: 0 ok.\n.br\n3 usage.\n"), std::string::npos) << page;
}

TEST(ManRender, SubcommandPagesPointAtEachOther) {
  ArgParser env("env", "Plan.");
  env.subcommand("lint");
  ArgParser lint("env lint", "Judge NCCL settings: more.");
  std::vector<CommandDoc> all{{"env", "plan", env.spec()}, {"env lint", "", lint.spec()}};
  EXPECT_EQ(fabscope::docgen::man_name("env lint"), "fabscope-env-lint");
  const auto parent = fabscope::docgen::render_man(all[0], all, "1");
  const auto child = fabscope::docgen::render_man(all[1], all, "1");
  EXPECT_NE(parent.find("\\fBfabscope\\-env\\-lint\\fR(1)"), std::string::npos) << parent;
  EXPECT_NE(child.find("\\fBfabscope\\-env\\fR(1)"), std::string::npos) << child;
  // No registry line for a subcommand: its summary's first clause names it.
  EXPECT_NE(child.find("fabscope\\-env\\-lint \\- Judge NCCL settings\n"), std::string::npos) << child;
}

TEST(BashRender, ChoicesFilesAndDirectoriesByOption) {
  const auto d = doc();
  const auto sh = fabscope::docgen::render_bash({d}, "9.9");
  EXPECT_NE(sh.find("\"demo --format\") _fabscope_words \"a b\" ;;"), std::string::npos) << sh;
  EXPECT_NE(sh.find("\"demo --env-file\") _fabscope_paths -f ;;"), std::string::npos) << sh;
  EXPECT_NE(sh.find("\"demo --root\") _fabscope_paths -d ;;"), std::string::npos) << sh;
  EXPECT_NE(sh.find("\"demo 0\") _fabscope_words \"run stop\" ;;"), std::string::npos) << sh;
  EXPECT_NE(sh.find("complete -F _fabscope fabscope\n"), std::string::npos);
}

TEST(ZshRender, QuotesAndBracketsInDescriptionsAreEscaped) {
  const auto d = doc();
  const auto z = fabscope::docgen::render_zsh({d}, "9.9");
  EXPECT_EQ(z.rfind("#compdef fabscope\n", 0), 0u);
  EXPECT_NE(z.find("--format='[one of \\[a\\] or b: it'\\''s \"x\"]:FORMAT:(a b)'"), std::string::npos) << z;
  EXPECT_NE(z.find("'*'--env-file='[read FILE]:FILE:_files'"), std::string::npos) << z;
  EXPECT_NE(z.find("'1::WHAT:(run stop)'"), std::string::npos) << z;
}

TEST(Describe, ParseRecordsTheDefinitionsInsteadOfParsing) {
  auto d = doc();
  ArgParser p("demo", "x");
  p.flag("--json", "json");
  std::ostringstream out;
  {
    fabscope::core::DescribeScope scope;
    EXPECT_FALSE(p.parse({"--no-such-flag"}, out));  // nothing read, nothing thrown
    ASSERT_EQ(scope.specs.size(), 1u);
    EXPECT_EQ(scope.specs[0].prog, "demo");
    EXPECT_EQ(scope.specs[0].options.back().key, "json");
  }
  EXPECT_TRUE(out.str().empty());
  EXPECT_THROW(p.parse({"--no-such-flag"}, out), std::exception);  // the scope has ended
}

TEST(Describe, ChoicesForAnUnknownNameIsAProgramError) {
  ArgParser p("demo", "x");
  p.flag("--json", "json");
  EXPECT_THROW(p.choices("json", {"a"}), std::logic_error);  // a flag takes no value
  EXPECT_THROW(p.choices("nope", {"a"}), std::logic_error);
}

}  // namespace
