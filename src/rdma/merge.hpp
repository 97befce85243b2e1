#pragma once
// The result of one size from both sides' measurements (pure). Each side measures what it can
// see (the poster times its sends, a receiver counts what arrived, the target of a WRITE or
// READ sees nothing); after the size they swap their results in "done" messages
// (size_protocol.hpp) and each reports the merge.
#include <optional>

#include "rdma/types.hpp"

namespace fabscope::rdma {

// The part this side played in a bandwidth size.
struct BwRole {
  bool sending = false;    // posted the WRITEs, READs or SENDs
  bool receiving = false;  // took SENDs on its receive queue
  bool bidirectional = false;
};

// mine: this side's measurement, rates filled, data_verified from its own check of a READ or
// of SENDs received (nullopt when it had none); theirs: the peer's done. written_check: this
// side's check of the data the peer WROTE into it, made after the peer's done came (nullopt
// when the peer wrote nothing here).
//   neither sending nor receiving: the initiator's measurement, with the written check if any
//   else: this side's, data_verified from the written check, else its own, else the peer's;
//         a receiver alone times its count by the sender's seconds (its first completion came
//         only after the first message crossed); bidirectional: both sides' sum, the longer time
SizeResult merge_bw(SizeResult mine, const SizeResult& theirs, const BwRole& role,
                    std::optional<bool> written_check);

// A latency size: the client reports its own samples, the server the client's measurement.
// The other side's byte count is the check (peer_total_bytes), except for READ, where the
// server stays idle and counts nothing.
SizeResult merge_lat(const SizeResult& mine, const SizeResult& theirs, bool client, Op op);

}  // namespace fabscope::rdma
