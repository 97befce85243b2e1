#pragma once
// `fabscope cluster --fabric-from RANK`: that rank (a node with management access to the
// InfiniBand fabric) sweeps it with its forwarding tables and sends it to rank 0, which routes
// the pairs through it (localize.hpp). Every rank takes part: a header gathered from every rank
// (the sweeping rank's says how many chunks follow, or why there is no sweep), rank 0 broadcasts
// the chunk count, then one gather per chunk of at most kFabricChunkBytes (the exchange bounds
// every message); at most kMaxFabricBytes in all.
#include <functional>
#include <memory>
#include <string>

#include "cluster/exchange.hpp"
#include "fabric/model.hpp"

namespace fabscope::cluster {

constexpr std::size_t kFabricChunkBytes = 3u << 20;
constexpr std::size_t kMaxFabricBytes = 256u << 20;

struct SharedFabric {
  std::shared_ptr<const fabric::Subnet> fabric;  // rank 0 only; null on failure
  std::string error;                             // rank 0: why there is none
};

// sweep: what the sweeping rank runs (fabric::sweep with routes, no counters, in the command;
// replaceable in tests). Returns the fabric on rank 0, an empty result elsewhere.
// chunk_bytes: the chunk size (tests use small ones).
SharedFabric share_fabric(Exchange& ex, int from_rank, const std::function<fabric::Subnet()>& sweep,
                          std::size_t chunk_bytes = kFabricChunkBytes);

}  // namespace fabscope::cluster
