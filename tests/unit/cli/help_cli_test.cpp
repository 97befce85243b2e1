// Every subcommand's --help: an example, the exit codes, and 100 columns at most.
#include <gtest/gtest.h>

#include <sstream>

#include <algorithm>
#include "support/cli_run.hpp"

namespace {

using fabscope::testing::run_fabscope;

std::vector<std::string> subcommands() {
  // The registry as the binary lists it: `fabscope --help` names one command per indented line.
  auto r = run_fabscope("--help", "", false);
  std::vector<std::string> out;
  std::istringstream lines(r.out);
  std::string line;
  bool in_list = false;
  while (std::getline(lines, line)) {
    if (line.rfind("Commands:", 0) == 0) {
      in_list = true;
      continue;
    }
    if (in_list && line.size() > 2 && line[0] == ' ' && line[2] != ' ') {
      std::istringstream w(line);
      std::string name;
      w >> name;
      out.push_back(name);
    } else if (in_list && line.empty() && !out.empty()) {
      break;
    }
  }
  return out;
}

TEST(HelpCli, TopLevelListsTheCommands) {
  auto cmds = subcommands();
  EXPECT_GE(cmds.size(), 8u);
  for (const char* c : {"probe", "check", "doctor", "env", "log", "bench", "exporter"})
    EXPECT_NE(std::find(cmds.begin(), cmds.end(), c), cmds.end()) << c;
}

TEST(HelpCli, EveryCommandHelp_HasAnExampleExitCodesAndFits100Columns) {
  auto cmds = subcommands();
  cmds.push_back("env lint");
  cmds.push_back("fabric route");
  for (const auto& c : cmds) {
    auto r = run_fabscope(c + " --help", "", false);
    EXPECT_EQ(r.exit_code, 0) << c;
    EXPECT_NE(r.out.find("Usage: fabscope " + c), std::string::npos) << c << "\n" << r.out;
    if (c != "version") {
      EXPECT_NE(r.out.find("Example"), std::string::npos) << c << "\n" << r.out;
      EXPECT_NE(r.out.find("Exit code"), std::string::npos) << c << "\n" << r.out;
    }
    std::istringstream lines(r.out);
    std::string line;
    int n = 0;
    while (std::getline(lines, line)) {
      ++n;
      EXPECT_LE(line.size(), 100u) << c << " --help line " << n << ": " << line;
      // A default of up to 60 columns is never split from its value.
      const auto d = line.rfind("(default:");
      if (d != std::string::npos && line.find(')', d) == std::string::npos) {
        std::string span = line.substr(d);
        const auto pos = lines.tellg();
        std::istringstream rest(pos < 0 ? std::string() : lines.str().substr(static_cast<std::size_t>(pos)));
        std::string next;
        while (span.find(')') == std::string::npos && std::getline(rest, next))
          span += " " + next.substr(std::min(next.find_first_not_of(' '), next.size()));
        EXPECT_GT(span.find(')'), 60u) << c << " --help line " << n << ": " << line;
      }
      // Test hooks stay out of users' help.
      EXPECT_EQ(line.find("test hook"), std::string::npos) << c << " --help line " << n << ": " << line;
    }
  }
}

}  // namespace

namespace {

// `fabscope help CMD [MODE]` is CMD's own --help, not the top-level one.
TEST(HelpCli, HelpCommandShowsThatCommandsHelp) {
  auto own = run_fabscope("doctor --help", "", false);
  auto via = run_fabscope("help doctor", "", false);
  EXPECT_EQ(via.exit_code, 0);
  EXPECT_EQ(via.out, own.out);
  EXPECT_EQ(run_fabscope("help job status", "", false).out, run_fabscope("job status --help", "", false).out);
  auto bad = run_fabscope("help doctr");
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_NE(bad.out.find("did you mean 'doctor'?"), std::string::npos) << bad.out;
}

// A misspelt command gets the one it was probably meant to be; nonsense gets none.
TEST(HelpCli, MisspeltCommandGetsASuggestion) {
  auto r = run_fabscope("chekc");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("unknown command 'chekc'; did you mean 'check'?"), std::string::npos) << r.out;
  auto prefix = run_fabscope("expo");
  EXPECT_NE(prefix.out.find("did you mean 'exporter'?"), std::string::npos) << prefix.out;
  auto none = run_fabscope("zzzzzzzz");
  EXPECT_EQ(none.out.find("did you mean"), std::string::npos) << none.out;
}

}  // namespace
