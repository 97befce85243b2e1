#include "rdma/engine.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>

#include "rdma/findings.hpp"
#include "rdma/lib.hpp"
#include "rdma/stats.hpp"

namespace fabscope::rdma {

void to_json(json& j, const QpAddr& v) { j = json{{"qpn", v.qpn}, {"psn", v.psn}, {"gid", v.gid}, {"lid", v.lid}}; }
void from_json(const json& j, QpAddr& v) {
  v.qpn = int_at<std::uint32_t>(j, "qpn");
  v.psn = int_at<std::uint32_t>(j, "psn");
  v.gid = j.value("gid", "");
  v.lid = int_or<std::uint32_t>(j, "lid", 0);
}
void to_json(json& j, const BufKey& v) { j = json{{"addr", v.addr}, {"rkey", v.rkey}, {"stride", v.stride}}; }
void from_json(const json& j, BufKey& v) {
  v.addr = int_at<std::uint64_t>(j, "addr");
  v.rkey = int_at<std::uint32_t>(j, "rkey");
  v.stride = int_at<std::uint64_t>(j, "stride");
}

std::uint64_t buffer_bytes(const Options& o) {
  std::uint64_t max = *std::max_element(o.sizes_bytes.begin(), o.sizes_bytes.end());
  std::uint64_t region = (max + 4095) / 4096 * 4096;
  return 2 * region * static_cast<std::uint64_t>(o.qps);
}

bool memlock_allows(std::uint64_t need, std::uint64_t& limit) {
  rlimit rl{};
  limit = UINT64_MAX;
  if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0) return true;
  limit = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : static_cast<std::uint64_t>(rl.rlim_cur);
  if (limit == UINT64_MAX || need <= limit) return true;
  // ib_umem_get() skips the limit for CAP_IPC_LOCK (bit 14 of the effective set).
  std::ifstream st("/proc/self/status");
  std::string line;
  while (std::getline(st, line))
    if (line.rfind("CapEff:", 0) == 0) {
      unsigned long long caps = std::strtoull(line.c_str() + 7, nullptr, 16);
      return (caps >> 14) & 1u;
    }
  return false;
}

}  // namespace fabscope::rdma

#ifndef FABSCOPE_RDMA_HEADERS

namespace fabscope::rdma {
struct Engine::Impl {};
Engine::Engine(const Options&, Endpoint&, Watchdog&, bool) {
  throw Failure(no_device("fabscope was built without rdma-core headers (libibverbs-dev, librdmacm-dev)",
                          "Rebuild fabscope with libibverbs-dev and librdmacm-dev installed."));
}
Engine::~Engine() = default;
void Engine::open_device() {}
std::vector<QpAddr> Engine::qp_addrs() const { return {}; }
void Engine::connect_qps(const std::vector<QpAddr>&, int, const Endpoint&) {}
void Engine::cm_listen(const std::string&, int) {}
void Engine::cm_accept() {}
void Engine::cm_connect(const std::string&, int) {}
void Engine::set_control(Control*) {}

BufKey Engine::buf_key() const { return {}; }
void Engine::prepare(std::uint64_t) {}
SizeResult Engine::run_size(std::uint64_t, Control&, json&) { return {}; }
bool Engine::verify(std::uint64_t) const { return false; }
std::string Engine::device_name() const { return ""; }
}  // namespace fabscope::rdma

#else

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>

#include "probe/verbs.hpp"

namespace fabscope::rdma {

namespace {

using Clock = std::chrono::steady_clock;

ibv_mtu mtu_enum(int bytes) {
  switch (bytes) {
    case 256: return IBV_MTU_256;
    case 512: return IBV_MTU_512;
    case 1024: return IBV_MTU_1024;
    case 2048: return IBV_MTU_2048;
    default: return IBV_MTU_4096;
  }
}

bool parse_gid(const std::string& text, ibv_gid& gid) {
  std::memset(&gid, 0, sizeof gid);
  unsigned g[8];
  if (std::sscanf(text.c_str(), "%4x:%4x:%4x:%4x:%4x:%4x:%4x:%4x", &g[0], &g[1], &g[2], &g[3], &g[4], &g[5],
                  &g[6], &g[7]) != 8)
    return false;
  for (int i = 0; i < 8; ++i) {
    gid.raw[2 * i] = static_cast<uint8_t>(g[i] >> 8);
    gid.raw[2 * i + 1] = static_cast<uint8_t>(g[i] & 0xff);
  }
  return true;
}

// The byte pattern of one size on one QP: both sides compute it, the receiver checks it.
std::uint8_t pattern(std::uint64_t size, int qp, std::uint64_t i) {
  return static_cast<std::uint8_t>((i * 131 + size * 7 + static_cast<std::uint64_t>(qp) * 29 + 1) & 0xff);
}

// The latency loops' marker: never 0 (a cleared inbox), never the previous iteration's value.
std::uint8_t marker(std::uint64_t i) { return static_cast<std::uint8_t>(i % 255 + 1); }

struct CmEvent {
  rdma_cm_event_type type;
  int status;
  rdma_cm_id* id;
};

}  // namespace

struct Engine::Impl {
  const Options& o;
  Endpoint& local;
  Watchdog& wd;
  bool client;
  const Lib& L = lib();

