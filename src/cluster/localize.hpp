#pragma once
// Where the slow pairs meet: from the pair measurements and the routes the subnet manager
// programmed (a saved sweep with forwarding tables, fabric/routes.hpp), the cables and switches
// that the slow measurements share. Pure.
//
// Each measured direction of a pair is one observation: the route from the sender's HCA port to
// the receiver's LID, and slow when its bandwidth is below the outlier threshold (outliers.hpp).
// Components are the directed cables (a cable is two fibres: one direction can fail alone), the
// host cables (an HCA and its switch port: the NIC, the cable or the port, which pair
// measurements cannot tell apart) and the switches. The rule is a greedy set cover:
//   repeat: among the components crossed by at least min_slow slow observations not yet
//           explained, and whose crossings are at least min_purity slow (of all the
//           observations crossing it, slow and fast), take the one that explains the most;
//           ties go to the purer one, then to a cable over a switch (the smaller part).
//   stop:   when no component qualifies, or max_suspects are named.
// A switch whose every cable is slow explains more than any one of its cables and is named
// itself; one bad cable explains its observations alone, while each switch it touches is crossed
// by many fast ones. Components crossed by exactly the same observations cannot be told apart:
// they are listed together as alternatives. Both directions of one cable named: one suspect.
#include <cstdint>
#include <string>
#include <vector>

#include "cluster/outliers.hpp"
#include "cluster/summary.hpp"
#include "core/finding.hpp"
#include "core/json.hpp"
#include "fabric/model.hpp"

namespace fabscope::cluster {

// Where one rank sits in the fabric: its HCA node and port, found by LID (node -1: unknown).
struct HostPort {
  int node = -1;
  int port = 0;
  std::uint16_t lid = 0;
};

// The rank's port in the fabric: the one named `preferred` (the port the pair engine used,
// "mlx5_0:1"), else its first ACTIVE port with a LID. why gets the reason when node is -1 (no
// InfiniBand port, a LID the fabric does not have, a node GUID that does not match).
HostPort find_host(const fabric::Subnet& s, const std::vector<IbPortFact>& ports, const std::string& preferred,
                   std::string* why);

struct LocalizeOptions {
  std::size_t min_slow = 2;      // slow observations a component must explain
  double min_purity = 0.75;      // slow / (slow + fast) among its crossings
  std::size_t max_suspects = 8;
  std::size_t max_alternatives = 4;
  std::size_t max_notes = 20;
};

enum class SuspectKind { Cable, HostCable, Switch, Uplinks };
const char* to_string(SuspectKind k);  // "cable", "host_cable", "switch", "uplinks"

struct Suspect {
  SuspectKind kind = SuspectKind::Cable;
  // Cable / HostCable: the two ends (a -> b for one direction; both_directions when both were
  // named). Switch: a_node only.
  int a_node = -1, a_port = 0, b_node = -1, b_port = 0;
  bool both_directions = false;
  std::string name;                      // "S-leaf03:33 -> S-spine01:4", "S-leaf03"
  std::string cable;                     // what both directions share ("" for a switch)
  std::size_t explained = 0;             // slow observations it was picked for
  std::size_t slow_crossing = 0;         // slow observations crossing it (all)
  std::size_t fast_crossing = 0;         // fast observations crossing it
  std::vector<std::string> alternatives; // crossed by exactly the same observations
  std::vector<std::pair<int, int>> examples;  // slow (sender, receiver) ranks, a few
  int host_rank = -1;                    // HostCable: the rank on the HCA end
};

struct Localization {
  bool attempted = false;
  std::string why_not;                   // when not attempted
  std::string fabric_source;             // the sweep's source / file
  double threshold_gbps = 0;
  std::size_t observations = 0;          // routed directions
  std::size_t slow = 0, fast = 0;
  std::size_t unrouted = 0;              // directions whose route could not be computed
  std::size_t unexplained = 0;           // slow observations no suspect explains
  std::vector<Suspect> suspects;         // in the order picked
  std::vector<std::string> notes;        // hosts not found, routes that break (bounded)
};

// hosts: indexed by rank (node -1 = not in the fabric). threshold: a direction below it is slow.
Localization localize(const fabric::Subnet& s, const std::vector<HostPort>& hosts,
                      const std::vector<PairResult>& pairs, double threshold_gbps, const LocalizeOptions& opts = {});

// RoCE / Ethernet: where each rank's NIC is cabled (its LLDP neighbour: the top-of-rack switch and
// its port; empty switch = unknown). The path between two hosts is only known to its first and
// last switch: ECMP spreads flows over the uplinks, so the components are each host's cable (both
// directions), each top-of-rack switch, and each switch's uplinks as one group per direction
// (out of the rack, into the rack), crossed by every pair between two racks.
struct TorPlace {
  std::string sw;    // the neighbour's system name (or chassis id)
  std::string port;  // its port id / description
};
Localization localize_by_switch(const std::vector<TorPlace>& places, const std::vector<PairResult>& pairs,
                                double threshold_gbps, const LocalizeOptions& opts = {});

// cluster.slow_fabric_link (a switch-to-switch cable) and cluster.slow_switch findings with the
// route evidence; host cables are the slow node's (cluster.slow_node says it) and get none.
std::vector<Finding> localization_findings(const Localization& l, const std::vector<std::string>& names);

json localization_json(const Localization& l, const std::vector<std::string>& names);

}  // namespace fabscope::cluster
