#pragma once
// Collecting the subnet from a local InfiniBand port through rdma-core's libibumad, opened with
// dlopen, and fabscope's own MAD engine (umad.hpp): discovery by directed route (discover.hpp),
// every port's PortInfo, counters, the subnet managers' SMInfo, and routes through the switches'
// forwarding tables.
// Several MADs are in flight at once (bounded in all and per destination, the destinations taken in
// turn), each with a timeout and retries; a node that does not answer is named in a note and the
// sweep goes on.
#include <cstdint>
#include <string>
#include <vector>

#include "fabric/model.hpp"

namespace fabscope::fabric {

// The most MADs fabscope keeps in flight (MadEngine::kMaxInflight, umad.hpp): far more than a
// fabric's management agents answer at once, few enough that their answers fit the receive queue.
// `fabric --max-inflight` and `--max-smps` refuse more; the engine takes a larger value as this.
constexpr int kMaxMadsInFlight = 256;
// MADs in flight to one destination by default (MadEngine::kDefaultPerDestination).
constexpr int kMadsPerDestination = 4;

struct SweepOptions {
  std::string ca;           // "mlx5_0"; "" = the first InfiniBand device with an active port
  int port = 0;             // 0 = the first active port of that device
  int max_smps = 16;        // SMPs in flight during discovery
  int max_inflight = 64;    // PMA (counter) MADs in flight (at most kMaxMadsInFlight)
  // MADs in flight to one destination (a LID, or a directed route), under max_smps/max_inflight:
  // the destinations take turns, so the window spreads over many switches' management agents
  // (MadEngine::kDefaultPerDestination; bench/RESULTS.md, "MADs scheduled by destination").
  int max_per_dest = kMadsPerDestination;
  int timeout_ms = 100;     // per MAD
  int retries = 3;          // per MAD
  bool counters = true;     // read PortCounters (+ Extended where supported) of every port
  // Read every switch's LinearForwardingTable into Node::lft (SwitchInfo for LinearFDBTop, then
  // blocks 0..top/64, max_smps in flight): what route_from_lfts (routes.hpp) computes routes from.
  bool routes = false;
};

// Why there is no sweep: thrown as fabscope::Error with one of these messages' meaning, so the
// command can say what to do. NoLibrary: "no InfiniBand management access on this node
// (libibumad.so.3 not found: install ...)"; NoDevice: no InfiniBand port (RoCE-only nodes:
// "MAD-based discovery is InfiniBand-only"); NoPermission: /dev/infiniband/umadN not openable as
// this user (what access is needed).
struct AccessError : Error {
  enum class Kind { NoLibrary, NoDevice, NoPermission, Failed };
  Kind kind;
  AccessError(Kind k, const std::string& what) : Error(what), kind(k) {}
};

// The whole subnet, seen from one local port. Throws AccessError when the fabric cannot be
// reached at all; a partial fabric (nodes that did not answer) is a result with notes.
Subnet sweep(const SweepOptions& opt);

// Counters only, for a second sample over an interval: re-reads the counters of every port of
// s (same nodes and ports; what does not answer gets nullopt and a note).
void read_counters(Subnet& s, const SweepOptions& opt);

// The path the forwarding tables give from node src (an HCA or switch of s; for an HCA, port
// src_port, 0 = its first active port) to destination LID dst_lid, hop by hop, like ibtracert:
// reads each switch's LinearForwardingTable block on the way (the same walk as route_from_lfts,
// routes.hpp, on live tables). Throws Error naming the switch where the route breaks (no entry,
// a loop, a down port, a table that cannot be read).
std::vector<Hop> trace_route(const Subnet& s, int src, std::uint16_t dst_lid, const SweepOptions& opt,
                             int src_port = 0);

}  // namespace fabscope::fabric
