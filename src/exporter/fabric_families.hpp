#pragma once
// Metric families of the InfiniBand subnet (`fabscope exporter --fabric`): per port counters, per
// link state and speed, the subnet managers, counts, and the collector's own health. Pure: the
// collector (fabric_collector.hpp) sweeps and hands over a FabricView; nothing here does I/O.
// Every name, type and label is documented in docs/metrics.md.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/finding.hpp"
#include "core/metrics.hpp"
#include "fabric/model.hpp"

namespace fabscope::exporter {

// One end of a cable, by what survives a re-discovery: the node GUID and port number.
struct LinkEnd {
  std::uint64_t node_guid = 0;
  int port = 0;
  std::string node_name;
  friend bool operator<(const LinkEnd& a, const LinkEnd& b) {
    return a.node_guid != b.node_guid ? a.node_guid < b.node_guid : a.port < b.port;
  }
  friend bool operator==(const LinkEnd& a, const LinkEnd& b) { return a.node_guid == b.node_guid && a.port == b.port; }
};
// A cable with its ends in a stable order (the lower GUID/port first), so its series keep the
// same labels from one discovery to the next whichever way the sweep walked it.
struct LinkKey {
  LinkEnd a, b;
  friend bool operator<(const LinkKey& x, const LinkKey& y) { return x.a == y.a ? x.b < y.b : x.a < y.a; }
};
// The links of s, keyed.
std::vector<LinkKey> link_keys(const fabric::Subnet& s);

// What the collector did, per kind of collection ("discovery": a full sweep; "counters": a
// counters-only re-read of every port).
struct CollectionStats {
  double interval_seconds = 0;           // configured
  std::uint64_t runs_total = 0;          // attempts
  std::uint64_t errors_total = 0;        // attempts that produced nothing (no access, a throw)
  double last_duration_seconds = 0;      // of the last attempt
  double last_success_timestamp_seconds = 0;  // Unix time; 0 never
  std::uint64_t mads_sent_total = 0;     // Subnet::mads_sent of the completed collections
  std::uint64_t mad_timeouts_total = 0;  // Subnet::mads_timed_out of the completed collections
};

struct FabricView {
  std::shared_ptr<const fabric::Subnet> subnet;  // the last complete collection; null before the first
  // Links seen by an earlier discovery and absent from subnet: a pulled cable stays visible as
  // a down link instead of its series vanishing.
  std::vector<LinkKey> missing_links;
  CollectionStats discovery, counters;
  double xmit_wait_tick_ns = 0;          // PortXmitWait tick length as configured; 0 unknown
};

// Every fabscope_fabric_* family. Check verdicts (the fabric.* findings) are not here: they join
// the node's checks in fabscope_check_status (check_families).
std::vector<MetricFamily> fabric_families(const FabricView& v);

}  // namespace fabscope::exporter
