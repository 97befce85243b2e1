#include "rdma/loops.hpp"

#ifdef FABSCOPE_RDMA_HEADERS

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <vector>

#include "rdma/merge.hpp"
#include "rdma/stats.hpp"
#include "rdma/wr_id.hpp"

namespace fabscope::rdma {

namespace {

// Bandwidth: one send in kCqModeration is signalled (fewer completions to poll); a queue
// shallower than that signals every tx_depth-th, or it would fill with unsignalled sends.
constexpr int kCqModeration = 64;
// Completions taken per ibv_poll_cq.
constexpr int kPollBatch = 32;
// A pass that moved nothing is idle. A receiver still waiting for the sender's count looks at
// the control connection every kIdleControlPolls idle passes (a recv call each time); the
// watchdog is checked every kIdleWatchdogPolls.
constexpr unsigned kIdleControlPolls = 64;
constexpr unsigned kIdleWatchdogPolls = 1024;
// A sender reads the clock for its heartbeat once every 256 passes (a mask: 256 - 1).
constexpr std::uint64_t kHeartbeatPassMask = 255;
// A progress message a second keeps the idle peer's watchdog (10 s by default) fed.
constexpr auto kHeartbeat = std::chrono::seconds(1);
// Latency: the spin loops check the watchdog and take the peer's messages every kSpinChecks
// spins; the client notes its progress and looks at the heartbeat every 256 round trips.
constexpr unsigned kSpinChecks = 4096;
constexpr std::uint64_t kLatNoteMask = 255;
// Every latency sample is kept for the percentiles; a long -D run stops at this many round
// trips (80 MB of samples), and reserves 2^16 of them up front (-n runs: exactly n).
constexpr std::uint64_t kMaxLatencySamples = 10'000'000;
constexpr std::size_t kDurationSamplesReserve = std::size_t{1} << 16;
// A latency message is posted on QP 0, one at a time: its completion covers itself.
constexpr std::uint64_t kLatWrId = pack_send_wr_id(0, 1);

// The byte pattern of one size on one QP: both sides compute it, the receiver checks it.
std::uint8_t pattern(std::uint64_t size, int qp, std::uint64_t i) {
  return static_cast<std::uint8_t>((i * 131 + size * 7 + static_cast<std::uint64_t>(qp) * 29 + 1) & 0xff);
}

// The latency loops' marker: never 0 (a cleared inbox), never the previous iteration's value.
std::uint8_t marker(std::uint64_t i) { return static_cast<std::uint8_t>(i % 255 + 1); }

}  // namespace

// ---- shared

void Loops::prepare(std::uint64_t size) {
  for (int q = 0; q < o_.qps; ++q) {
    std::memset(res_.inbox(q), 0, size);
    std::uint8_t* out = res_.outbox(q);
    if (o_.test == Test::Bw)
      for (std::uint64_t i = 0; i < size; ++i) out[i] = pattern(size, q, i);
    else
      std::memset(out, 0, size);
  }
  if (o_.op == Op::Send) {
    // Receives stay posted from one size to the next (each is reposted on completion).
    if (!recvs_posted_) {
      for (int q = 0; q < o_.qps; ++q)
        for (int i = 0; i < res_.spec().rx_depth; ++i) post_recv(q);
      recvs_posted_ = true;
    }
  }
}

SizeResult Loops::run(std::uint64_t size, Control& ctl) {
  wd_.begin(std::string(to_string(o_.op)) + " " + to_string(o_.test) + " " + std::to_string(size) + " B");
  SizeProtocol proto(ctl, wd_);
  return o_.test == Test::Bw ? bw(size, proto) : lat(size, proto);
}

bool Loops::verify(std::uint64_t size) const {
  for (int q = 0; q < o_.qps; ++q) {
    const std::uint8_t* in = res_.inbox(q);
    for (std::uint64_t i = 0; i < size; ++i)
      if (in[i] != pattern(size, q, i)) return false;
  }
  return true;
}

// Receives always take a whole region, so one posted for an earlier size fits any later one.
void Loops::post_recv(int q) {
  ibv_sge sge{reinterpret_cast<uint64_t>(res_.inbox(q)), static_cast<uint32_t>(res_.spec().region_bytes),
              res_.lkey()};
  ibv_recv_wr wr{};
  ibv_recv_wr* bad = nullptr;
  wr.wr_id = recv_wr_id(q);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  if (int rc = ibv_post_recv(res_.qp(q), &wr, &bad)) res_.fail_call("ibv_post_recv", rc);
}

void Loops::post(int q, std::uint64_t size, bool signaled, std::uint64_t wr_id, bool inl) {
  const auto uq = static_cast<std::uint64_t>(q);
  ibv_sge sge{};
  ibv_send_wr wr{};
  ibv_send_wr* bad = nullptr;
  sge.length = static_cast<uint32_t>(size);
  sge.lkey = res_.lkey();
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.send_flags = (signaled ? unsigned{IBV_SEND_SIGNALED} : 0u) | (inl ? unsigned{IBV_SEND_INLINE} : 0u);
  switch (o_.op) {
    case Op::Write:
      wr.opcode = IBV_WR_RDMA_WRITE;
      sge.addr = reinterpret_cast<uint64_t>(res_.outbox(q));
      wr.wr.rdma.remote_addr = remote_.addr + remote_.stride * uq;  // the peer's inbox
      wr.wr.rdma.rkey = remote_.rkey;
      break;
    case Op::Read:
      wr.opcode = IBV_WR_RDMA_READ;
      sge.addr = reinterpret_cast<uint64_t>(res_.inbox(q));
      wr.wr.rdma.remote_addr = remote_.addr + remote_.stride * uq + remote_.stride / 2;  // its outbox
      wr.wr.rdma.rkey = remote_.rkey;
      break;
    case Op::Send:
      wr.opcode = IBV_WR_SEND;
      sge.addr = reinterpret_cast<uint64_t>(res_.outbox(q));
      break;
  }
  if (int rc = ibv_post_send(res_.qp(q), &wr, &bad))
    res_.fail_call(std::string("ibv_post_send(") + to_string(o_.op) + ")", rc);
}

Loops::Clock::time_point Loops::deadline(Clock::time_point start) const {
  return o_.duration_s
             ? start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*o_.duration_s))
             : Clock::time_point::max();
}

