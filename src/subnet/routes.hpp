#pragma once
// Routes computed from the forwarding tables a sweep saved (Node::lft), without the fabric: what
// `fabscope cluster` uses to say which cables and switches each measured pair crossed. Pure.
#include <cstdint>
#include <vector>

#include "subnet/model.hpp"

namespace fabscope::subnet {

// The path from port src_port of node src (0: its first Active port with a link; a switch starts
// at itself) to the node owning dst_lid, hop by hop like ibtracert, read from the switches' saved
// LFTs. Throws fabscope::Error naming the node where the route breaks: a switch without a saved
// LFT, no entry for the LID, a loop, a down port or a port without a link, a route that ends at a
// node not owning the LID, more than 64 hops.
std::vector<Hop> route_from_lfts(const Subnet& s, int src, int src_port, std::uint16_t dst_lid);

// Whether every switch of s has a saved LFT.
bool has_routes(const Subnet& s);

}  // namespace fabscope::subnet
