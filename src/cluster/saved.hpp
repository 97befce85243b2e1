#pragma once
// A saved `fabscope cluster --json` result read back, for locating its slow pairs afterwards
// (`fabscope cluster --from RESULT.json --fabric FABRIC.json`): the fabric dump is often taken
// apart from the validation run, by someone with management access.
#include <memory>
#include <string>
#include <vector>

#include "cluster/localize.hpp"
#include "cluster/outliers.hpp"
#include "cluster/summary.hpp"
#include "core/json.hpp"

namespace fabscope::cluster {

struct SavedRun {
  int world = 0;
  std::vector<NodeSummary> nodes;     // rank, name, rdma_address, rdma_note, ib_ports
  std::vector<PairResult> pairs;      // the judged engine's pairs
  std::string engine;                 // the judged engine
  std::vector<std::string> names;     // by rank
  // Some node carries tor_switch: false in a result written before nodes reported their LLDP
  // neighbour (fabscope 0.1.0), where "no neighbour" is unknown, not "lldpd not running".
  bool tor_reported = false;
  std::string written_by;             // the first node's fabscope_version, "" unknown
};

// The parts of a fabscope.cluster document (docs/formats.md) that locating needs, through the one
// reader (saved_result.hpp), then checked as locating indexes them: every node below `world`,
// one node per rank, each pair once. Throws fabscope::Error naming the field ("field
// 'nodes[3].ib_ports[0].lid': ..."); the caller puts the file in front.
SavedRun saved_run_from_json(const json& doc);

// Places each saved node in the fabric and locates the slow directions (as judge() does).
Localization localize_saved(const SavedRun& run, const fabric::Subnet& fabric);
// RoCE: by the switch ports the nodes reported (tor_switch, tor_port), no fabric file.
Localization localize_saved(const SavedRun& run);

// RoCE: the nodes grouped by their LLDP neighbour (localize_by_switch), a direction slow below
// direction_threshold(pairs); shared with judge().
Localization localize_by_lldp(const std::vector<NodeSummary>& nodes, int world, const std::vector<PairResult>& pairs);

// Places the nodes (the pair engine's port first) and locates, a direction slow below
// direction_threshold(pairs); shared with judge().
Localization localize_nodes(const fabric::Subnet& fabric, const std::vector<NodeSummary>& nodes, int world,
                            const std::vector<PairResult>& pairs);

}  // namespace fabscope::cluster
