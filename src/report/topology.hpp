#pragma once
// The fabric section's picture as values (pure: render_fabric.cpp only draws it). Tiers from the
// hosts up, as `fabscope fabric` names its tiers (judge.hpp): HCAs (and routers) are tier 0, a
// switch is one more than the lowest tier among its neighbours, so tier 1 holds the switches
// with HCAs (leaves), tier 2 the switches linked to leaves only (spines), and so on; a switch no
// HCA reaches is drawn in a tier of its own above the rest. Every cable of the sweep is one
// TopoLink with its state as drawn:
//   active      both ends Active at the width and speed their tier usually runs at
//   degraded    both ends Active, narrower or slower than the tier's usual (fabric's
//               link_degraded and link_mixed_speed); a whole tier below what its ends report
//               as supported is the fabric's design (or ibsim), not a degraded link
//   not active  an end Down, Init or Armed
//   unknown     an end's PortInfo was not read
// and, apart from the state, its error counters above zero and the fabric findings naming it.
//
// Suspects come from a fabscope.cluster input whose `localization` was made with this fabric
// (localization_mismatch says when it was not); the leaf order of a cluster's heat map from its
// nodes' ib_ports (leaf_groups).
#include <cstdint>
#include <string>
#include <vector>

#include "core/finding.hpp"
#include "report/heatmap.hpp"
#include "report/model.hpp"
#include "fabric/model.hpp"

namespace fabscope::report {

// Up to this many switches the picture draws each; beyond, one box per tier.
constexpr std::size_t kMaxWholeSwitches = 64;

enum class LinkLook { Active, Degraded, NotActive, Unknown };
const char* to_string(LinkLook l);  // "active", "degraded", "not-active", "unknown"

struct TopoLink {
  int lo_node = -1, lo_port = 0, hi_node = -1, hi_port = 0;  // lo: the end nearer the HCAs
  std::string name;                 // "S-leaf1:7 <-> S-spine1:1", as fabric's findings name it
  LinkLook look = LinkLook::Active;
  int width = 0;                    // lanes (the narrower end's); 0 unknown
  fabric::Speed speed = fabric::Speed::Unknown;
  int could_width = 0, tier_width = 0;
  fabric::Speed could_speed = fabric::Speed::Unknown, tier_speed = fabric::Speed::Unknown;
  bool below_capability = false;
  std::string lo_state, hi_state;   // "Active", "Down", ..., "?" (PortInfo not read)
  std::vector<std::string> errors;  // "S-leaf1:7 SymbolErrorCounter=12": error counters above 0
  std::uint64_t error_total = 0;    // their sum (saturating)
  std::vector<std::string> finding_ids;  // fabric --json findings whose subject is this link
  std::vector<int> suspects;        // numbers (from 1) of the suspects on it
  bool host_link = false;           // one end is not a switch
  bool erroring() const { return error_total > 0 || !finding_ids.empty(); }
  bool problem() const { return look != LinkLook::Active || erroring(); }
};

struct TopoSwitch {
  int node = -1;
  int tier = 1;
  std::string name;
  std::size_t hosts = 0;          // HCAs and routers cabled to it
  std::size_t host_problems = 0;  // its host links that are not active, degraded or erroring
  std::vector<int> suspects;      // switch suspects
  std::vector<int> host_suspects; // host cable suspects on its host links
};

struct Topology {
  std::vector<TopoSwitch> switches;     // drawing order: tier by tier, by name within a tier
  std::vector<std::vector<int>> tiers;  // tiers[t - 1]: indexes into switches of tier t
  bool top_unreached = false;           // the last tier holds switches no HCA reaches
  std::vector<int> switch_of_node;      // node index -> index into switches; -1 not a switch
  std::vector<int> tier_of_node;        // 0 HCAs and routers, 1.. switches
  std::vector<TopoLink> links;          // every cable, in the subnet's link order
  std::size_t hosts = 0;                // HCAs and routers
  std::size_t hosts_alone = 0;          // of them, not cabled to a switch
  bool aggregated() const { return switches.size() > kMaxWholeSwitches; }
  int link_at(int node, int port) const;  // index into links of the cable at that port, -1 none
  std::vector<int> link_index;            // per (node, port), flattened (see link_at)
  std::vector<std::size_t> port_base;     // per node: its first entry in link_index
};

// findings: fabric --json's (empty for a --save file).
Topology build_topology(const fabric::Subnet& s, const std::vector<Finding>& findings);

// Links between two tiers (0 = the HCAs), for the aggregated picture.
struct TierLinks {
  int lo_tier = 0, hi_tier = 0;
  std::size_t links = 0, degraded = 0, not_active = 0, unknown = 0, erroring = 0;
  std::vector<int> suspects;
};
std::vector<TierLinks> tier_links(const Topology& t);

// The problem links, worst first (not active, degraded, unknown, then by errors), at most max.
std::vector<int> problem_links(const Topology& t, std::size_t max, std::size_t* total = nullptr);

// "" when the cluster's localization was made on this fabric: attempted, its fabric_source is
// this sweep's source, and every suspect names nodes and ports that exist here under the same
// names (a suspect's name is rebuilt from this fabric's node names and compared), and its
// cables are cables here. Else why not, naming the first suspect that does not fit.
std::string localization_mismatch(const fabric::Subnet& s, const cluster::SavedLocalization& l);

// Marks the suspects on the topology, numbered from first (1 for the first cluster's).
void mark_suspects(Topology& t, const std::vector<cluster::SavedSuspect>& suspects, int first);

// The ranks of a cluster grouped by their leaf switch, in the topology's leaf order. A rank is
// placed by its first ACTIVE InfiniBand port with a LID (as cluster --fabric does): the fabric's
// HCA holding that LID (its node GUID equal to the one the node reported, where it reported
// one), then the switch at the other end of that HCA port. Empty, with why, when no rank is
// placed or a rank's LID names a switch or an HCA of another GUID here (another fabric, or LIDs
// reassigned since the sweep). Ranks not placed are left out (the heat map puts them last).
std::vector<HeatGroup> leaf_groups(const cluster::SavedResult& c, const fabric::Subnet& s, const Topology& t,
                                   std::string* why);

// RoCE: the ranks grouped by the top-of-rack switch they reported over LLDP (tor_switch), in
// natural name order; empty when no node reported one.
std::vector<HeatGroup> tor_groups(const cluster::SavedResult& c);

// "S-leaf9" before "S-leaf10": digit runs compare as numbers.
bool natural_less(const std::string& a, const std::string& b);

}  // namespace fabscope::report
