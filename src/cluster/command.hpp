#pragma once
// `fabscope cluster` after its flags, on every rank: this node's summary (probed and judged
// here, only the summary travels), the exchange the launcher implies, the pair engines this node
// offers, run_cluster (run.hpp), then on rank 0 the verdict printed and the drain commands run,
// and every rank's exit code made rank 0's. The CLI (src/cli/cluster.cpp) turns flags into a
// CommandSpec and calls run_command.
#include <chrono>
#include <ostream>
#include <string>

#include "cluster/engine_choice.hpp"
#include "cluster/launch.hpp"
#include "cluster/run.hpp"
#include "core/root.hpp"

namespace fabscope::cluster {

struct CommandSpec {
  Launch launch;                      // detect_launch()
  RunOptions run;                     // pairs, seed, pair duration, node names
  EngineMode engine_mode = EngineMode::Auto;
  std::chrono::seconds join_timeout{60};  // --timeout (env launcher)
  core::Root root;                    // where this node's probe reads
  std::string pair_host;              // FABSCOPE_CLUSTER_PAIR_ADDR; "" = the exchange's local address
  bool drain = false;                 // run the scontrol drain commands
  bool json = false;                  // out gets the result as JSON
  std::string fabric;                 // --fabric: a saved sweep with routes, read by rank 0
  int fabric_from = -1;               // --fabric-from: the rank that sweeps the fabric live (-1 none)
};

// Runs the command; out gets rank 0's report, err the warnings. Returns this rank's exit code,
// rank 0's on every rank. Throws fabscope::Error (a bad launcher environment, a rank that cannot
// reach rank 0, a malformed pair plan).
int run_command(const CommandSpec& spec, std::ostream& out, std::ostream& err);

// `fabscope cluster --from RESULT.json --fabric FABRIC.json`: locates the slow pairs of a saved
// result in a saved fabric, without launching anything. Prints the located suspects and their
// findings (JSON: schema fabscope.cluster.localization); returns the findings' exit code. Throws
// fabscope::Error naming the file and field of bad input.
// fabric "": RoCE, by the LLDP neighbours the saved nodes reported.
int localize_command(const std::string& from, const std::string& fabric, bool json, std::ostream& out);

}  // namespace fabscope::cluster
