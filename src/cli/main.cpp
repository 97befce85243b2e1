// fabscope: probe, check and tune the network of a GPU training node.
#include <cstring>
#include <exception>
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/finding.hpp"
#include "core/strings.hpp"
#if FABSCOPE_HAVE_NCCLENV
#include "ncclenv/vars.hpp"
#endif

namespace {

void usage(std::ostream& os) { os << fabscope::cli::top_help(); }

// The command a misspelt name was probably meant to be: within 2 edits, or the one command it
// begins (at least 2 letters); "" when none or several fit equally.
std::string did_you_mean(const std::string& name) {
  const auto* cmds = fabscope::cli::commands();
  std::string best;
  std::size_t best_d = 3;
  bool tie = false;
  for (int i = 0; i < fabscope::cli::command_count(); ++i) {
    const std::string c = cmds[i].name;
    std::size_t d = 3;
    if (name.size() >= 2 && c.rfind(name, 0) == 0) d = 1;
#if FABSCOPE_HAVE_NCCLENV
    d = std::min(d, fabscope::ncclenv::edit_distance_within(name, c, 2));
#endif
    if (d < best_d) best = c, best_d = d, tie = false;
    else if (d == best_d && d <= 2) tie = true;
  }
  return tie ? "" : best;
}

int unknown_command(const std::string& name) {
  std::cerr << "fabscope: unknown command '" << fabscope::core::printable(name) << "'";
  const std::string guess = did_you_mean(name);
  if (!guess.empty()) std::cerr << "; did you mean '" << guess << "'?";
  std::cerr << "\n\n";
  usage(std::cerr);
  return fabscope::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(std::cerr);
    return fabscope::kExitUsage;
  }
  std::string name = argv[1];
  if (name == "-h" || name == "--help" || (name == "help" && argc == 2)) {
    usage(std::cout);
    return 0;
  }
  // `fabscope help CMD [MODE]` is `fabscope CMD [MODE] --help`.
  std::vector<char*> help_argv;
  static char help_flag[] = "--help";
  if (name == "help") {
    name = argv[2];
    help_argv.push_back(argv[0]);
    for (int i = 2; i < argc; ++i) help_argv.push_back(argv[i]);
    help_argv.push_back(help_flag);
    argc = static_cast<int>(help_argv.size());
    help_argv.push_back(nullptr);
    argv = help_argv.data();
  }
  if (name == "--version") name = "version";
  const auto* cmds = fabscope::cli::commands();
  for (int i = 0; i < fabscope::cli::command_count(); ++i) {
    if (name != cmds[i].name) continue;
    try {
      return cmds[i].run(argc - 1, argv + 1);
    } catch (const fabscope::UsageError& e) {
      std::cerr << "fabscope " << fabscope::core::printable_lines(e.what()) << "\n";
      return fabscope::kExitUsage;
    } catch (const std::exception& e) {
      // Messages quote the values they refuse (a file's field, a peer's text): printable.
      std::cerr << "fabscope " << name << ": error: " << fabscope::core::printable_lines(e.what()) << "\n";
      return fabscope::kExitUsage;
    }
  }
  return unknown_command(name);
}
