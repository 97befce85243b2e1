#include <iostream>

#include "cli/commands.hpp"
#include "core/args.hpp"
#include "core/json.hpp"

namespace fabscope::cli {

int cmd_version(int argc, char** argv) {
  core::ArgParser args("version", "Print fabscope's version.");
  args.flag("--json", "machine-readable output").example("fabscope version --json", "version as JSON");
  if (!args.parse(argc, argv, std::cout)) return 0;
  if (args.has("json")) {
    std::cout << json{{"schema", "fabscope.version"}, {"schema_version", 1}, {"version", FABSCOPE_VERSION}}.dump(2)
              << "\n";
  } else {
    std::cout << "fabscope " << FABSCOPE_VERSION << "\n";
  }
  return 0;
}

}  // namespace fabscope::cli
