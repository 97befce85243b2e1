#pragma once
// `fabscope fabric` as people and programs read it: the summary of the subnet, the problem
// links, the findings (the same table as every judging command), a route hop by hop; and the
// --json document (the "fabscope.fabric" schema with the judgement added, docs/formats.md).
#include <iosfwd>
#include <string>
#include <vector>

#include "core/finding.hpp"
#include "core/json.hpp"
#include "fabric/judge.hpp"
#include "fabric/route_checks.hpp"
#include "fabric/model.hpp"
#include "fabric/sweep.hpp"

namespace fabscope::fabric {

// Summary (nodes by type, links, subnet managers, sweep), the links some finding singles out
// (both ends with name, port, LID and GUID, never cut), then the findings and a closing count
// line. Lines wrap at words to width (>= 60). compared: the sweep was judged against a saved
// topology (--expect); without one the summary says how missing cables are found.
std::string render_text(const Subnet& s, const std::vector<LinkFact>& facts, const std::vector<Finding>& findings,
                        std::size_t width = 100, bool compared = false);

// to_json(s) plus "link_facts", "checks", "findings", "summary" and "exit_code"; "routing" where
// every switch has a table (routes: check_routes(s) when the caller has it, else computed here).
json fabric_json(const Subnet& s, const std::vector<LinkFact>& facts, const std::vector<Finding>& findings,
                 const RouteCheck* routes = nullptr);
// The same document written as dump_json(fabric_json(...)) writes it, the nodes streamed.
void write_fabric_json(std::ostream& out, const Subnet& s, const std::vector<LinkFact>& facts,
                       const std::vector<Finding>& findings, const RouteCheck* routes = nullptr);
json fabric_json_without_nodes(const Subnet& s, const std::vector<LinkFact>& facts,
                               const std::vector<Finding>& findings, const RouteCheck* routes = nullptr);

// A route like ibtracert: one line per hop with the node, its LID, the ports in and out and the
// link the packet leaves by.
std::string render_route(const Subnet& s, const std::vector<Hop>& hops, std::size_t width = 100);
json route_json(const Subnet& s, const std::vector<Hop>& hops);

}  // namespace fabscope::fabric