  ibv_context* own_ctx = nullptr;  // --oob tcp: opened here; CM: the cm_id's context
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* scq = nullptr;
  ibv_cq* rcq = nullptr;
  ibv_mr* mr = nullptr;
  std::uint8_t* buf = nullptr;
  std::uint64_t region = 0;  // bytes per half (inbox or outbox) per QP
  std::vector<ibv_qp*> qps;
  std::vector<std::uint32_t> psns;
  std::uint32_t max_inline = 0;
  int rd_atom = 1;
  int rx_depth = 0;
  bool recvs_posted = false;
  std::optional<std::uint64_t> peer_sent;  // the peer's {"sent": n} of the current size

  Control* ctl = nullptr;  // polled during RDMA CM waits for an error from the peer
  rdma_event_channel* ch = nullptr;
  rdma_cm_id* listen_id = nullptr;
  std::vector<rdma_cm_id*> ids;

  Impl(const Options& opts, Endpoint& l, Watchdog& w, bool c) : o(opts), local(l), wd(w), client(c) {}

  [[noreturn]] void fail_call(const std::string& call, int err) {
    throw Failure(verbs_call(wd.where(), call, err, local));
  }

  std::uint8_t* inbox(int q) const { return buf + 2 * region * static_cast<std::uint64_t>(q); }
  std::uint8_t* outbox(int q) const { return inbox(q) + region; }

