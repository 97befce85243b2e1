// fabscope-exporter: `fabscope exporter` as a program of its own, for the systemd unit and the
// DaemonSet. It links the exporter, probe, checks and core libraries and nothing else (no
// env planner, log analyser, benchmark or their dependencies), so a long-running exporter keeps
// fewer code pages resident. Same flags, output and exit codes as `fabscope exporter`.
#include <exception>
#include <iostream>

#include "cli/commands.hpp"
#include "core/args.hpp"
#include "core/error.hpp"
#include "core/finding.hpp"

int main(int argc, char** argv) {
  fabscope::core::set_standalone_program("exporter", "fabscope-exporter");
  try {
    return fabscope::cli::cmd_exporter(argc, argv);
  } catch (const fabscope::UsageError& e) {
    std::cerr << "fabscope-" << e.what() << "\n";
    return fabscope::kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "fabscope-exporter: error: " << e.what() << "\n";
    return fabscope::kExitUsage;
  }
}