// ---- bandwidth

// What one bandwidth size has posted and completed, per QP and in all, and when.
struct Loops::BwRun {
  BwRun(const Options& o, bool sending)
      : posted(static_cast<std::size_t>(o.qps), 0), done(posted), last_signaled(posted), stop(!sending),
        cq_mod(std::min(o.tx_depth, kCqModeration)) {}
  std::vector<std::uint64_t> posted, done, last_signaled;
  std::uint64_t sent_total = 0, done_total = 0, recv_msgs = 0, recv_bytes = 0;
  Clock::time_point first_post{}, last_completion{}, first_recv{}, last_recv{};
  bool stop;  // every send is posted
  int cq_mod;
};

// Whether QP q has posted its last send: -n, every iteration; -D, once time is up, the last
// signalled WR that covers the unsignalled tail.
bool Loops::qp_posted_all(const BwRun& run, std::size_t q, bool time_up) const {
  return o_.duration_s ? (time_up && run.posted[q] == run.last_signaled[q]) : run.posted[q] == o_.iterations;
}

// Fills every QP's send queue to tx_depth; whether anything was posted.
bool Loops::post_sends(BwRun& run, std::uint64_t size, bool time_up) {
  bool moved = false, all_posted = true;
  for (int q = 0; q < o_.qps; ++q) {
    const auto uq = static_cast<std::size_t>(q);
    while (run.posted[uq] - run.done[uq] < static_cast<std::uint64_t>(o_.tx_depth) &&
           !qp_posted_all(run, uq, time_up)) {
      const bool last = o_.duration_s ? time_up : run.posted[uq] + 1 == o_.iterations;
      const bool sig = last || (run.posted[uq] + 1) % static_cast<std::uint64_t>(run.cq_mod) == 0;
      if (run.sent_total == 0) run.first_post = Clock::now();
      ++run.posted[uq];
      ++run.sent_total;
      post(q, size, sig, pack_send_wr_id(q, run.posted[uq] - run.last_signaled[uq]), false);
      if (sig) run.last_signaled[uq] = run.posted[uq];
      moved = true;
    }
    all_posted = all_posted && qp_posted_all(run, uq, time_up);
  }
  run.stop = all_posted;
  return moved;
}

