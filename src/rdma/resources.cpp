#include "rdma/resources.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>

#include "rdma/findings.hpp"

namespace fabscope::rdma {

namespace {

// Regions start and end on a page: the MR pins whole pages, and aligned_alloc wants a size that
// is a multiple of the alignment.
constexpr std::uint64_t kPageBytes = 4096;

}  // namespace

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
  std::uint64_t region = (max + kPageBytes - 1) / kPageBytes * kPageBytes;
  return 2 * region * static_cast<std::uint64_t>(o.qps);
}

bool memlock_allows(std::uint64_t need, std::uint64_t& limit) {
  rlimit rl{};
  limit = UINT64_MAX;
  if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0) return true;
  limit = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : static_cast<std::uint64_t>(rl.rlim_cur);
  if (limit == UINT64_MAX || need <= limit) return true;
  // ib_umem_get() skips RLIMIT_MEMLOCK for CAP_IPC_LOCK, bit 14 of the effective set.
  constexpr unsigned kCapIpcLockBit = 14;
  std::ifstream st("/proc/self/status");
  std::string line;
  while (std::getline(st, line))
    if (line.rfind("CapEff:", 0) == 0) {
      unsigned long long caps = std::strtoull(line.c_str() + 7, nullptr, 16);
      return (caps >> kCapIpcLockBit) & 1u;
    }
  return false;
}

ResourceSpec resource_spec(const Options& o) {
  // A SEND test keeps a receive posted for each message the sender may have in flight
  // (tx_depth), so none meets an empty receive queue (an RNR NAK and a retry): at least 16, at
  // most perftest's DEF_RX_SEND (512).
  constexpr int kMinSendRxDepth = 16, kMaxSendRxDepth = 512;
  // perftest inlines latency messages up to 220 B (DEF_INLINE_WRITE); bandwidth runs use none.
  constexpr std::uint32_t kLatencyInlineBytes = 220;
  ResourceSpec s;
  s.qps = o.qps;
  s.region_bytes = buffer_bytes(o) / 2 / static_cast<std::uint64_t>(o.qps);
  s.tx_depth = o.tx_depth;
  s.rx_depth = o.op == Op::Send ? std::min(kMaxSendRxDepth, std::max(o.tx_depth, kMinSendRxDepth)) : 1;
  s.inline_bytes = o.test == Test::Lat ? kLatencyInlineBytes : 0;
  return s;
}

}  // namespace fabscope::rdma

#ifdef FABSCOPE_RDMA_HEADERS

#include "probe/verbs.hpp"

