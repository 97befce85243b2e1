#pragma once
// A tree written by `fabscope capture` holds, beside sys/ and proc/, what only the live node could
// tell: the output of each tool the probe ran (nft, lldpcli) and the facts read through libraries
// (libibverbs, the DCB netlink replies, NVML, libnccl/libcuda versions, getifaddrs), saved as
// `fabscope probe --json`. Probing such a tree replays them, so `doctor --root CAPTURE` judges
// what `doctor` judged on the node. The layout and the manifest are in docs/formats.md.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/node_info.hpp"
#include "core/root.hpp"
#include "probe/run_tool.hpp"

namespace fabscope::probe {

// Paths inside a captured tree.
inline constexpr const char* kCaptureDir = "fabscope";
inline constexpr const char* kCaptureManifest = "fabscope/manifest.json";
inline constexpr const char* kCaptureProbe = "fabscope/probe.json";
inline constexpr const char* kCaptureCommands = "fabscope/commands";

// "ran" | "not_found" | "timed_out" | "failed", as the manifest spells ToolResult::Status.
std::string tool_status_name(ToolResult::Status s);
std::optional<ToolResult::Status> parse_tool_status(const std::string& name);

struct CaptureReplay {
  bool live = false;                         // captured on a live node (tools and libraries ran)
  std::map<std::string, ToolResult> tools;   // by program name (argv[0]): "nft", "lldpcli"
  std::optional<NodeInfo> saved;             // fabscope/probe.json, when the capture was live
  // A runner answering with the kept result of the same program; NotFound-free: a program the
  // capture did not run is answered as Failed with a note saying so.
  ToolRunner runner() const;
};

// nullopt when root holds no fabscope/manifest.json (an ordinary tree). A manifest or a kept
// output that cannot be read is a note, and replaying falls back to what a tree gives.
std::optional<CaptureReplay> load_capture_replay(const core::Root& root, std::vector<std::string>& notes);

// Copies onto info the facts a live probe reads through libraries, from the saved probe:
// verbs (and the active MTUs it gives the ports), each netdev's IPv4 addresses, the DCB part of
// each lossless state, the NCCL and CUDA versions, and the NVML part of each GPU (name, UUID,
// NVLinks with their counters). The NVML pairs of gpu_topology are taken by probe::collect.
void apply_saved_live_facts(const NodeInfo& saved, NodeInfo& info);

}  // namespace fabscope::probe