// Up to kPollBatch completions of cq into wcs; their number.
int Loops::poll_batch(ibv_cq* cq, ibv_wc* wcs) {
  const int n = ibv_poll_cq(cq, kPollBatch, wcs);
  if (n < 0) res_.fail_call("ibv_poll_cq", EIO);
  return n;
}

// Takes the send completions there are; whether there were any.
bool Loops::reap_sends(BwRun& run) {
  ibv_wc wcs[kPollBatch];
  const int n = poll_batch(res_.send_cq(), wcs);
  for (int i = 0; i < n; ++i) {
    res_.check_wc(wcs[i]);
    const SendWrId id = unpack_send_wr_id(wcs[i].wr_id);
    run.done[static_cast<std::size_t>(id.qp)] += id.covered;
    run.done_total += id.covered;
    run.last_completion = Clock::now();
  }
  return n > 0;
}

// Takes the SENDs received, posting each receive again; whether there were any.
bool Loops::reap_recvs(BwRun& run) {
  ibv_wc wcs[kPollBatch];
  const int n = poll_batch(res_.recv_cq(), wcs);
  for (int i = 0; i < n; ++i) {
    res_.check_wc(wcs[i]);
    auto now = Clock::now();
    if (run.recv_msgs == 0) run.first_recv = now;
    run.last_recv = now;
    ++run.recv_msgs;
    run.recv_bytes += wcs[i].byte_len;
    post_recv(recv_wr_qp(wcs[i].wr_id));
  }
  return n > 0;
}

SizeResult Loops::bw(std::uint64_t size, SizeProtocol& proto) {
  const bool sending = sends_here();
  const bool receiving = receives_here();
  BwRun run(o_, sending);
  const auto start = Clock::now();
  const auto end = deadline(start);
  bool sent_note = false;
  auto next_beat = start + kHeartbeat;
  unsigned idle = 0;
  std::uint64_t passes = 0;
  for (;;) {
    bool moved = false;
    ++passes;
    if (sending && !run.stop) moved = post_sends(run, size, o_.duration_s && Clock::now() >= end);
    if (sending) moved |= reap_sends(run);
    if (receiving) moved |= reap_recvs(run);
    const bool sends_complete = !sending || (run.stop && run.done_total == run.sent_total);
    if (sending && sends_complete && !sent_note) {
      proto.send_sent(run.sent_total);
      sent_note = true;
    }
    if (receiving && !proto.peer_sent() && (moved || idle % kIdleControlPolls == 0)) proto.take();
    if (sends_complete && (!receiving || (proto.peer_sent() && run.recv_msgs >= *proto.peer_sent()))) break;
    if (moved) {
      wd_.tick();
      wd_.note(std::to_string(run.done_total) + " of " + std::to_string(run.sent_total) + " sends complete, " +
               std::to_string(run.recv_msgs) + " received");
      idle = 0;
    } else if (++idle % kIdleWatchdogPolls == 0) {
      wd_.check();
      if (!receiving) proto.take();  // an {"error"} from the peer surfaces here
    }
    if (sending && !run.stop && (passes & kHeartbeatPassMask) == 0 && Clock::now() >= next_beat) {
      proto.send_progress(run.done_total);
      next_beat += kHeartbeat;
    }
  }
  return finish_bw(size, run, proto);
}

