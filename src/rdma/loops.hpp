#pragma once
// The measurement of one size over connected resources (resources.hpp): the bandwidth loop
// (every QP kept tx_depth deep, one completion per batch of sends) and the latency ping-pong
// (one message in flight on QP 0). Both poll, under the watchdog, and speak the per-size
// messages with the peer (size_protocol.hpp); the two sides' results are merged by merge.hpp.
// Internal to fabscope_rdma (engine.cpp drives it).
#include <chrono>
#include <cstdint>
#include <optional>

#include "rdma/control.hpp"
#include "rdma/resources.hpp"
#include "rdma/size_protocol.hpp"
#include "rdma/types.hpp"
#include "rdma/watchdog.hpp"

#ifdef FABSCOPE_RDMA_HEADERS

namespace fabscope::rdma {

class Loops {
 public:
  // client: the side that initiates (the client of the session).
  Loops(const Options& o, Resources& res, Watchdog& wd, bool client)
      : o_(o), res_(res), wd_(wd), client_(client) {}

  // The peer's buffer (its buf message), for every size.
  void set_remote(const BufKey& k) { remote_ = k; }
  // Before each size (both sides, before "ready"): clear inboxes, fill outboxes with the
  // size's pattern, post receives for SEND.
  void prepare(std::uint64_t size);
  // The measurement of one size, ending with both sides' done messages swapped.
  SizeResult run(std::uint64_t size, Control& ctl);
  // The receiving side's check: the inbox holds the pattern the peer wrote (WRITE/SEND) or
  // this side read (READ).
  bool verify(std::uint64_t size) const;

 private:
  using Clock = std::chrono::steady_clock;
  struct BwRun;
  struct PingPong;

  SizeResult bw(std::uint64_t size, SizeProtocol& proto);
  bool qp_posted_all(const BwRun& run, std::size_t q, bool time_up) const;
  bool post_sends(BwRun& run, std::uint64_t size, bool time_up);
  int poll_batch(ibv_cq* cq, ibv_wc* wcs);
  bool reap_sends(BwRun& run);
  bool reap_recvs(BwRun& run);
  SizeResult measured(std::uint64_t size, const BwRun& run) const;
  SizeResult finish_bw(std::uint64_t size, const BwRun& run, SizeProtocol& proto);

  SizeResult lat(std::uint64_t size, SizeProtocol& proto);
  SizeResult lat_client(std::uint64_t size, PingPong& pp, SizeProtocol& proto);
  SizeResult lat_server(std::uint64_t size, PingPong& pp, SizeProtocol& proto);

  void post(int q, std::uint64_t size, bool signaled, std::uint64_t wr_id, bool inl);
  void post_recv(int q);
  Clock::time_point deadline(Clock::time_point start) const;
  bool sends_here() const { return client_ || o_.bidirectional; }
  bool receives_here() const { return o_.op == Op::Send && (!client_ || o_.bidirectional); }

  const Options& o_;
  Resources& res_;
  Watchdog& wd_;
  bool client_;
  BufKey remote_;
  bool recvs_posted_ = false;
};

}  // namespace fabscope::rdma

#endif
