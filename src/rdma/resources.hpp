#pragma once
// The verbs resources of one side of a test: the device context, a protection domain, one
// registered buffer cut into an inbox and an outbox per QP, a send and a receive completion
// queue, and the RC queue pairs. Opened on the device itself (--oob tcp: open_device, then the
// QPs connected from numbers the peer sent) or on the context RDMA CM resolved (cm.hpp: create_on,
// then one QP per connection). Every step runs under the watchdog; every failure throws Failure
// with the finding that explains it (the call, errno, the device and port).
// Internal to fabscope_rdma: the engine (engine.hpp) builds on it, and so can the planned mesh
// prober (no session, no loops needed).
#include <cstdint>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "rdma/lib.hpp"
#include "rdma/types.hpp"
#include "rdma/watchdog.hpp"

namespace fabscope::rdma {

struct QpAddr {  // --oob tcp: what the peer needs to move our QP to RTR
  std::uint32_t qpn = 0, psn = 0;
  std::string gid;
  std::uint32_t lid = 0;
};
void to_json(json& j, const QpAddr& v);
void from_json(const json& j, QpAddr& v);

struct BufKey {  // where the peer may read and write: per QP an inbox then an outbox
  std::uint64_t addr = 0;
  std::uint32_t rkey = 0;
  std::uint64_t stride = 0;  // bytes from one QP's region to the next
};
void to_json(json& j, const BufKey& v);
void from_json(const json& j, BufKey& v);

// Bytes of locked memory a run of opts needs on each side.
std::uint64_t buffer_bytes(const Options& opts);
// Whether the kernel will let this process pin `need` bytes: RLIMIT_MEMLOCK (soft) or
// CAP_IPC_LOCK. Fills limit with the soft limit (UINT64_MAX = unlimited).
bool memlock_allows(std::uint64_t need, std::uint64_t& limit);

// Our QPs' retries, over verbs (RTS) and RDMA CM (the connection's parameters): 7 transport
// retries, the 3-bit field's most; 7 receiver-not-ready retries, which is without end (a SEND
// that arrives before the peer reposted a receive waits instead of failing the test).
constexpr std::uint8_t kQpRetryCount = 7;
constexpr std::uint8_t kQpRnrRetry = 7;

// What the resources are sized for.
struct ResourceSpec {
  int qps = 1;
  std::uint64_t region_bytes = 0;  // each QP's inbox, and each QP's outbox
  int tx_depth = 1;                // outstanding sends per QP
  int rx_depth = 1;                // receives posted per QP
  std::uint32_t inline_bytes = 0;  // inline data asked of each QP (none where the device refuses)
  std::uint64_t buffer_bytes() const { return 2 * region_bytes * static_cast<std::uint64_t>(qps); }
};
// A `fabscope rdma` session's: the largest size rounded up to a page per region, tx_depth + 1
// sends, receives for SEND only, inline data for latency tests.
ResourceSpec resource_spec(const Options& opts);

}  // namespace fabscope::rdma

#ifdef FABSCOPE_RDMA_HEADERS

namespace fabscope::rdma {

class Resources {
 public:
  // local: the device and port the QPs run on, named in findings (RDMA CM may change the device
  // before create_on). wd: each step begins there.
  Resources(const ResourceSpec& spec, const Endpoint& local, Watchdog& wd);
  ~Resources();
  Resources(const Resources&) = delete;
  Resources& operator=(const Resources&) = delete;

  // --oob tcp: opens local.device, creates everything on it, QPs in INIT.
  void open_device();
  // Creates the PD, buffer, MR and CQs on a context that stays open elsewhere (RDMA CM's).
  void create_on(ibv_context* ctx);
  bool created() const { return ctx_ != nullptr; }

  // QP attributes for ibv_create_qp or rdma_create_qp; with_inline false asks no inline data
  // (the retry where the device refuses spec.inline_bytes).
  ibv_qp_init_attr qp_init(bool with_inline) const;
  // A QP created on pd() by someone else (rdma_create_qp with qp_init's attributes), who also
  // destroys it; max_inline is what the device granted.
  void adopt_qp(ibv_qp* qp, std::uint32_t max_inline);

  // --oob tcp: what the peer needs, and our QPs moved to RTR and RTS towards the peer's.
  std::vector<QpAddr> qp_addrs() const;
  void connect_qps(const std::vector<QpAddr>& remote, int path_mtu_bytes, const Endpoint& remote_ep);

  BufKey buf_key() const;
  const ResourceSpec& spec() const { return spec_; }
  std::uint8_t* inbox(int q) const { return buf_ + 2 * spec_.region_bytes * static_cast<std::uint64_t>(q); }
  std::uint8_t* outbox(int q) const { return inbox(q) + spec_.region_bytes; }
  std::uint32_t lkey() const { return mr_->lkey; }
  ibv_qp* qp(int q) const { return qps_[static_cast<std::size_t>(q)]; }
  ibv_cq* send_cq() const { return scq_; }
  ibv_cq* recv_cq() const { return rcq_; }
  ibv_pd* pd() const { return pd_; }
  std::uint32_t max_inline() const { return max_inline_; }
  int rd_atom() const { return rd_atom_; }  // outstanding READs per QP, both directions

  // Throws Failure(rdma.verbs_call) naming the call, the error and the endpoint.
  [[noreturn]] void fail_call(const std::string& call, int err) const;
  // Throws Failure for a completion that did not succeed; a port that went down is named.
  void check_wc(const ibv_wc& wc) const {
    if (wc.status != IBV_WC_SUCCESS) fail_wc(wc);
  }

 private:
  void create_qps();
  [[noreturn]] void fail_wc(const ibv_wc& wc) const;

  ResourceSpec spec_;
  const Endpoint& local_;
  Watchdog& wd_;
  const Lib& L = lib();
  ibv_context* own_ctx_ = nullptr;  // open_device: opened here; create_on: null
  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_cq* scq_ = nullptr;
  ibv_cq* rcq_ = nullptr;
  ibv_mr* mr_ = nullptr;
  std::uint8_t* buf_ = nullptr;
  std::vector<ibv_qp*> qps_;
  bool own_qps_ = false;  // created here (open_device), not adopted
  std::vector<std::uint32_t> psns_;
  std::uint32_t max_inline_ = 0;
  int rd_atom_ = 1;
};

}  // namespace fabscope::rdma

#endif