// This side's own count: a sender's from its first post to its last completion, a receiver's
// from its first to its last receive; a side that did neither counts nothing.
SizeResult Loops::measured(std::uint64_t size, const BwRun& run) const {
  SizeResult r;
  r.bytes = size;
  if (sends_here()) {
    r.iterations = run.sent_total;
    r.total_bytes = run.sent_total * size;
    r.seconds = run.sent_total ? std::chrono::duration<double>(run.last_completion - run.first_post).count() : 0;
  } else if (receives_here()) {
    r.iterations = run.recv_msgs;
    r.total_bytes = run.recv_bytes;
    r.seconds = run.recv_msgs ? std::chrono::duration<double>(run.last_recv - run.first_recv).count() : 0;
  }
  return r;
}

SizeResult Loops::finish_bw(std::uint64_t size, const BwRun& run, SizeProtocol& proto) {
  wd_.begin(std::string(to_string(o_.op)) + " bw " + std::to_string(size) + " B: results");
  const BwRole role{sends_here(), receives_here(), o_.bidirectional};
  SizeResult r = measured(size, run);
  // The data lands in this side's inbox for SEND received here, READ posted here and WRITE
  // from the peer (which is complete once the peer's done arrives).
  const bool reads_here = o_.op == Op::Read && role.sending;
  const bool written_here = o_.op == Op::Write && (!client_ || o_.bidirectional);
  if (role.receiving || reads_here) r.data_verified = verify(size);
  auto written_check = [&]() -> std::optional<bool> {
    return written_here ? std::optional(verify(size)) : std::nullopt;
  };
  if (!role.sending && !role.receiving) {  // the passive side's done carries the initiator's result
    const SizeResult theirs = proto.await_done().get<SizeResult>();
    r = merge_bw(r, theirs, role, written_check());
    proto.send_done(r, 0);
    return r;
  }
  fill_rates(r);
  proto.send_done(r, run.sent_total);
  const SizeResult theirs = proto.await_done().get<SizeResult>();
  return merge_bw(r, theirs, role, written_check());
}

// ---- latency

// One latency size: one message in flight on QP 0, the inbox's last byte watched for the
// peer's marker (WRITE), send completions reaped on the way.
struct Loops::PingPong {
  PingPong(Loops& l, std::uint64_t size, SizeProtocol& proto)
      : l(l), proto(proto), size(size), inl(size <= l.res_.max_inline() && l.o_.op != Op::Read),
        in_last(l.res_.inbox(0) + size - 1), out_last(l.res_.outbox(0) + size - 1) {}

  // Spins until cond(); reaps send completions on the way; every kSpinChecks spins checks the
  // watchdog and takes the peer's messages.
  template <class Cond>
  void spin(Cond cond) {
    unsigned k = 0;
    while (!cond()) {
      reap_one();
      if (++k % kSpinChecks == 0) {
        l.wd_.check();
        proto.take();
      }
    }
    l.wd_.tick();
  }
  void reap_one() {
    if (outstanding && ibv_poll_cq(l.res_.send_cq(), 1, &wc) > 0) {
      l.res_.check_wc(wc);
      --outstanding;
    }
  }
  void reap_all() { spin([&] { return outstanding == 0; }); }
  bool received() {
    if (ibv_poll_cq(l.res_.recv_cq(), 1, &wc) <= 0) return false;
    l.res_.check_wc(wc);
    l.post_recv(0);
    return true;
  }
  void send(bool inline_data) {
    l.post(0, size, true, kLatWrId, inline_data);
    ++outstanding;
  }

  // Client: one round trip of message i; the sample in µs (one way; READ: the round trip).
  double round_trip(std::uint64_t i) {
    const auto t0 = Clock::now();
    if (l.o_.op == Op::Write) {
      *out_last = marker(i);
      reap_all();
      send(inl);
      spin([&] { return *in_last == marker(i); });
      std::atomic_thread_fence(std::memory_order_acquire);
    } else if (l.o_.op == Op::Send) {
      reap_all();
      send(inl);
      spin([&] { return received(); });
    } else {  // READ: one round trip per message, not halved (perftest's ib_read_lat)
      send(false);
      reap_all();
    }
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    return l.o_.op == Op::Read ? us : us / 2;
  }

