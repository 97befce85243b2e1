#pragma once
// Discovery of the subnet by directed route, breadth first from the local port: NodeInfo over
// each new path; for a node not seen before, NodeDescription and PortInfo (a switch: ports 0..N;
// an HCA or router: the port each path reached it by); then NodeInfo over every switch port whose
// link is up and whose far end is not known yet. A GUID seen before links the two ports instead
// (NodeInfo's LocalPortNum is the far port), so a loop or a node reached twice ends there.
//
// The walk goes level by level (all paths of n hops, then n + 1): each node keeps a shortest
// path, the first in the order of the ports (the same fabric gives the same paths whatever order
// the answers come in), and within a level every SMP is in flight together, spread over the
// nodes. It knows nothing of libibumad: the SMPs go through an SmpTransport (the MAD engine in
// sweep.cpp, a fake fabric in the unit tests).
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "fabric/model.hpp"

namespace fabscope::fabric {

// The longest directed route: a MAD's InitialPath holds 64 bytes, the first unused
// (IB_SUBNET_PATH_HOPS_MAX).
constexpr int kMaxDrHops = 63;

struct SmpTransport {
  using OnReply = std::function<void(std::span<const std::uint8_t> data)>;  // the 64 bytes of attribute data
  using OnFail = std::function<void(const std::string& why)>;
  // Queues a directed-route Get of attr (modifier mod) along path, one output port per hop. One
  // of on_reply/on_fail is called during run(); either may submit more.
  std::function<void(std::uint16_t attr, std::uint32_t mod, const std::vector<std::uint8_t>& path,
                     OnReply on_reply, OnFail on_fail)>
      submit;
  // Sends until everything submitted is answered or has failed.
  std::function<void()> run;
};

// The subnet as the walk found it: nodes ordered switches, HCAs, routers, each by GUID; ports,
// LIDs, remote ends, dr_path; notes on ports and nodes that did not answer, and in Subnet::notes
// for every port whose link is up but whose far end was not discovered. source, counters, SMs
// and forwarding tables are the caller's. Throws AccessError (Failed) when the local port does
// not answer NodeInfo: then there is no fabric at all.
Subnet discover(const SmpTransport& t);

}  // namespace fabscope::fabric
