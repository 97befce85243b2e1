#pragma once
// probe: collects a NodeInfo from a root (sysfs/procfs) plus, on a live root, the facts only
// libraries can give (NVML, NCCL version, getifaddrs). Never throws for missing or garbage
// files: unknown fields stay unknown and a note is added to NodeInfo::probe_notes.
#include "core/node_info.hpp"
#include "core/root.hpp"
#include "probe/run_tool.hpp"

namespace fabscope::probe {

struct Options {
  // Query live-only sources (NVML, libnccl, getifaddrs). Defaults to root.is_live().
  bool live = false;
  // How the tools (nft, lldpcli) are run on a live node: run_tool when empty. `fabscope capture`
  // passes one that keeps each output.
  ToolRunner run_tool;
};

// A root holding a capture (probe/replay.hpp) is probed as a tree, then the tool outputs and
// library facts kept in it are replayed.
NodeInfo collect(const core::Root& root, const Options& opts);
inline NodeInfo collect(const core::Root& root) { return collect(root, Options{root.is_live()}); }

// Two probes `seconds` apart, for judging counter rates (check --interval). elapsed_seconds is
// the time between the two reads, not the requested one: probing itself takes a while.
struct TwoProbes {
  NodeInfo before, after;
  double elapsed_seconds = 0;
};
TwoProbes collect_twice(const core::Root& root, double seconds);

}  // namespace fabscope::probe
