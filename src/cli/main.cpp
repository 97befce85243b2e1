// fabscope: probe, check and tune the network of a GPU training node.
#include <cstring>
#include <exception>
#include <iostream>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/finding.hpp"
#include "core/strings.hpp"

namespace {

void usage(std::ostream& os) { os << fabscope::cli::top_help(); }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(std::cerr);
    return fabscope::kExitUsage;
  }
  std::string name = argv[1];
  if (name == "-h" || name == "--help" || name == "help") {
    usage(std::cout);
    return 0;
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
  std::cerr << "fabscope: unknown command '" << fabscope::core::printable(name) << "'\n\n";
  usage(std::cerr);
  return fabscope::kExitUsage;
}
