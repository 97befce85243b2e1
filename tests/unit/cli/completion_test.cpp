// The generated bash completion, sourced into a real bash and asked for completions the way
// bash asks (COMP_WORDS, COMP_CWORD, then the function `complete -p fabscope` names); the
// expected words come from the binary's own --help, so a new command or flag is checked too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli_run.hpp"

namespace {

using fabscope::testing::run_fabscope;

const std::string kBash = std::string(FABSCOPE_DOCGEN_DIR) + "/bash-completion/fabscope";
const std::string kZsh = std::string(FABSCOPE_DOCGEN_DIR) + "/zsh/_fabscope";

std::string sq(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string run_shell(const std::string& cmd, int* rc = nullptr) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = pclose(p);
  if (rc) *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// words as bash split them (the last is the word under the cursor, "" after a space).
std::set<std::string> complete(const std::vector<std::string>& words, const std::string& prelude = "") {
  std::string arr;
  for (const auto& w : words) arr += sq(w) + " ";
  const std::string script = prelude + "source " + sq(kBash) + " || exit 9\n" +
                             "COMP_WORDS=(" + arr + ")\nCOMP_CWORD=" + std::to_string(words.size() - 1) +
                             "\nfn=$(complete -p fabscope | sed -n 's/.*-F \\([^ ]*\\) .*/\\1/p')\n"
                             "\"$fn\" fabscope \"${COMP_WORDS[COMP_CWORD]}\" \"${COMP_WORDS[COMP_CWORD-1]}\"\n"
                             "printf '%s\\n' \"${COMPREPLY[@]}\"\n";
  int rc = -1;
  std::string out = run_shell("bash --norc --noprofile -c " + sq(script) + " 2>&1", &rc);
  EXPECT_EQ(rc, 0) << out;
  std::set<std::string> got;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line))
    if (!line.empty()) got.insert(line);
  return got;
}

std::vector<std::string> registry() {
  auto r = run_fabscope("--help", "", false);
  std::vector<std::string> out;
  std::istringstream lines(r.out);
  std::string line;
  bool in_list = false;
  while (std::getline(lines, line)) {
    if (line == "Commands:") { in_list = true; continue; }
    if (!in_list) continue;
    if (line.empty()) break;
    std::istringstream w(line);
    std::string name;
    w >> name;
    out.push_back(name);
  }
  return out;
}

// Every flag spelled in a command's --help option lines ("  -b, --minbytes SIZE  ...").
std::set<std::string> help_flags(const std::string& cmd) {
  auto r = run_fabscope(cmd + " --help", "", false);
  std::set<std::string> flags;
  std::istringstream lines(r.out);
  std::string line;
  bool in_opts = false;
  while (std::getline(lines, line)) {
    if (line == "Options:") { in_opts = true; continue; }
    if (in_opts && (line.empty() || line[0] != ' ')) break;
    if (!in_opts || line.size() < 3 || line[2] != '-') continue;
    std::istringstream w(line);
    std::string word;
    while (w >> word) {
      if (word.back() == ',') word.pop_back();
      if (word.empty() || word[0] != '-') break;
      flags.insert(word);
    }
  }
  return flags;
}

TEST(BashCompletion, FirstWordIsEveryCommandOfTheRegistry) {
  const auto cmds = registry();
  ASSERT_GE(cmds.size(), 8u);
  EXPECT_EQ(complete({"fabscope", ""}), std::set<std::string>(cmds.begin(), cmds.end()));
  EXPECT_EQ(complete({"fabscope", "ch"}), (std::set<std::string>{"check"}));
}

TEST(BashCompletion, DashCompletesEveryFlagOfEachCommandsHelp) {
  for (const auto& c : registry()) {
    const auto flags = help_flags(c);
    ASSERT_FALSE(flags.empty()) << c;
    EXPECT_EQ(complete({"fabscope", c, "-"}), flags) << c;
  }
  EXPECT_EQ(complete({"fabscope", "env", "lint", "-"}), help_flags("env lint"));
}

