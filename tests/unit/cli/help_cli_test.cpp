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
    }
  }
}

}  // namespace
