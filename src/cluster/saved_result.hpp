#pragma once
// A saved `fabscope cluster --json` result (fabscope.cluster, docs/formats.md) read back as
// written: the nodes, the consistency table, the pairs with the outliers rank 0 found, the
// localization, the findings. The one reader of that file: `cluster --from` (saved.hpp) and
// `report` both take it from here. Its own library (fabscope_cluster_saved, core only), so the
// report reads a result without linking the pair engines, MPI or GPU code.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cluster/ib_port.hpp"
#include "cluster/outliers.hpp"
#include "core/finding.hpp"
#include "core/json.hpp"

namespace fabscope::cluster {

struct SavedNode {
  int rank = 0;
  std::string name, fabscope_version, error;
  std::size_t findings = 0;  // its own warn/fail findings carried in the summary
  std::vector<IbPortFact> ib_ports;
  std::string rdma_address, rdma_note;  // the rdma pair engine's endpoint, or why there is none
  // RoCE: the switch port its RoCE netdev is cabled to (LLDP), "" unknown.
  std::string tor_switch, tor_port;
  bool tor_reported = false;  // the node carries tor_switch (absent before fabscope 0.1.0 grew it)
};

// `localization` (cluster --fabric): the cables and switches the slow pairs share. Node indexes
// point into the fabric file the cluster run was given; only their form is checked here.
struct SavedSuspect {
  std::string kind;  // "cable", "host_cable", "switch", "uplinks" (RoCE: a switch's uplinks)
  std::string name;  // "S-leaf03:33 -> S-spine01:4" (" <-> " both directions), or the switch's
  // Into the fabric file's nodes; switch: a_node only; -1 when placed by LLDP neighbours (RoCE).
  int a_node = -1, a_port = 0, b_node = -1, b_port = 0;
  bool both_directions = false;
  int host_rank = -1;
  std::size_t explained = 0, slow_crossing = 0, fast_crossing = 0;
  std::vector<std::string> alternatives;
  struct Example {
    int from = 0, to = 0;
    std::string from_name, to_name;
  };
  std::vector<Example> examples;
};

struct SavedLocalization {
  bool attempted = false;
  std::string why_not, fabric_source;
  std::optional<double> threshold_gbps;
  std::size_t observations = 0, slow = 0, fast = 0, unrouted = 0, unexplained = 0;
  std::vector<SavedSuspect> suspects;
  std::vector<std::string> notes;
};

struct SavedAttribute {
  std::string key, title, finding_id, reference;
  int reference_count = 0;
  bool tie = false;
  std::vector<std::string> values;  // one per entry of SavedResult::nodes, "" unknown
  std::vector<std::string> odd;     // names of the nodes whose value differs
};

struct SavedSlowNode {
  int rank = 0;
  std::size_t pairs = 0, slow_pairs = 0;
  std::optional<double> median_gbps;
};

struct SavedSlowLink {
  int a = 0, b = 0;
  std::optional<double> gbps, a_median_gbps, b_median_gbps;
};

struct SavedResult {
  std::string launcher;
  int world_written = 0;  // `world` as the file states it
  // Ranks by the nodes: world_written, or more where a node's rank is past it (a job that grew
  // the world). Every rank below in the pairs, outliers and localization is below this.
  int world = 0;
  std::vector<SavedNode> nodes;  // in the file's order, the ones that reported
  std::vector<std::pair<std::string, std::string>> missing;  // name, reason
  std::vector<SavedAttribute> attributes;
  std::string pairs_mode, engine;  // engine: the judged engine ("" in a file without one)
  std::size_t rounds = 0, measured = 0;
  double seconds_per_direction = 0;
  std::vector<PairResult> pairs;  // every pair; engine: the file's per pair, "" where it names none
  bool judged = false;
  std::optional<double> median_gbps, mad_gbps, threshold_gbps;
  std::vector<SavedSlowNode> slow_nodes;
  std::vector<SavedSlowLink> slow_links;
  std::vector<Finding> findings;
  std::vector<std::string> drain;  // the scontrol commands
  int fail = 0, warn = 0, info = 0;
  std::string worst;
  SavedLocalization localization;
  // "node3" for a rank (the name it reported, "rank3" for one that did not).
  std::vector<std::string> names;  // world entries
};

// The newest fabscope.cluster version this fabscope writes and reads (ClusterResult::kSchemaVersion).
constexpr int kClusterSchemaVersion = 1;
// The most ranks a result may hold.
constexpr int kMaxSavedRanks = 1'000'000;

// Reads a fabscope.cluster document of any version this fabscope knows (1); throws
// fabscope::Error "FILE: field 'pairwise.pairs[2].b': ..." naming the field and what it held.
// Ranks are checked against `world`, so a reader can index by rank without a bounds question.
SavedResult saved_result_from_json(const std::string& file, const json& doc);

}  // namespace fabscope::cluster
