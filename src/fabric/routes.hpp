#pragma once
// Routes computed from the forwarding tables a sweep saved (Node::lft), without the fabric: what
// `fabscope cluster` uses to say which cables and switches each measured pair crossed. Pure.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fabric/model.hpp"

namespace fabscope::fabric {

// The path from port src_port of node src (0: its first Active port with a link; a switch starts
// at itself) to the port owning dst_lid, hop by hop like ibtracert, read from the switches' saved
// LFTs. Only a LID of the source port itself is a route of one hop and no link; another port of
// the same HCA is reached through the fabric, by its own cable. Throws fabscope::Error naming the
// node where the route breaks: a switch without a saved LFT, no entry for the LID, a loop, a down
// port or a port without a link, a route that ends at a node (or a port of it) not owning the
// LID, more than 64 hops.
std::vector<Hop> route_from_lfts(const Subnet& s, int src, int src_port, std::uint16_t dst_lid);

// Whether every switch of s has a saved LFT.
bool has_routes(const Subnet& s);

// The hop walk both route_from_lfts and the live trace_route (sweep.hpp) run: from src (port
// src_port of an HCA or router, 0 = its first Active port with a link; a switch starts at itself
// and src_port is not used) towards dst_lid, asking out_port for each switch on the way.
// out_port(node, lid) returns the output port of switch `node` for `lid`: 0 the switch itself,
// 0xff no entry; it throws fabscope::Error when it cannot say (the table not saved, not
// readable). `who` starts the messages about the arguments ("trace_route").
using OutPortLookup = std::function<int(int node, std::uint16_t lid)>;
std::vector<Hop> walk_route(const Subnet& s, int src, int src_port, std::uint16_t dst_lid,
                            const OutPortLookup& out_port, const std::string& who);

}  // namespace fabscope::fabric
