#pragma once
// Judging the routes of a subnet from its switches' forwarding tables (Node::lft, read by
// `fabric --routes` or kept in a saved sweep): pure, values in, findings out (docs/checks.md,
// "Routing").
//
// Credit loops. A packet holds a buffer of the link it arrived by until the next link has room
// for it: the link it waits for depends on the link it holds. Every route to every destination
// LID adds such dependencies between the links it crosses (the channel-dependency graph of the
// deadlock-freedom literature, Dally and Seitz). A cycle in that graph can deadlock: every link of
// it full, each waiting for the next. The graph here is built from the routes that traffic from
// the HCA ports takes to every LID, on one virtual lane: a routing engine that spreads routes over
// lanes (LASH, DFSSSP, Torus-2QoS) can break a cycle that this check still sees.
//
// Unreachable LIDs. From every switch, every LID of an HCA, router or switch port is followed
// through the tables: no entry, an entry to a down port or a port without a link, a loop, or a
// walk that ends at a node not owning the LID.
//
// Balance. Over every pair (source HCA port, destination HCA port LID), the route leaves each
// switch by one port; each port that leads to another switch counts the routes it carries. A
// switch is unbalanced when its busiest such port carries at least max_ratio times the mean of
// its such ports (every Active port to a switch, those carrying none included) and the mean is at
// least min_mean routes.
#include <cstdint>
#include <string>
#include <vector>

#include "core/finding.hpp"
#include "core/json.hpp"
#include "fabric/model.hpp"

namespace fabscope::fabric {

struct RouteCheckOptions {
  double max_ratio = 2.0;    // busiest switch-to-switch port over the switch's mean
  double min_mean = 4.0;     // fewer routes per port on average: not judged
  std::size_t max_loops = 8; // credit loops named (each with one cycle)
};

struct Channel {             // a link in one direction: leaving node by port
  int node = -1, port = 0;
};

struct CreditLoop {
  std::vector<Channel> cycle;        // the links of one cycle, in the order the packets go
  std::size_t channels = 0;          // links in the strongly connected part it was found in
  std::vector<std::uint16_t> lids;   // destination LIDs whose routes add the cycle's dependencies
};

struct UnreachableLid {
  std::uint16_t lid = 0;
  int node = -1, port = 0;           // who owns it (port 0: a switch)
  std::vector<int> from;             // switches it cannot be reached from (at most 16 kept)
  std::size_t from_count = 0;
  std::string why;                   // the first switch's reason
};

struct PortLoad {
  Channel channel;
  std::uint64_t routes = 0;
};

struct SwitchLoad {
  int node = -1;
  int ports = 0;                     // Active ports to another switch
  std::uint64_t max_routes = 0, total_routes = 0;
  int max_port = 0;
  double ratio() const { return ports && total_routes ? static_cast<double>(max_routes) * ports / static_cast<double>(total_routes) : 0; }
};

struct RouteCheck {
  bool judged = false;               // every switch had a table
  std::size_t switches = 0, destinations = 0, sources = 0;
  std::size_t dependencies = 0;      // edges of the channel-dependency graph
  std::vector<CreditLoop> loops;
  std::size_t loops_found = 0;       // strongly connected parts with a cycle (loops holds max_loops)
  std::vector<UnreachableLid> unreachable;
  std::vector<PortLoad> busiest;     // switch-to-switch ports, most routes first (at most 10)
  std::vector<SwitchLoad> unbalanced;
};

RouteCheck check_routes(const Subnet& s, const RouteCheckOptions& o = {});

// fabric.credit_loop, fabric.lid_unreachable, fabric.routes_unbalanced.
std::vector<Finding> route_findings(const Subnet& s, const RouteCheck& r, const RouteCheckOptions& o = {});

// The "routing" object of `fabric --json` (docs/formats.md).
json to_json(const Subnet& s, const RouteCheck& r);

// A few lines for people: what was judged, the busiest ports.
std::string render_route_check(const Subnet& s, const RouteCheck& r);

}  // namespace fabscope::fabric