  void create_resources(ibv_context* c) {
    ctx = c;
    ibv_device_attr attr{};
    if (int rc = L.query_device(ctx, &attr)) fail_call("ibv_query_device", rc);
    rd_atom = std::max(1, std::min({16, attr.max_qp_rd_atom, attr.max_qp_init_rd_atom}));
    wd.begin("ibv_alloc_pd");
    pd = L.alloc_pd(ctx);
    if (!pd) fail_call("ibv_alloc_pd", errno);
    region = buffer_bytes(o) / 2 / static_cast<std::uint64_t>(o.qps);
    std::uint64_t total = buffer_bytes(o);
    std::uint64_t limit = 0;
    wd.begin("ibv_reg_mr");
    if (!memlock_allows(total, limit)) throw Failure(memlock(wd.where(), total, limit, 0));
    buf = static_cast<std::uint8_t*>(std::aligned_alloc(4096, total));
    if (!buf) fail_call("aligned_alloc", ENOMEM);
    std::memset(buf, 0, total);
    mr = L.reg_mr(pd, buf, total, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
    if (!mr) {
      int err = errno;
      // ib_umem_get(): ENOMEM when the pinned pages would pass RLIMIT_MEMLOCK.
      if (err == ENOMEM || err == EPERM || err == EAGAIN) throw Failure(memlock(wd.where(), total, limit, err));
      fail_call("ibv_reg_mr", err);
    }
    int depth = o.tx_depth + 1;
    rx_depth = o.op == Op::Send ? std::min(512, std::max(o.tx_depth, 16)) : 1;
    wd.begin("ibv_create_cq");
    scq = L.create_cq(ctx, depth * o.qps, nullptr, nullptr, 0);
    if (!scq) fail_call("ibv_create_cq", errno);
    rcq = L.create_cq(ctx, rx_depth * o.qps + 1, nullptr, nullptr, 0);
    if (!rcq) fail_call("ibv_create_cq", errno);
  }

  ibv_qp_init_attr qp_init(bool with_inline) const {
    ibv_qp_init_attr a{};
    a.send_cq = scq;
    a.recv_cq = rcq;
    a.qp_type = IBV_QPT_RC;
    a.cap.max_send_wr = static_cast<uint32_t>(o.tx_depth + 1);
    a.cap.max_recv_wr = static_cast<uint32_t>(rx_depth);
    a.cap.max_send_sge = 1;
    a.cap.max_recv_sge = 1;
    // perftest inlines latency messages up to 220 B; bandwidth runs use no inline.
    a.cap.max_inline_data = with_inline && o.test == Test::Lat ? 220 : 0;
    return a;
  }

  void create_qps() {
    wd.begin("ibv_create_qp");
    std::mt19937 rng(std::random_device{}());
    for (int q = 0; q < o.qps; ++q) {
      auto a = qp_init(true);
      ibv_qp* qp = L.create_qp(pd, &a);
      if (!qp && a.cap.max_inline_data) {
        a = qp_init(false);
        qp = L.create_qp(pd, &a);
      }
      if (!qp) fail_call("ibv_create_qp", errno);
      max_inline = a.cap.max_inline_data;
      qps.push_back(qp);
      psns.push_back(rng() & 0xffffff);
      ibv_qp_attr m{};
      m.qp_state = IBV_QPS_INIT;
      m.pkey_index = 0;
      m.port_num = static_cast<uint8_t>(local.port);
      m.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
      if (int rc = L.modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
        fail_call("ibv_modify_qp(INIT)", rc);
    }
  }

  // ---- RDMA CM
  CmEvent wait_cm(rdma_cm_event_type want, const std::string& peer) {
    for (;;) {
      pollfd p{ch->fd, POLLIN, 0};
      int ms = static_cast<int>(std::min(wd.remaining_s(), 0.2) * 1000) + 1;
      int n = ::poll(&p, 1, ms);
      if (n <= 0) {
        wd.check();
        // The peer may have failed meanwhile (memlock, no device): its error ends the wait.
        if (ctl)
          while (ctl->poll()) {
          }
        continue;
      }
      rdma_cm_event* ev = nullptr;
      if (L.get_cm_event(ch, &ev) != 0) fail_call("rdma_get_cm_event", errno);
      CmEvent e{ev->event, ev->status, ev->id};
      L.ack_cm_event(ev);
      wd.tick();
      if (e.type == want) return e;
      if (e.type == RDMA_CM_EVENT_DISCONNECTED && want != RDMA_CM_EVENT_DISCONNECTED) continue;
      const char* name = L.event_str ? L.event_str(e.type) : "RDMA_CM_EVENT_?";
      throw Failure(cm_event(wd.where(), e.type, name ? name : "?", e.status, peer, local));
    }
  }

  static sockaddr_in sin_of(const std::string& addr, int port) {
    sockaddr_in s{};
    s.sin_family = AF_INET;
    s.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, addr.c_str(), &s.sin_addr);
    return s;
  }

  void ensure_cm() {
    if (!L.cm)
      throw Failure(no_device("librdmacm.so.1 is not loadable: RDMA CM is unavailable",
                              "Install librdmacm1 (rdma-core), or run both sides with --oob tcp."));
    if (!ch) {
      ch = L.create_event_channel();
      if (!ch) fail_call("rdma_create_event_channel", errno);
    }
  }

  void adopt_cm_context(ibv_context* c) {
    if (ctx) return;
    const char* name = L.get_device_name(c->device);
    if (name && local.device != name) {
      // RDMA CM routes by address; what it picked is what runs, and the output says so.
      local.device = name;
    }
    create_resources(c);
  }

  ibv_qp* cm_qp(rdma_cm_id* id) {
    auto a = qp_init(true);
    if (L.cm_create_qp(id, pd, &a) != 0) {
      a = qp_init(false);
      if (L.cm_create_qp(id, pd, &a) != 0) fail_call("rdma_create_qp", errno);
    }
    max_inline = a.cap.max_inline_data;
    return id->qp;
  }

  rdma_conn_param conn_param() const {
    rdma_conn_param p{};
    p.responder_resources = static_cast<uint8_t>(rd_atom);
    p.initiator_depth = static_cast<uint8_t>(rd_atom);
    p.retry_count = 7;
    p.rnr_retry_count = 7;
    return p;
  }

  // ---- data path
  // Receives always take a whole region, so one posted for an earlier size fits any later one.
  void post_recv(int q) {
    ibv_sge sge{reinterpret_cast<uint64_t>(inbox(q)), static_cast<uint32_t>(region), mr->lkey};
    ibv_recv_wr wr{};
    ibv_recv_wr* bad = nullptr;
    wr.wr_id = static_cast<uint64_t>(q);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    if (int rc = ibv_post_recv(qps[static_cast<std::size_t>(q)], &wr, &bad)) fail_call("ibv_post_recv", rc);
  }

  void post(int q, std::uint64_t size, bool signaled, std::uint64_t wr_id, bool inl) {
    const auto uq = static_cast<std::uint64_t>(q);
    ibv_sge sge{};
    ibv_send_wr wr{};
    ibv_send_wr* bad = nullptr;
    sge.length = static_cast<uint32_t>(size);
    sge.lkey = mr->lkey;
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.send_flags = (signaled ? unsigned{IBV_SEND_SIGNALED} : 0u) | (inl ? unsigned{IBV_SEND_INLINE} : 0u);
    switch (o.op) {
      case Op::Write:
        wr.opcode = IBV_WR_RDMA_WRITE;
        sge.addr = reinterpret_cast<uint64_t>(outbox(q));
        wr.wr.rdma.remote_addr = remote.addr + remote.stride * uq;  // the peer's inbox
        wr.wr.rdma.rkey = remote.rkey;
        break;
      case Op::Read:
        wr.opcode = IBV_WR_RDMA_READ;
        sge.addr = reinterpret_cast<uint64_t>(inbox(q));
        wr.wr.rdma.remote_addr = remote.addr + remote.stride * uq + remote.stride / 2;  // its outbox
        wr.wr.rdma.rkey = remote.rkey;
        break;
      case Op::Send:
        wr.opcode = IBV_WR_SEND;
        sge.addr = reinterpret_cast<uint64_t>(outbox(q));
        break;
    }
    if (int rc = ibv_post_send(qps[static_cast<std::size_t>(q)], &wr, &bad))
      fail_call(std::string("ibv_post_send(") + to_string(o.op) + ")", rc);
  }

  void check_wc(const ibv_wc& wc) {
    if (wc.status == IBV_WC_SUCCESS) return;
    Finding f = completion_error(wd.where(), wc.status, wc.opcode, wc.vendor_err, local);
    // A port that went down mid-run shows up as whatever status the provider picks (rxe:
    // IBV_WC_LOC_QP_OP_ERR, hardware: usually IBV_WC_RETRY_EXC_ERR); its state now says why.
    ibv_port_attr pa;
    if (ctx && L.query_port(ctx, static_cast<uint8_t>(local.port), pa) == 0 && pa.state != IBV_PORT_ACTIVE) {
      std::string state = probe::verbs_port_state_name(pa.state);
      f.message += "; port " + local.device + ":" + std::to_string(local.port) + " is " + state + " now";
      f.evidence += " port_state_now=" + state;
      f.remedy = "The link went down during the run: check the cable, the switch port and `ip link` / "
                 "`ibstat` for " + local.device + ", then run again.";
    }
    throw Failure(f);
  }

  BufKey remote;
  bool sends_here() const { return client || o.bidirectional; }
  bool receives_here() const { return o.op == Op::Send && (!client || o.bidirectional); }

  SizeResult bw(std::uint64_t size, Control& ctl, json& peer_done);
  SizeResult lat(std::uint64_t size, Control& ctl, json& peer_done);
  bool verify(std::uint64_t size) const;
  void send_done(Control& ctl, const SizeResult& r, std::uint64_t sent_msgs) {
    json d = r;
    d["sent_messages"] = sent_msgs;
    ctl.send(json{{"done", d}}, wd);
  }
  void absorb(const json& m, json& peer_done) {
    if (m.contains("sent")) peer_sent = int_at<std::uint64_t>(m, "sent");
    if (m.contains("done")) {
      peer_done = m["done"];
      if (!peer_sent) peer_sent = int_or<std::uint64_t>(peer_done, "sent_messages", 0);
    }
  }
  // Waits for the peer's done (progress messages tick the watchdog on the way).
  void await_done(Control& ctl, json& peer_done) {
    while (peer_done.is_null()) absorb(ctl.recv(wd), peer_done);
  }
  // Takes what the peer sent without waiting; an {"error"} from it throws here.
  void take_done(Control& ctl, json& peer_done) {
    while (auto m = ctl.poll()) absorb(*m, peer_done);
  }
};

SizeResult Engine::Impl::bw(std::uint64_t size, Control& ctl, json& peer_done) {
  const bool sending = sends_here();
  const bool receiving = receives_here();
  const int nq = o.qps;
  const int cq_mod = std::min(o.tx_depth, 64);
  peer_sent.reset();
  std::vector<std::uint64_t> posted(static_cast<std::size_t>(nq), 0), done(static_cast<std::size_t>(nq), 0),
      last_signaled(static_cast<std::size_t>(nq), 0);
  bool stop = !sending;
  const auto start = Clock::now();
  const auto end = o.duration_s ? start + std::chrono::duration_cast<Clock::duration>(
                                              std::chrono::duration<double>(*o.duration_s))
                                : Clock::time_point::max();
  Clock::time_point first_post{}, last_completion{}, first_recv{}, last_recv{};
  std::uint64_t recv_msgs = 0, recv_bytes = 0, sent_total = 0, done_total = 0;
  bool sent_note = false;
  auto next_beat = start + std::chrono::seconds(1);
  ibv_wc wcs[32];
  unsigned idle = 0;
  std::uint64_t loops = 0;
  for (;;) {
    bool moved = false;
    ++loops;
    if (sending && !stop) {
      bool time_up = o.duration_s && Clock::now() >= end;
      bool all_posted = true;
      for (int q = 0; q < nq; ++q) {
        auto uq = static_cast<std::size_t>(q);
        while (posted[uq] - done[uq] < static_cast<std::uint64_t>(o.tx_depth)) {
          // Duration mode: once time is up, one last signaled WR covers the unsignaled tail.
          if (o.duration_s ? (time_up && posted[uq] == last_signaled[uq]) : posted[uq] == o.iterations) break;
          bool last = o.duration_s ? time_up : posted[uq] + 1 == o.iterations;
          bool sig = last || (posted[uq] + 1) % static_cast<std::uint64_t>(cq_mod) == 0;
          if (sent_total == 0) first_post = Clock::now();
          ++posted[uq];
          ++sent_total;
          // wr_id: the QP in the high bits, the number of WRs this completion covers below.
          post(q, size, sig, (static_cast<std::uint64_t>(q) << 32) | (posted[uq] - last_signaled[uq]), false);
          if (sig) last_signaled[uq] = posted[uq];
          moved = true;
        }
        all_posted = all_posted && (o.duration_s ? (time_up && posted[uq] == last_signaled[uq])
                                                 : posted[uq] == o.iterations);
      }
      stop = all_posted;
    }
    if (sending) {
      int n = ibv_poll_cq(scq, 32, wcs);
      if (n < 0) fail_call("ibv_poll_cq", EIO);
      for (int i = 0; i < n; ++i) {
        check_wc(wcs[i]);
        auto c = wcs[i].wr_id & 0xffffffffu;
        done[static_cast<std::size_t>(wcs[i].wr_id >> 32)] += c;
        done_total += c;
        last_completion = Clock::now();
        moved = true;
      }
    }
    if (receiving) {
      int n = ibv_poll_cq(rcq, 32, wcs);
      if (n < 0) fail_call("ibv_poll_cq", EIO);
      for (int i = 0; i < n; ++i) {
        check_wc(wcs[i]);
        auto now = Clock::now();
        if (recv_msgs == 0) first_recv = now;
        last_recv = now;
        ++recv_msgs;
        recv_bytes += wcs[i].byte_len;
        post_recv(static_cast<int>(wcs[i].wr_id));
        moved = true;
      }
    }
    const bool sends_complete = !sending || (stop && done_total == sent_total);
    if (sending && sends_complete && !sent_note) {
      ctl.send(json{{"sent", sent_total}}, wd);
      sent_note = true;
    }
    if (receiving && !peer_sent && (moved || idle % 64 == 0)) take_done(ctl, peer_done);
    if (sends_complete && (!receiving || (peer_sent && recv_msgs >= *peer_sent))) break;
    if (moved) {
      wd.tick();
      wd.note(std::to_string(done_total) + " of " + std::to_string(sent_total) + " sends complete, " +
              std::to_string(recv_msgs) + " received");
      idle = 0;
    } else if (++idle % 1024 == 0) {
      wd.check();
      if (!receiving) take_done(ctl, peer_done);  // an {"error"} from the peer surfaces here
    }
    if (sending && !stop && (loops & 255) == 0 && Clock::now() >= next_beat) {
      ctl.send(json{{"progress", done_total}}, wd);
      next_beat += std::chrono::seconds(1);
    }
  }
  wd.begin(std::string(to_string(o.op)) + " bw " + std::to_string(size) + " B: results");
  SizeResult r;
  r.bytes = size;
  if (sending) {
    r.iterations = sent_total;
    r.total_bytes = sent_total * size;
    r.seconds = sent_total ? std::chrono::duration<double>(last_completion - first_post).count() : 0;
  } else if (receiving) {
    r.iterations = recv_msgs;
    r.total_bytes = recv_bytes;
    r.seconds = recv_msgs ? std::chrono::duration<double>(last_recv - first_recv).count() : 0;
  }
  // The data lands in this side's inbox for SEND received here, READ posted here and WRITE
  // from the peer (which is complete once the peer's done arrives).
  const bool reads_here = o.op == Op::Read && sending;
  const bool written_here = o.op == Op::Write && (!client || o.bidirectional);
  if (receiving || reads_here) r.data_verified = verify(size);
  if (!sending && !receiving) {
    await_done(ctl, peer_done);
    SizeResult theirs = peer_done.get<SizeResult>();
    r = theirs;  // a passive side reports the initiator's measurement
    r.peer_total_bytes = theirs.total_bytes;
    r.data_verified = written_here ? std::optional<bool>(verify(size)) : theirs.data_verified;
    send_done(ctl, r, 0);
    return r;
  }
  fill_rates(r);
  send_done(ctl, r, sent_total);
  await_done(ctl, peer_done);
  SizeResult theirs = peer_done.get<SizeResult>();
  if (written_here) r.data_verified = verify(size);
  if (!r.data_verified) r.data_verified = theirs.data_verified;
  if (receiving && !sending) {
    // A receiver alone reports its own count over the sender's time (its first completion
    // came only after the first message had crossed).
    if (theirs.seconds > 0) r.seconds = theirs.seconds;
    fill_rates(r);
  }
  r.peer_total_bytes = theirs.total_bytes;
  if (o.bidirectional) {
    r.iterations += theirs.iterations;
    r.total_bytes += theirs.total_bytes;
    r.seconds = std::max(r.seconds, theirs.seconds);
    fill_rates(r);
  }
  return r;
}

bool Engine::Impl::verify(std::uint64_t size) const {
  for (int q = 0; q < o.qps; ++q) {
    const std::uint8_t* in = inbox(q);
    for (std::uint64_t i = 0; i < size; ++i)
      if (in[i] != pattern(size, q, i)) return false;
  }
  return true;
}

SizeResult Engine::Impl::lat(std::uint64_t size, Control& ctl, json& peer_done) {
  SizeResult r;
  r.bytes = size;
  std::vector<double> samples;
  const bool inl = size <= max_inline && o.op != Op::Read;
  const std::uint64_t n = o.iterations;
  const auto start = Clock::now();
  const auto end = o.duration_s ? start + std::chrono::duration_cast<Clock::duration>(
                                              std::chrono::duration<double>(*o.duration_s))
                                : Clock::time_point::max();
  // Every sample is kept for the percentiles; a long -D run stops at 1e7 round trips.
  auto more = [&](std::uint64_t i) { return o.duration_s ? Clock::now() < end && i < 10'000'000u : i < n; };
  ibv_wc wc;
  volatile std::uint8_t* in_last = inbox(0) + size - 1;
  std::uint8_t* out_last = outbox(0) + size - 1;
  std::uint64_t outstanding = 0;
  // Spins until cond(); reaps send completions on the way; watchdog every 4096 spins.
  auto spin = [&](auto cond) {
    unsigned k = 0;
    while (!cond()) {
      if (outstanding && ibv_poll_cq(scq, 1, &wc) > 0) {
        check_wc(wc);
        --outstanding;
      }
      if (++k % 4096 == 0) {
        wd.check();
        take_done(ctl, peer_done);
      }
    }
    wd.tick();
  };
  auto reap_all = [&] { spin([&] { return outstanding == 0; }); };
  auto recv_one = [&] {
    spin([&] {
      int got = ibv_poll_cq(rcq, 1, &wc);
      if (got > 0) {
        check_wc(wc);
        post_recv(0);
        return true;
      }
      return false;
    });
  };

  if (client) {
    std::uint64_t i = 0;
    auto next_beat = start + std::chrono::seconds(1);
    samples.reserve(o.duration_s ? std::size_t{1} << 16 : static_cast<std::size_t>(n));
    while (more(i)) {
      ++i;
      auto t0 = Clock::now();
      if (o.op == Op::Write) {
        *out_last = marker(i);
        reap_all();
        post(0, size, true, 1, inl);
        ++outstanding;
        spin([&] { return *in_last == marker(i); });
        std::atomic_thread_fence(std::memory_order_acquire);
      } else if (o.op == Op::Send) {
        reap_all();
        post(0, size, true, 1, inl);
        ++outstanding;
        recv_one();
      } else {  // READ: one round trip per message, not halved (perftest's ib_read_lat)
        post(0, size, true, 1, false);
        ++outstanding;
        reap_all();
      }
      double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      samples.push_back(o.op == Op::Read ? us : us / 2);
      if ((i & 255) == 0) {
        wd.note(std::to_string(i) + " round trips");
        // The server of a READ test waits idle: tell it the test is alive.
        if (Clock::now() >= next_beat) {
          ctl.send(json{{"progress", i}}, wd);
          next_beat = Clock::now() + std::chrono::seconds(1);
        }
      }
    }
    reap_all();
    r.iterations = i;
    r.total_bytes = i * size;
    r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    fill_rates(r);
    r.latency = latency_stats(std::move(samples));
    send_done(ctl, r, i);
    await_done(ctl, peer_done);
    // The server counted the messages it echoed (a READ server is idle and counts nothing).
    if (o.op != Op::Read) r.peer_total_bytes = peer_done.get<SizeResult>().total_bytes;
    return r;
  }
  // Server: echo each message back until the client's count is reached.
  std::optional<std::uint64_t> expected;
  if (!o.duration_s) expected = n;
  std::uint64_t i = 0;
  auto peer_count = [&] {
    take_done(ctl, peer_done);
    if (!peer_done.is_null()) expected = int_or<std::uint64_t>(peer_done, "sent_messages", 0);
  };
  if (o.op != Op::Read) {
    while (!expected || i < *expected) {
      std::uint64_t next = i + 1;
      bool arrived = false;
      unsigned k = 0;
      while (!arrived) {
        if (o.op == Op::Write) {
          arrived = *in_last == marker(next);
        } else if (ibv_poll_cq(rcq, 1, &wc) > 0) {
          check_wc(wc);
          post_recv(0);
          arrived = true;
        }
        if (outstanding && ibv_poll_cq(scq, 1, &wc) > 0) {
          check_wc(wc);
          --outstanding;
        }
        if (!arrived && ++k % 4096 == 0) {
          wd.check();
          peer_count();
          if (expected && i >= *expected) break;
        }
      }
      if (!arrived) break;
      std::atomic_thread_fence(std::memory_order_acquire);
      i = next;
      wd.tick();
      if (o.op == Op::Write) *out_last = marker(i);
      reap_all();
      post(0, size, true, 1, inl);
      ++outstanding;
    }
    reap_all();
  }
  r.iterations = i;
  r.total_bytes = i * size;
  send_done(ctl, r, i);
  await_done(ctl, peer_done);
  // The server reports the client's measurement; its own count is the check.
  SizeResult theirs = peer_done.get<SizeResult>();
  if (o.op != Op::Read) theirs.peer_total_bytes = r.total_bytes;
  return theirs;
}

Engine::Engine(const Options& opts, Endpoint& local, Watchdog& wd, bool client)
    : impl_(std::make_unique<Impl>(opts, local, wd, client)) {
  if (!impl_->L.error.empty())
    throw Failure(no_device(impl_->L.error, "Install rdma-core's libibverbs1, librdmacm1 and ibverbs-providers."));
}

Engine::~Engine() {
  auto& m = *impl_;
  const Lib& L = m.L;
  if (L.error.empty()) {
    for (auto* id : m.ids) {
      if (id->qp) L.cm_destroy_qp(id);
      L.destroy_id(id);
    }
    for (auto* qp : m.qps)
      if (m.ids.empty()) L.destroy_qp(qp);
    if (m.listen_id) L.destroy_id(m.listen_id);
    if (m.mr) L.dereg_mr(m.mr);
    if (m.scq) L.destroy_cq(m.scq);
    if (m.rcq) L.destroy_cq(m.rcq);
    if (m.pd) L.dealloc_pd(m.pd);
    if (m.ch) L.destroy_event_channel(m.ch);
    if (m.own_ctx) L.close_device(m.own_ctx);
  }
  std::free(m.buf);
}

void Engine::open_device() {
  auto& m = *impl_;
  m.wd.begin("ibv_open_device");
  int n = 0;
  ibv_device** list = m.L.get_device_list(&n);
  if (!list) m.fail_call("ibv_get_device_list", errno);
  for (int i = 0; i < n && !m.own_ctx; ++i)
    if (m.local.device == m.L.get_device_name(list[i])) {
      m.own_ctx = m.L.open_device(list[i]);
      if (!m.own_ctx) {
        int err = errno;
        m.L.free_device_list(list);
        m.fail_call("ibv_open_device(" + m.local.device + ")", err);
      }
    }
  m.L.free_device_list(list);
  if (!m.own_ctx)
    throw Failure(no_device("libibverbs does not list " + m.local.device + " (its provider library is missing?)",
                            "Install ibverbs-providers (the user-space driver of " + m.local.device + ")."));
  m.create_resources(m.own_ctx);
  m.create_qps();
}

std::vector<QpAddr> Engine::qp_addrs() const {
  std::vector<QpAddr> v;
  for (std::size_t q = 0; q < impl_->qps.size(); ++q)
    v.push_back({impl_->qps[q]->qp_num, impl_->psns[q], impl_->local.gid, impl_->local.lid.value_or(0)});
  return v;
}

void Engine::connect_qps(const std::vector<QpAddr>& remote, int path_mtu, const Endpoint& rep) {
  auto& m = *impl_;
  if (remote.size() != m.qps.size())
    throw Failure(control_lost(m.wd.where(), "the peer sent " + std::to_string(remote.size()) + " QPs, expected " +
                                                 std::to_string(m.qps.size())));
  const bool global = m.local.link_layer == "Ethernet" || !rep.lid || *rep.lid == 0;
  for (std::size_t q = 0; q < m.qps.size(); ++q) {
    m.wd.begin("ibv_modify_qp(RTR)");
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = mtu_enum(path_mtu);
    a.dest_qp_num = remote[q].qpn;
    a.rq_psn = remote[q].psn;
    a.max_dest_rd_atomic = static_cast<uint8_t>(m.rd_atom);
    a.min_rnr_timer = 12;
    a.ah_attr.port_num = static_cast<uint8_t>(m.local.port);
    a.ah_attr.dlid = static_cast<uint16_t>(remote[q].lid);
    if (global) {
      a.ah_attr.is_global = 1;
      if (!parse_gid(remote[q].gid, a.ah_attr.grh.dgid))
        throw Failure(control_lost(m.wd.where(), "the peer's GID '" + remote[q].gid + "' is unreadable"));
      a.ah_attr.grh.sgid_index = static_cast<uint8_t>(m.local.gid_index.value_or(0));
      a.ah_attr.grh.hop_limit = 64;
    }
    if (int rc = m.L.modify_qp(m.qps[q], &a,
                               IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
      m.fail_call("ibv_modify_qp(RTR)", rc);
    m.wd.begin("ibv_modify_qp(RTS)");
    ibv_qp_attr s{};
    s.qp_state = IBV_QPS_RTS;
    s.timeout = 14;  // 4.096 us * 2^14 = 67 ms per try, 7 tries: a dead path fails in ~0.5 s
    s.retry_cnt = 7;
    s.rnr_retry = 7;
    s.sq_psn = m.psns[q];
    s.max_rd_atomic = static_cast<uint8_t>(m.rd_atom);
    if (int rc = m.L.modify_qp(m.qps[q], &s,
                               IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                                   IBV_QP_MAX_QP_RD_ATOMIC))
      m.fail_call("ibv_modify_qp(RTS)", rc);
  }
}

void Engine::cm_listen(const std::string& address, int port) {
  auto& m = *impl_;
  m.ensure_cm();
  m.wd.begin("rdma_listen");
  if (m.L.create_id(m.ch, &m.listen_id, nullptr, RDMA_PS_TCP) != 0) m.fail_call("rdma_create_id", errno);
  sockaddr_in sin = Impl::sin_of(address, port);
  if (m.L.bind_addr(m.listen_id, reinterpret_cast<sockaddr*>(&sin)) != 0)
    m.fail_call("rdma_bind_addr(" + address + ":" + std::to_string(port) + ")", errno);
  if (m.L.listen(m.listen_id, m.o.qps) != 0) m.fail_call("rdma_listen", errno);
}

void Engine::cm_accept() {
  auto& m = *impl_;
  for (int q = 0; q < m.o.qps; ++q) {
    m.wd.begin("RDMA CM accept (QP " + std::to_string(q) + ")");
    CmEvent e = m.wait_cm(RDMA_CM_EVENT_CONNECT_REQUEST, "client");
    m.ids.push_back(e.id);
    m.adopt_cm_context(e.id->verbs);
    m.qps.push_back(m.cm_qp(e.id));
    rdma_conn_param p = m.conn_param();
    if (m.L.accept(e.id, &p) != 0) m.fail_call("rdma_accept", errno);
    m.wait_cm(RDMA_CM_EVENT_ESTABLISHED, "client");
  }
}

void Engine::cm_connect(const std::string& address, int port) {
  auto& m = *impl_;
  m.ensure_cm();
  sockaddr_in dst = Impl::sin_of(address, port);
  sockaddr_in src = Impl::sin_of(m.local.address, 0);
  const int ms = static_cast<int>(std::min(m.wd.timeout_s(), 60.0) * 1000);
  for (int q = 0; q < m.o.qps; ++q) {
    rdma_cm_id* id = nullptr;
    if (m.L.create_id(m.ch, &id, nullptr, RDMA_PS_TCP) != 0) m.fail_call("rdma_create_id", errno);
    m.ids.push_back(id);
    m.wd.begin("rdma_resolve_addr");
    if (m.L.resolve_addr(id, m.local.address.empty() ? nullptr : reinterpret_cast<sockaddr*>(&src),
                         reinterpret_cast<sockaddr*>(&dst), ms) != 0)
      m.fail_call("rdma_resolve_addr(" + address + ")", errno);
    m.wait_cm(RDMA_CM_EVENT_ADDR_RESOLVED, address);
    m.wd.begin("rdma_resolve_route");
    if (m.L.resolve_route(id, ms) != 0) m.fail_call("rdma_resolve_route", errno);
    m.wait_cm(RDMA_CM_EVENT_ROUTE_RESOLVED, address);
    m.adopt_cm_context(id->verbs);
    m.qps.push_back(m.cm_qp(id));
    m.wd.begin("rdma_connect (QP " + std::to_string(q) + ")");
    rdma_conn_param p = m.conn_param();
    if (m.L.connect(id, &p) != 0) m.fail_call("rdma_connect", errno);
    m.wait_cm(RDMA_CM_EVENT_ESTABLISHED, address);
  }
}

void Engine::set_control(Control* ctl) { impl_->ctl = ctl; }

BufKey Engine::buf_key() const {
  return {reinterpret_cast<std::uint64_t>(impl_->buf), impl_->mr ? impl_->mr->rkey : 0, 2 * impl_->region};
}

void Engine::prepare(std::uint64_t size) {
  auto& m = *impl_;
  m.remote = remote_;
  for (int q = 0; q < m.o.qps; ++q) {
    std::memset(m.inbox(q), 0, size);
    std::uint8_t* out = m.outbox(q);
    if (m.o.test == Test::Bw)
      for (std::uint64_t i = 0; i < size; ++i) out[i] = pattern(size, q, i);
    else
      std::memset(out, 0, size);
  }
  if (m.o.op == Op::Send) {
    // Receives stay posted from one size to the next (each is reposted on completion).
    if (!m.recvs_posted) {
      for (int q = 0; q < m.o.qps; ++q)
        for (int i = 0; i < m.rx_depth; ++i) m.post_recv(q);
      m.recvs_posted = true;
    }
  }
}

SizeResult Engine::run_size(std::uint64_t size, Control& ctl, json& peer_done) {
  auto& m = *impl_;
  m.remote = remote_;
  m.wd.begin(std::string(to_string(m.o.op)) + " " + to_string(m.o.test) + " " + std::to_string(size) + " B");
  return m.o.test == Test::Bw ? m.bw(size, ctl, peer_done) : m.lat(size, ctl, peer_done);
}

bool Engine::verify(std::uint64_t size) const { return impl_->verify(size); }

std::string Engine::device_name() const { return impl_->local.device; }

}  // namespace fabscope::rdma

#endif
