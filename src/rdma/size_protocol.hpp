#pragma once
// The messages of one size on the control connection (rdma.cpp's "per size" line), after
// run/ready started it:
//   {"progress": n}  while a side sends: the test is alive (the peer's watchdog ticks on it)
//   {"sent": n}      a sender whose sends all completed: the receiver of SENDs expects n
//   {"done": r}      each side at the end: its SizeResult r and "sent_messages"
// An {"error": finding} from the peer throws PeerFailure wherever it is read.
#include <cstdint>
#include <optional>

#include "core/json.hpp"
#include "rdma/control.hpp"
#include "rdma/types.hpp"
#include "rdma/watchdog.hpp"

namespace fabscope::rdma {

class SizeProtocol {
 public:
  SizeProtocol(Control& ctl, Watchdog& wd) : ctl_(ctl), wd_(wd) {}

  void send_progress(std::uint64_t n);
  void send_sent(std::uint64_t n);
  void send_done(const SizeResult& r, std::uint64_t sent_messages);

  // Takes what the peer sent without waiting.
  void take();
  // Waits for the peer's done (its progress messages tick the watchdog on the way).
  const json& await_done();

  // The peer's count of sent messages: from its "sent", else from its done; nullopt before.
  const std::optional<std::uint64_t>& peer_sent() const { return peer_sent_; }
  // The peer's done; null before it came.
  const json& peer_done() const { return peer_done_; }

 private:
  void absorb(const json& m);

  Control& ctl_;
  Watchdog& wd_;
  std::optional<std::uint64_t> peer_sent_;
  json peer_done_;
};

}  // namespace fabscope::rdma
