#pragma once
// Every subcommand: a thin function that parses flags, calls the library and prints.
// Each returns the process exit code (0/1/2 judged, 3 usage or internal error).
#include <string>

namespace fabscope::cli {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(int argc, char** argv);  // argv[0] is the subcommand name
};

// The registry, in the order `fabscope --help` lists them (commands.cpp).
const Command* commands();
int command_count();

// `fabscope --help`: the usage line, kSummary, the registry, kTrailer. The manual page
// fabscope(1) is made of the same parts (src/docgen).
extern const char* const kUsage;
extern const char* const kSummary;
extern const char* const kTrailer;
std::string top_help();

int cmd_version(int argc, char** argv);
int cmd_probe(int argc, char** argv);
int cmd_check(int argc, char** argv);
int cmd_doctor(int argc, char** argv);
int cmd_env(int argc, char** argv);
int cmd_log(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_tune(int argc, char** argv);
int cmd_exporter(int argc, char** argv);
int cmd_report(int argc, char** argv);
int cmd_rdma(int argc, char** argv);
int cmd_cluster(int argc, char** argv);
int cmd_fabric(int argc, char** argv);
int cmd_capture(int argc, char** argv);
int cmd_job(int argc, char** argv);

}  // namespace fabscope::cli
