#pragma once
// The intended cabling of a subnet (`fabric --plan FILE`, `--save-plan FILE`) and what the sweep
// found against it: pure (docs/fabric.md "Cabling plan").
//
// A plan names each cable by its two ends, node and port. A node is named by its GUID
// ("0x0002c903000e0b72") or by its node description ("S-leaf01", "gpu07 mlx5_0"); the names that
// ibnetdiscover writes for nodes it knows no description of ("S-0002c90300a1b2c3",
// "H-0002c903000e0b72") are GUIDs too. Two formats are read:
//   - CSV: one cable a line, "NODE:PORT,NODE:PORT" ('#' starts a comment, also after a cable; the
//     port is after the last ':' of each end, so a description may hold ':' but not ',' or '#');
//   - ibnetdiscover's topology output (what ibdiagnet also takes): "Switch N "name"" / "Hca N
//     "name"" blocks with "[port] "remote"[rport]" lines; each cable is listed from both ends.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/finding.hpp"
#include "fabric/model.hpp"

namespace fabscope::fabric {

struct PlanEnd {
  std::string node;  // as written: a description or a GUID text
  int port = 0;
};

struct PlanCable {
  PlanEnd a, b;
  int line = 0;  // where the plan says it (the first time)
};

struct Plan {
  std::string source;
  std::vector<PlanCable> cables;  // each once, whichever format listed it twice
};

// Throws fabscope::Error "<source>:<line>: ..." for a line that is neither format's, a port out of
// 1..254, a cable from a port to itself, or a port planned to two different peers.
Plan parse_plan(std::string_view text, const std::string& source);
Plan load_plan(const std::string& path);

// The sweep's cables as a plan (CSV), nodes named by description where it is unique, printable
// and has no ',', by GUID otherwise. Cables to a port without PortInfo are kept.
std::string plan_csv(const Subnet& s);

// fabric.plan_node_missing (a planned node not found), fabric.plan_cable_missing (both planned
// ends free), fabric.plan_miswired (a planned end cabled elsewhere: wrong port or wrong node),
// fabric.plan_cable_extra (a cable between two ports the plan does not mention).
std::vector<Finding> judge_plan(const Subnet& s, const Plan& plan);

}  // namespace fabscope::fabric
