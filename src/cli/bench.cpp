#include <iostream>

#include "bench/options.hpp"
#include "bench/run.hpp"
#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/finding.hpp"

namespace fabscope::cli {

int cmd_bench(int argc, char** argv) {
  auto args = bench::make_parser();
  if (!args.parse(argc, argv, std::cout)) return 0;
  bench::Options opts = bench::options_from(args);
  opts.argv.assign({"fabscope"});
  for (int i = 0; i < argc; ++i) opts.argv.emplace_back(argv[i]);
  auto support = bench::gpu_support();
  if (!support.built) {
    std::cerr << "fabscope bench: " << support.missing << "\n";
    return kExitUsage;
  }
  return bench::run_cli(opts, std::cout, std::cerr);
}

}  // namespace fabscope::cli
