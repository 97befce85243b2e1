#pragma once
// Judging a swept subnet (pure: values in, findings out). Every finding id is "fabric.*",
// documented in docs/checks.md; a fact that belongs to a cable (its width, speed, MTU, error
// counters) is reported once per link with both ends named ("S-leaf1:31 <-> S-spine:1").
#include <optional>
#include <string>
#include <vector>

#include "core/finding.hpp"
#include "core/finding_registry.hpp"
#include "core/json.hpp"
#include "fabric/model.hpp"
#include "fabric/plan.hpp"
#include "fabric/route_checks.hpp"
#include "fabric/thresholds.hpp"

namespace fabscope::fabric {

// The ids judge() reports (family "fabric", docs/checks.md), with the highest severity each is
// reported with.
const std::vector<FindingInfo>& fabric_checks();

// One cable as judged: both ends active with PortInfo read. "Could be" is iblinkinfo's: the
// widest width and fastest speed both ends support (LinkWidthSupported/LinkSpeedSupported of
// both, intersected). A tier is the pair of levels of the two ends (HCAs 0, a switch one more
// than the lowest level it reaches): "HCA<->leaf", "leaf<->spine", ...; its usual width and speed
// are those most of its links run at (the higher on a tie).
struct LinkFact {
  int node = -1, port = 0;              // the end nearer the HCAs (then the lower node index)
  int peer = -1, peer_port = 0;
  std::string name;                     // "S-leaf1:31 <-> S-spine:1"
  std::string tier;
  int width = 0;                        // lanes, the narrower end's
  Speed speed = Speed::Unknown;         // the slower end's
  int could_width = 0;                  // 0: unknown (a mask not read)
  Speed could_speed = Speed::Unknown;
  int tier_width = 0;
  Speed tier_speed = Speed::Unknown;
  int mtu = 0;                          // the smaller end's active MTU, 0 unknown
  // Either dimension (iblinkinfo's marks). judge() weighs width and speed each on its own: a
  // dimension is degraded only when it is below both could_* and tier_* (docs/fabric.md).
  bool below_capability = false;        // width < could_width or speed < could_speed
  bool below_tier = false;              // width < tier_width or speed < tier_speed
};
std::vector<LinkFact> link_facts(const Subnet& s);

// Levels: HCAs (and routers) 0; a switch one more than the lowest level among its neighbours; a
// switch no HCA reaches -1. Only links whose ends are both known count.
std::vector<int> levels(const Subnet& s);
json to_json(const LinkFact& f);

struct JudgeOptions {
  Thresholds thresholds;                // ibqueryerrors' file; none: every threshold is 0
  // A second sample: counters read interval_s seconds before `now` (same subnet, nodes matched
  // by GUID). With it, error counters are judged by their growth over the interval, not totals.
  std::optional<Subnet> before;
  double interval_s = 0;
  // PortXmitWait counts ticks, a device-specific multiple of the symbol time (IBA: PortSamples-
  // Control.Tick). With the tick's length known, the waited time is judged as a fraction of the
  // interval; unknown (0), the growth is reported in ticks per second only.
  double xmit_wait_tick_ns = 0;
  double xmit_wait_fraction = 0.05;     // warn above this share of the interval spent waiting
  std::optional<Subnet> expected;       // an earlier --save: topology to compare with
  std::optional<Plan> plan;             // --plan: the intended cabling (plan.hpp)
  // check_routes(now) when the caller already has it (for the JSON or the human view too);
  // otherwise judge() computes it where every switch has a table.
  std::optional<RouteCheck> routes;
};

// Most severe first; within a severity in the order of fabric_checks(), then of the subnet.
std::vector<Finding> judge(const Subnet& now, const JudgeOptions& opt);

// The name of port `port` of node n, "S-leaf1:31"; of a link, "a:1 <-> b:3".
std::string port_name(const Subnet& s, int node, int port);

}  // namespace fabscope::fabric
