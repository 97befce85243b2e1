// The generated bash completion, sourced into a real bash and asked for completions the way
// bash asks (COMP_WORDS, COMP_CWORD, then the function `complete -p fabscope` names); the
// expected words come from the binary's own --help, so a new command or flag is checked too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
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

using fabscope::testing::run_shell;

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
  EXPECT_EQ(complete({"fabscope", "fabric", "ro"}), (std::set<std::string>{"route"}));
  EXPECT_EQ(complete({"fabscope", "fabric", "route", "-"}), help_flags("fabric route"));
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

// zsh as a user meets it: an interactive zsh on a pseudo-terminal (zsh/zpty) with compinit and
// the generated _fabscope on fpath; the line is typed and Tab pressed. compadd is wrapped to
// append the matches it is given (after zsh's own prefix matching, -O) to a file.
std::set<std::string> zsh_complete(const std::string& line) {
  const std::string dir = std::string(FABSCOPE_DOCGEN_DIR) + "/zsh";
  char tmpl[] = "/tmp/fabscope-zsh-XXXXXX";
  const char* tmp = mkdtemp(tmpl);
  if (!tmp) return {};
  const std::string out = std::string(tmp) + "/matches";
  const std::string script =
      "zmodload zsh/zpty\n"
      "zpty -b z zsh -f -i\n"
      "zpty -w z \"PS1=''; fpath=(" + dir + " \\$fpath); autoload -Uz compinit; compinit -u -D\"\n"
      "zpty -w z 'compadd() { if [[ \" $* \" == *\" -\"[OAD]\" \"* ]]; then builtin compadd \"$@\"; return; fi; "
      "local -a m; builtin compadd -O m \"$@\"; print -rl -- $m >> " + out + "; builtin compadd \"$@\"; }'\n"
      // _main_complete runs comppostfuncs once the completion is over: the end marker.
      "zpty -w z 'fabscope_done() { print done > " + out + ".done; }; comppostfuncs=(fabscope_done)'\n"
      "zpty -w z \"bindkey '^I' complete-word\"\n"
      "zpty -w -n z " + sq(line) + "$'\\t'\n"
      "for i in {1..300}; do [[ -e " + out + ".done ]] && break; sleep 0.1; done\n"
      "zpty -d z\n";
  const std::string script_file = std::string(tmp) + "/drive.zsh";
  {
    FILE* f = fopen(script_file.c_str(), "w");
    if (!f) return {};
    fputs(script.c_str(), f);
    fclose(f);
  }
  run_shell("zsh -f " + sq(script_file) + " >/dev/null 2>&1");
  std::set<std::string> got;
  std::istringstream lines(run_shell("cat " + sq(out) + " 2>/dev/null"));
  std::string l;
  while (std::getline(lines, l))
    if (!l.empty()) got.insert(l);
  run_shell("rm -rf " + sq(tmp));
  return got;
}

std::set<std::string> long_flags(const std::string& cmd) {
  std::set<std::string> out;
  for (const auto& f : help_flags(cmd))
    if (f.rfind("--", 0) == 0) out.insert(f);
  return out;
}

TEST(ZshCompletion, CompletesCommandsFlagsAndChoicesInAnInteractiveZsh) {
  if (run_shell("command -v zsh").empty()) GTEST_SKIP() << "zsh not installed";
  const auto cmds = registry();
  EXPECT_EQ(zsh_complete("fabscope "), std::set<std::string>(cmds.begin(), cmds.end()));
  EXPECT_EQ(zsh_complete("fabscope env --format "),
            (std::set<std::string>{"shell", "envfile", "docker", "k8s", "slurm", "torchrun", "json"}));
  EXPECT_EQ(zsh_complete("fabscope bench all_"), (std::set<std::string>{"all_reduce", "all_gather"}));
  EXPECT_EQ(zsh_complete("fabscope check --"), long_flags("check"));
  EXPECT_EQ(zsh_complete("fabscope env lint --"), long_flags("env lint"));
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