  // Server: waits for message `next`; false when the client's count (expected, from its done)
  // says no more comes.
  bool await_message(std::uint64_t next, std::optional<std::uint64_t>& expected, std::uint64_t echoed) {
    unsigned k = 0;
    for (;;) {
      const bool arrived = l.o_.op == Op::Write ? *in_last == marker(next) : received();
      reap_one();
      if (arrived) return true;
      if (++k % kSpinChecks == 0) {
        l.wd_.check();
        proto.take();
        if (!proto.peer_done().is_null()) expected = int_or<std::uint64_t>(proto.peer_done(), "sent_messages", 0);
        if (expected && echoed >= *expected) return false;
      }
    }
  }
  // Server: message i came; send it back.
  void echo(std::uint64_t i) {
    std::atomic_thread_fence(std::memory_order_acquire);
    l.wd_.tick();
    if (l.o_.op == Op::Write) *out_last = marker(i);
    reap_all();
    send(inl);
  }

  Loops& l;
  SizeProtocol& proto;
  const std::uint64_t size;
  const bool inl;
  volatile std::uint8_t* in_last;
  std::uint8_t* out_last;
  std::uint64_t outstanding = 0;
  ibv_wc wc{};
};

SizeResult Loops::lat(std::uint64_t size, SizeProtocol& proto) {
  PingPong pp(*this, size, proto);
  return client_ ? lat_client(size, pp, proto) : lat_server(size, pp, proto);
}

SizeResult Loops::lat_client(std::uint64_t size, PingPong& pp, SizeProtocol& proto) {
  const auto start = Clock::now();
  const auto end = deadline(start);
  auto more = [&](std::uint64_t i) {
    return o_.duration_s ? Clock::now() < end && i < kMaxLatencySamples : i < o_.iterations;
  };
  std::vector<double> samples;
  samples.reserve(o_.duration_s ? kDurationSamplesReserve : static_cast<std::size_t>(o_.iterations));
  std::uint64_t i = 0;
  auto next_beat = start + kHeartbeat;
  while (more(i)) {
    samples.push_back(pp.round_trip(++i));
    if ((i & kLatNoteMask) == 0) {
      wd_.note(std::to_string(i) + " round trips");
      // The server of a READ test waits idle: tell it the test is alive.
      if (Clock::now() >= next_beat) {
        proto.send_progress(i);
        next_beat = Clock::now() + kHeartbeat;
      }
    }
  }
  pp.reap_all();
  SizeResult r;
  r.bytes = size;
  r.iterations = i;
  r.total_bytes = i * size;
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  fill_rates(r);
  r.latency = latency_stats(std::move(samples));
  proto.send_done(r, i);
  const json& done = proto.await_done();
  // A READ server is idle and counts nothing: its done is not even read.
  const SizeResult theirs = o_.op == Op::Read ? SizeResult{} : done.get<SizeResult>();
  return merge_lat(r, theirs, true, o_.op);
}

// Echoes each message back until the client's count is reached (a READ server only waits).
SizeResult Loops::lat_server(std::uint64_t size, PingPong& pp, SizeProtocol& proto) {
  std::optional<std::uint64_t> expected;
  if (!o_.duration_s) expected = o_.iterations;
  std::uint64_t i = 0;
  if (o_.op != Op::Read) {
    while ((!expected || i < *expected) && pp.await_message(i + 1, expected, i)) pp.echo(++i);
    pp.reap_all();
  }
  SizeResult r;
  r.bytes = size;
  r.iterations = i;
  r.total_bytes = i * size;
  proto.send_done(r, i);
  const SizeResult theirs = proto.await_done().get<SizeResult>();
  return merge_lat(r, theirs, false, o_.op);
}

}  // namespace fabscope::rdma

#endif
