#include "rdma/merge.hpp"

#include <algorithm>

#include "rdma/stats.hpp"

namespace fabscope::rdma {

SizeResult merge_bw(SizeResult mine, const SizeResult& theirs, const BwRole& role,
                    std::optional<bool> written_check) {
  if (!role.sending && !role.receiving) {
    SizeResult r = theirs;  // a passive side reports the initiator's measurement
    r.peer_total_bytes = theirs.total_bytes;
    r.data_verified = written_check ? written_check : theirs.data_verified;
    return r;
  }
  SizeResult& r = mine;
  if (written_check) r.data_verified = written_check;
  if (!r.data_verified) r.data_verified = theirs.data_verified;
  if (role.receiving && !role.sending) {
    // A receiver alone reports its own count over the sender's time (its first completion
    // came only after the first message had crossed).
    if (theirs.seconds > 0) r.seconds = theirs.seconds;
    fill_rates(r);
  }
  r.peer_total_bytes = theirs.total_bytes;
  if (role.bidirectional) {
    r.iterations += theirs.iterations;
    r.total_bytes += theirs.total_bytes;
    r.seconds = std::max(r.seconds, theirs.seconds);
    fill_rates(r);
  }
  return r;
}

SizeResult merge_lat(const SizeResult& mine, const SizeResult& theirs, bool client, Op op) {
  // The client measured; the server counted the messages it echoed.
  SizeResult r = client ? mine : theirs;
  if (op != Op::Read) r.peer_total_bytes = client ? theirs.total_bytes : mine.total_bytes;
  return r;
}

}  // namespace fabscope::rdma