TEST(BashCompletion, SubcommandAfterItsCommand) {
  EXPECT_EQ(complete({"fabscope", "env", "l"}), (std::set<std::string>{"lint"}));
  EXPECT_EQ(complete({"fabscope", "env", "lint", "--env"}), (std::set<std::string>{"--env-file"}));
}

TEST(BashCompletion, OptionChoicesAsSeparateWordAndAfterEquals) {
  const std::set<std::string> formats{"shell", "envfile", "docker", "k8s", "slurm", "torchrun", "json"};
  EXPECT_EQ(complete({"fabscope", "env", "--format", ""}), formats);
  // bash splits --format=d at '=' (COMP_WORDBREAKS): words "--format", "=", "d".
  EXPECT_EQ(complete({"fabscope", "env", "--format", "=", "d"}), (std::set<std::string>{"docker"}));
  EXPECT_EQ(complete({"fabscope", "env", "--format", "="}), formats);
  EXPECT_EQ(complete({"fabscope", "bench", "-d", "bf"}), (std::set<std::string>{"bfloat16"}));
  EXPECT_EQ(complete({"fabscope", "bench", "--launcher", ""}),
            (std::set<std::string>{"auto", "local", "mpi", "torchrun"}));
}

TEST(BashCompletion, CollectivesAsTheFirstArgumentOnly) {
  EXPECT_EQ(complete({"fabscope", "bench", "all_"}),
            (std::set<std::string>{"all_reduce", "all_gather"}));
  EXPECT_EQ(complete({"fabscope", "bench", "-b", "8", "red"}),
            (std::set<std::string>{"reduce", "reduce_scatter"}));
  EXPECT_TRUE(complete({"fabscope", "bench", "all_reduce", "red"}).empty());
}

TEST(BashCompletion, FreeValuesOfferNothingAndPathsComplete) {
  EXPECT_TRUE(complete({"fabscope", "env", "--nodes", ""}).empty());
  const std::string fixtures = FABSCOPE_TEST_FIXTURES;
  EXPECT_EQ(complete({"fabscope", "check", "--root", fixtures + "/rxe"}),
            (std::set<std::string>{fixtures + "/rxe-vm"}));
  auto files = complete({"fabscope", "env", "lint", "--env-file", fixtures + "/rxe-vm/SOU"});
  EXPECT_EQ(files, (std::set<std::string>{fixtures + "/rxe-vm/SOURCE"}));
}

TEST(BashCompletion, LoadsUnderTheBashCompletionPackage) {
  const std::string lib = "/usr/share/bash-completion/bash_completion";
  if (run_shell("test -r " + lib + " && echo yes").empty()) GTEST_SKIP() << lib << " not installed";
  EXPECT_EQ(complete({"fabscope", "env", "--format", "k"}, "source " + lib + "\n"),
            (std::set<std::string>{"k8s"}));
}

TEST(ZshCompletion, ParsesAndDefinesEveryCommandFunction) {
  if (run_shell("command -v zsh").empty()) GTEST_SKIP() << "zsh not installed";
  int rc = -1;
  auto out = run_shell("zsh -n " + sq(kZsh) + " 2>&1", &rc);
  EXPECT_EQ(rc, 0) << out;
  // Loaded the way compinit autoloads it: the functions exist, compdef is not needed.
  out = run_shell("zsh -f -c " + sq("autoload -Uz compinit && compinit -u -D && source " + kZsh +
                                    " && print -l ${(k)functions[(I)_fabscope*]}") + " 2>&1", &rc);
  EXPECT_EQ(rc, 0) << out;
  for (const auto& c : registry()) {
    std::string fn = "_fabscope_" + c;
    std::replace(fn.begin(), fn.end(), '-', '_');
    EXPECT_NE(out.find(fn + "\n"), std::string::npos) << fn << "\n" << out;
  }
}

}  // namespace