namespace fabscope::rdma {

namespace {

// Outstanding READs per QP, at most perftest's MAX_OUT_READ_HERMON (16, ConnectX); the device's
// own limits when lower.
constexpr int kMaxRdAtomic = 16;
// PSNs are 24 bits.
constexpr std::uint32_t kPsnMask = 0xffffff;
// RTR: how long a sender waits after our receiver-not-ready NAK, 12 = 0.64 ms in the IB encoding
// (the value of rdma-core's ibv_rc_pingpong).
constexpr std::uint8_t kMinRnrTimer = 12;
// RTS: 4.096 us * 2^14 = 67 ms per try, kQpRetryCount tries: a dead path fails in ~0.5 s.
constexpr std::uint8_t kAckTimeout = 14;
// The GRH's hop limit (RoCE v2: the IP TTL), Linux's default TTL.
constexpr std::uint8_t kHopLimit = 64;

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

}  // namespace

Resources::Resources(const ResourceSpec& spec, const Endpoint& local, Watchdog& wd)
    : spec_(spec), local_(local), wd_(wd) {}

Resources::~Resources() {
  if (L.error.empty()) {
    if (own_qps_)
      for (auto* qp : qps_) L.destroy_qp(qp);
    if (mr_) L.dereg_mr(mr_);
    if (scq_) L.destroy_cq(scq_);
    if (rcq_) L.destroy_cq(rcq_);
    if (pd_) L.dealloc_pd(pd_);
    if (own_ctx_) L.close_device(own_ctx_);
  }
  std::free(buf_);
}

void Resources::fail_call(const std::string& call, int err) const {
  throw Failure(verbs_call(wd_.where(), call, err, local_));
}

void Resources::open_device() {
  wd_.begin("ibv_open_device");
  int n = 0;
  ibv_device** list = L.get_device_list(&n);
  if (!list) fail_call("ibv_get_device_list", errno);
  for (int i = 0; i < n && !own_ctx_; ++i)
    if (local_.device == L.get_device_name(list[i])) {
      own_ctx_ = L.open_device(list[i]);
      if (!own_ctx_) {
        int err = errno;
        L.free_device_list(list);
        fail_call("ibv_open_device(" + local_.device + ")", err);
      }
    }
  L.free_device_list(list);
  if (!own_ctx_)
    throw Failure(no_device("libibverbs does not list " + local_.device + " (its provider library is missing?)",
                            "Install ibverbs-providers (the user-space driver of " + local_.device + ")."));
  create_on(own_ctx_);
  create_qps();
}

void Resources::create_on(ibv_context* c) {
  ctx_ = c;
  ibv_device_attr attr{};
  if (int rc = L.query_device(ctx_, &attr)) fail_call("ibv_query_device", rc);
  rd_atom_ = std::max(1, std::min({kMaxRdAtomic, attr.max_qp_rd_atom, attr.max_qp_init_rd_atom}));
  wd_.begin("ibv_alloc_pd");
  pd_ = L.alloc_pd(ctx_);
  if (!pd_) fail_call("ibv_alloc_pd", errno);
  const std::uint64_t total = spec_.buffer_bytes();
  std::uint64_t limit = 0;
  wd_.begin("ibv_reg_mr");
  if (!memlock_allows(total, limit)) throw Failure(memlock(wd_.where(), total, limit, 0));
  buf_ = static_cast<std::uint8_t*>(std::aligned_alloc(kPageBytes, total));
  if (!buf_) fail_call("aligned_alloc", ENOMEM);
  std::memset(buf_, 0, total);
  mr_ = L.reg_mr(pd_, buf_, total, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  if (!mr_) {
    int err = errno;
    // ib_umem_get(): ENOMEM when the pinned pages would pass RLIMIT_MEMLOCK.
    if (err == ENOMEM || err == EPERM || err == EAGAIN) throw Failure(memlock(wd_.where(), total, limit, err));
    fail_call("ibv_reg_mr", err);
  }
  wd_.begin("ibv_create_cq");
  scq_ = L.create_cq(ctx_, (spec_.tx_depth + 1) * spec_.qps, nullptr, nullptr, 0);
  if (!scq_) fail_call("ibv_create_cq", errno);
  rcq_ = L.create_cq(ctx_, spec_.rx_depth * spec_.qps + 1, nullptr, nullptr, 0);
  if (!rcq_) fail_call("ibv_create_cq", errno);
}

ibv_qp_init_attr Resources::qp_init(bool with_inline) const {
  ibv_qp_init_attr a{};
  a.send_cq = scq_;
  a.recv_cq = rcq_;
  a.qp_type = IBV_QPT_RC;
  a.cap.max_send_wr = static_cast<uint32_t>(spec_.tx_depth + 1);
  a.cap.max_recv_wr = static_cast<uint32_t>(spec_.rx_depth);
  a.cap.max_send_sge = 1;
  a.cap.max_recv_sge = 1;
  a.cap.max_inline_data = with_inline ? spec_.inline_bytes : 0;
  return a;
}

void Resources::create_qps() {
  wd_.begin("ibv_create_qp");
  std::mt19937 rng(std::random_device{}());
  own_qps_ = true;
  for (int q = 0; q < spec_.qps; ++q) {
    auto a = qp_init(true);
    ibv_qp* qp = L.create_qp(pd_, &a);
    if (!qp && a.cap.max_inline_data) {
      a = qp_init(false);
      qp = L.create_qp(pd_, &a);
    }
    if (!qp) fail_call("ibv_create_qp", errno);
    max_inline_ = a.cap.max_inline_data;
    qps_.push_back(qp);
    psns_.push_back(rng() & kPsnMask);
    ibv_qp_attr m{};
    m.qp_state = IBV_QPS_INIT;
    m.pkey_index = 0;
    m.port_num = static_cast<uint8_t>(local_.port);
    m.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    if (int rc = L.modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
      fail_call("ibv_modify_qp(INIT)", rc);
  }
}

void Resources::adopt_qp(ibv_qp* qp, std::uint32_t max_inline) {
  max_inline_ = max_inline;
  qps_.push_back(qp);
}

std::vector<QpAddr> Resources::qp_addrs() const {
  std::vector<QpAddr> v;
  for (std::size_t q = 0; q < qps_.size(); ++q)
    v.push_back({qps_[q]->qp_num, psns_[q], local_.gid, local_.lid.value_or(0)});
  return v;
}

void Resources::connect_qps(const std::vector<QpAddr>& remote, int path_mtu, const Endpoint& rep) {
  if (remote.size() != qps_.size())
    throw Failure(control_lost(wd_.where(), "the peer sent " + std::to_string(remote.size()) + " QPs, expected " +
                                                std::to_string(qps_.size())));
  const bool global = local_.link_layer == "Ethernet" || !rep.lid || *rep.lid == 0;
  for (std::size_t q = 0; q < qps_.size(); ++q) {
    wd_.begin("ibv_modify_qp(RTR)");
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = mtu_enum(path_mtu);
    a.dest_qp_num = remote[q].qpn;
    a.rq_psn = remote[q].psn;
    a.max_dest_rd_atomic = static_cast<uint8_t>(rd_atom_);
    a.min_rnr_timer = kMinRnrTimer;
    a.ah_attr.port_num = static_cast<uint8_t>(local_.port);
    a.ah_attr.dlid = static_cast<uint16_t>(remote[q].lid);
    if (global) {
      a.ah_attr.is_global = 1;
      if (!parse_gid(remote[q].gid, a.ah_attr.grh.dgid))
        throw Failure(control_lost(wd_.where(), "the peer's GID '" + remote[q].gid + "' is unreadable"));
      a.ah_attr.grh.sgid_index = static_cast<uint8_t>(local_.gid_index.value_or(0));
      a.ah_attr.grh.hop_limit = kHopLimit;
    }
    if (int rc = L.modify_qp(qps_[q], &a,
                             IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
      fail_call("ibv_modify_qp(RTR)", rc);
    wd_.begin("ibv_modify_qp(RTS)");
    ibv_qp_attr s{};
    s.qp_state = IBV_QPS_RTS;
    s.timeout = kAckTimeout;
    s.retry_cnt = kQpRetryCount;
    s.rnr_retry = kQpRnrRetry;
    s.sq_psn = psns_[q];
    s.max_rd_atomic = static_cast<uint8_t>(rd_atom_);
    if (int rc = L.modify_qp(qps_[q], &s,
                             IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                                 IBV_QP_MAX_QP_RD_ATOMIC))
      fail_call("ibv_modify_qp(RTS)", rc);
  }
}

BufKey Resources::buf_key() const {
  return {reinterpret_cast<std::uint64_t>(buf_), mr_ ? mr_->rkey : 0, 2 * spec_.region_bytes};
}

void Resources::fail_wc(const ibv_wc& wc) const {
  Finding f = completion_error(wd_.where(), wc.status, wc.opcode, wc.vendor_err, local_);
  // A port that went down mid-run shows up as whatever status the provider picks (rxe:
  // IBV_WC_LOC_QP_OP_ERR, hardware: usually IBV_WC_RETRY_EXC_ERR); its state now says why.
  ibv_port_attr pa;
  if (ctx_ && L.query_port(ctx_, static_cast<uint8_t>(local_.port), pa) == 0 && pa.state != IBV_PORT_ACTIVE) {
    std::string state = probe::verbs_port_state_name(pa.state);
    f.message += "; port " + local_.device + ":" + std::to_string(local_.port) + " is " + state + " now";
    f.evidence += " port_state_now=" + state;
    f.remedy = "The link went down during the run: check the cable, the switch port and `ip link` / "
               "`ibstat` for " + local_.device + ", then run again.";
  }
  throw Failure(f);
}

}  // namespace fabscope::rdma

#endif
