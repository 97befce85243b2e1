#include "mesh/mesh_rdma.hpp"

#include "probe/ibverbs.hpp"

#ifdef FABSCOPE_IBVERBS_HEADER
#include <arpa/inet.h>
#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <random>

#include "core/node_info.hpp"
#include "core/root.hpp"
#include "core/wc_status.hpp"
#include "probe/net.hpp"
#include "probe/rdma.hpp"
#include "rdma/choose.hpp"
#endif

namespace fabscope::mesh {

#ifndef FABSCOPE_IBVERBS_HEADER

struct MeshUd::Impl {};
std::unique_ptr<MeshUd> MeshUd::open(const MeshRdmaOptions&, std::string& why_not) {
  why_not = "this fabscope was built without the libibverbs headers";
  return nullptr;
}
MeshUd::MeshUd(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MeshUd::~MeshUd() = default;
int MeshUd::fd() const { return -1; }
const MeshRdmaInfo& MeshUd::info() const {
  static const MeshRdmaInfo none;
  return none;
}
MeshRdmaEndpoint MeshUd::endpoint() const { return {}; }
std::uint64_t MeshUd::add_remote(const MeshRdmaEndpoint&, std::string& err) {
  err = "no RDMA";
  return 0;
}
void MeshUd::remove_remote(std::uint64_t) {}
bool MeshUd::send(std::uint64_t, const MeshDatagram&, std::uint64_t, std::string& err) {
  err = "no RDMA";
  return false;
}
bool MeshUd::drain(std::vector<MeshUdEvent>&) { return false; }
void MeshUd::poll_sends(std::vector<MeshUdEvent>&) {}
const std::string& MeshUd::broken() const {
  static const std::string none;
  return none;
}

#else

namespace {

// The mesh's Q_Key: a datagram with another key is dropped by the device.
constexpr std::uint32_t kMeshQkey = 0x46534d51;  // "FSMQ"
constexpr std::size_t kGrhBytes = 40;           // every UD receive buffer starts with room for the GRH
// A receive holds the largest UD message there is: a UD message is one packet, and no MTU is
// above 4096 bytes. Anyone on the segment may send the queue pair anything up to its MTU, and
// soft-RoCE (Linux 6.1) answers a datagram longer than the posted buffer by putting the whole
// queue pair in the error state (IBV_WC_LOC_QP_OP_ERR): with 64-byte buffers, a stranger's
// datagram of 65 bytes reset the endpoint of every node it reached (tests/vm/mesh.sh, the
// strangers phase). 128 receives of 4136 bytes: 517 KiB per node.
constexpr std::size_t kLargestUdMessage = 4096;
constexpr std::size_t kRecvSlot = kGrhBytes + kLargestUdMessage;
constexpr std::size_t kSendSlot = 64;
constexpr std::uint64_t kRecvBit = 1ull << 63;

std::string errno_text(int e) { return std::strerror(e != 0 ? e : EIO); }

}  // namespace

struct MeshUd::Impl {
  const probe::IbverbsLib& L = probe::ibverbs();
  MeshRdmaInfo info;
  MeshRdmaEndpoint ep;
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_comp_channel* channel = nullptr;
  // Receives complete on rcq, which wakes the loop through the channel; sends on scq, which is
  // polled without waking anyone (a probe's send completion is only a slot to free, and its
  // timestamp is read when the reply comes).
  struct Cq {
    ibv_cq_ex* x = nullptr;  // with completion timestamps
    ibv_cq* cq = nullptr;    // either way (ibv_cq_ex_to_cq of x, or a plain one)
  };
  Cq rcq, scq;
  ibv_qp* qp = nullptr;
  ibv_mr* mr = nullptr;
  std::vector<unsigned char> buf;
  int recv_depth = 0, send_depth = 0;
  std::vector<int> free_send;              // send slots not in flight
  std::vector<std::uint64_t> send_tag;     // per send slot
  struct Remote {
    ibv_ah* ah = nullptr;
    std::uint32_t qpn = 0;
  };
  std::map<std::uint64_t, Remote> remotes;
  std::uint64_t next_remote = 1;
  unsigned unacked = 0;
  std::string broken;  // the first failed completion

  ~Impl() {
    for (auto& [id, r] : remotes) L.destroy_ah(r.ah);
    if (qp) L.destroy_qp(qp);
    if (rcq.cq) {
      if (unacked) L.ack_cq_events(rcq.cq, unacked);
      L.destroy_cq(rcq.cq);
    }
    if (scq.cq) L.destroy_cq(scq.cq);
    if (mr) L.dereg_mr(mr);
    if (channel) L.destroy_comp_channel(channel);
    if (pd) L.dealloc_pd(pd);
    if (ctx) L.close_device(ctx);
  }

  unsigned char* recv_slot(int i) { return buf.data() + static_cast<std::size_t>(i) * kRecvSlot; }
  unsigned char* send_slot(int i) {
    return buf.data() + static_cast<std::size_t>(recv_depth) * kRecvSlot + static_cast<std::size_t>(i) * kSendSlot;
  }

  bool post_recv(int i) {
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(recv_slot(i)), static_cast<std::uint32_t>(kRecvSlot), mr->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = kRecvBit | static_cast<std::uint64_t>(i);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    return ibv_post_recv(qp, &wr, &bad) == 0;
  }

  void fail(const std::string& call, int err, std::string& why) {
    why = call + " on " + info.device + ":" + std::to_string(info.port) + ": " + errno_text(err);
  }

  bool create(const rdma::Endpoint& e, const MeshRdmaOptions& o, std::string& why) {
    info.device = e.device;
    info.port = e.port;
    info.link_layer = e.link_layer;
    info.transport = e.link_layer == "InfiniBand" ? "rdma_ib" : "rdma_roce";
    const bool eth = e.link_layer != "InfiniBand";
    info.gid_index = eth ? e.gid_index.value_or(-1) : -1;
    if (eth && info.gid_index < 0) {
      why = "no RoCE v2 GID on " + e.device + ":" + std::to_string(e.port);
      return false;
    }
    int n = 0;
    ibv_device** list = L.get_device_list(&n);
    if (!list) {
      fail("ibv_get_device_list", errno, why);
      return false;
    }
    for (int i = 0; i < n && !ctx; ++i)
      if (e.device == L.get_device_name(list[i])) {
        ctx = L.open_device(list[i]);
        if (!ctx) fail("ibv_open_device", errno, why);
      }
    L.free_device_list(list);
    if (!ctx) {
      if (why.empty()) why = "libibverbs lists no device " + e.device;
      return false;
    }
    ibv_port_attr pa{};
    if (int rc = L.query_port(ctx, static_cast<std::uint8_t>(e.port), pa); rc != 0) {
      fail("ibv_query_port", rc, why);
      return false;
    }
    if (pa.state != IBV_PORT_ACTIVE) {
      why = e.device + ":" + std::to_string(e.port) + " is not ACTIVE";
      return false;
    }
    ep.lid = eth ? 0 : pa.lid;
    ep.link = eth ? kMeshLinkEth : kMeshLinkIb;
    ibv_gid gid{};
    if (L.query_gid(ctx, static_cast<std::uint8_t>(e.port), eth ? info.gid_index : 0, &gid) != 0) {
      fail("ibv_query_gid", errno, why);
      return false;
    }
    std::memcpy(ep.gid.data(), gid.raw, 16);

    // The device clock's rate: completion timestamps are ticks of it.
    verbs_context* vctx = verbs_get_ctx_op(ctx, query_device_ex);
    ibv_device_attr_ex ax{};
    if (vctx && vctx->query_device_ex(ctx, nullptr, &ax, sizeof ax) == 0) info.core_clock_khz = ax.hca_core_clock;

    if (!(pd = L.alloc_pd(ctx))) {
      fail("ibv_alloc_pd", errno, why);
      return false;
    }
    if (!(channel = L.create_comp_channel(ctx))) {
      fail("ibv_create_comp_channel", errno, why);
      return false;
    }
    const int fl = ::fcntl(channel->fd, F_GETFL);
    if (fl < 0 || ::fcntl(channel->fd, F_SETFL, fl | O_NONBLOCK) != 0) {
      fail("fcntl(O_NONBLOCK) on the completion channel", errno, why);
      return false;
    }
    recv_depth = o.recv_depth;
    send_depth = o.send_depth;
    if (!create_cq(rcq, recv_depth, channel, why) || !create_cq(scq, send_depth, nullptr, why)) return false;
    // Timestamps only where both queues give them (a provider either does or does not).
    info.timestamps = rcq.x && scq.x;
    buf.assign(static_cast<std::size_t>(recv_depth) * kRecvSlot + static_cast<std::size_t>(send_depth) * kSendSlot, 0);
    if (!(mr = L.reg_mr(pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE))) {
      fail("ibv_reg_mr", errno, why);
      return false;
    }
    ibv_qp_init_attr qa{};
    qa.send_cq = scq.cq;
    qa.recv_cq = rcq.cq;
    qa.qp_type = IBV_QPT_UD;
    qa.sq_sig_all = 1;
    qa.cap.max_send_wr = static_cast<std::uint32_t>(send_depth);
    qa.cap.max_recv_wr = static_cast<std::uint32_t>(recv_depth);
    qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
    if (!(qp = L.create_qp(pd, &qa))) {
      fail("ibv_create_qp(UD)", errno, why);
      return false;
    }
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.pkey_index = 0;
    a.port_num = static_cast<std::uint8_t>(e.port);
    a.qkey = kMeshQkey;
    if (int rc = L.modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY); rc != 0) {
      fail("ibv_modify_qp(INIT)", rc, why);
      return false;
    }
    a = {};
    a.qp_state = IBV_QPS_RTR;
    if (int rc = L.modify_qp(qp, &a, IBV_QP_STATE); rc != 0) {
      fail("ibv_modify_qp(RTR)", rc, why);
      return false;
    }
    a = {};
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = std::random_device{}() & 0xffffff;
    if (int rc = L.modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN); rc != 0) {
      fail("ibv_modify_qp(RTS)", rc, why);
      return false;
    }
    ep.qpn = qp->qp_num;
    ep.flags = info.timestamps ? kMeshFlagTimestamps : 0;
    for (int i = 0; i < recv_depth; ++i)
      if (!post_recv(i)) {
        fail("ibv_post_recv", errno, why);
        return false;
      }
    send_tag.assign(static_cast<std::size_t>(send_depth), 0);
    for (int i = send_depth - 1; i >= 0; --i) free_send.push_back(i);
    if (int rc = ibv_req_notify_cq(rcq.cq, 0); rc != 0) {
      fail("ibv_req_notify_cq", rc, why);
      return false;
    }
    return true;
  }

  void on_completion(std::uint64_t wr_id, ibv_wc_status status, std::uint32_t byte_len, std::uint32_t src_qp,
                     std::uint64_t ts, std::vector<MeshUdEvent>& out) {
    MeshUdEvent ev;
    ev.at = std::chrono::steady_clock::now();
    if (ts && info.timestamps) ev.hw_ns = mesh_ticks_to_ns(ts, info.core_clock_khz).value_or(0);
    if (wr_id & kRecvBit) {
      const int i = static_cast<int>(wr_id & ~kRecvBit);
      if (i < 0 || i >= recv_depth) return;
      if (status == IBV_WC_SUCCESS && byte_len >= kGrhBytes) {
        auto d = decode_datagram(recv_slot(i) + kGrhBytes, byte_len - kGrhBytes);
        if (d) {
          ev.kind = MeshUdEvent::Kind::Received;
          ev.msg = *d;
          ev.src_qp = src_qp;
          out.push_back(ev);
        } else {
          ev.kind = MeshUdEvent::Kind::Garbage;
          ev.src_qp = src_qp;
          out.push_back(ev);
        }
      }
      // A receive that failed is not posted again: the queue pair is in error.
      if (status == IBV_WC_SUCCESS) post_recv(i);
      else if (broken.empty()) broken = std::string("receive completion: ") + core::wc_status_name(status);
      return;
    }
    const int i = static_cast<int>(wr_id);
    if (i < 0 || i >= send_depth) return;
    ev.tag = send_tag[static_cast<std::size_t>(i)];
    free_send.push_back(i);
    if (status == IBV_WC_SUCCESS) {
      ev.kind = MeshUdEvent::Kind::Sent;
    } else {
      ev.kind = MeshUdEvent::Kind::SendFailed;
      ev.error = std::string("send completion: ") + core::wc_status_name(status);
      if (broken.empty()) broken = ev.error;
    }
    out.push_back(ev);
  }

  // A CQ with completion timestamps where the device's clock rate is known, else a plain one.
  bool create_cq(Cq& q, int cqe, ibv_comp_channel* ch, std::string& why) {
    if (info.core_clock_khz > 0) {
      ibv_cq_init_attr_ex ca{};
      ca.cqe = static_cast<std::uint32_t>(cqe);
      ca.channel = ch;
      ca.wc_flags = static_cast<std::uint64_t>(IBV_WC_STANDARD_FLAGS) |
                    static_cast<std::uint64_t>(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP);
      q.x = ibv_create_cq_ex(ctx, &ca);  // inline: the provider's op, no symbol
      if (q.x) {
        q.cq = ibv_cq_ex_to_cq(q.x);
        return true;
      }
    }
    if (!(q.cq = L.create_cq(ctx, cqe, nullptr, ch, 0))) {
      fail("ibv_create_cq", errno, why);
      return false;
    }
    return true;
  }

  // At most `budget` completions of `q`; how many were taken.
  std::size_t poll_all(Cq& q, std::vector<MeshUdEvent>& out, std::size_t budget) {
    std::size_t taken = 0;
    if (budget == 0) return 0;
    if (q.x) {
      ibv_cq_ex* x = q.x;
      ibv_poll_cq_attr pa{};
      if (ibv_start_poll(x, &pa) != 0) return 0;
      do {
        const auto st = x->status;
        const bool recv = (x->wr_id & kRecvBit) != 0;
        on_completion(x->wr_id, st, st == IBV_WC_SUCCESS && recv ? ibv_wc_read_byte_len(x) : 0,
                      st == IBV_WC_SUCCESS && recv ? ibv_wc_read_src_qp(x) : 0,
                      st == IBV_WC_SUCCESS && info.timestamps ? ibv_wc_read_completion_ts(x) : 0, out);
      } while (++taken < budget && ibv_next_poll(x) == 0);
      ibv_end_poll(x);
      return taken;
    }
    ibv_wc wc[32];
    while (taken < budget) {
      const int n = ibv_poll_cq(q.cq, static_cast<int>(std::min<std::size_t>(32, budget - taken)), wc);
      if (n <= 0) break;
      for (int k = 0; k < n; ++k) on_completion(wc[k].wr_id, wc[k].status, wc[k].byte_len, wc[k].src_qp, 0, out);
      taken += static_cast<std::size_t>(n);
    }
    return taken;
  }
};

std::unique_ptr<MeshUd> MeshUd::open(const MeshRdmaOptions& o, std::string& why_not) {
  const auto& L = probe::ibverbs();
  if (!L.error.empty()) {
    why_not = L.error;
    return nullptr;
  }
  if (!L.has_mesh_calls()) {
    why_not = "libibverbs.so.1 lacks a call the mesh needs (address handles or completion channels)";
    return nullptr;
  }
  // The engine's choice on this node's devices and addresses (sysfs and getifaddrs only).
  NodeInfo node;
  const core::Root root("/");
  node.rdma_devices = probe::collect_rdma(root, node.probe_notes);
  node.netdevs = probe::collect_netdevs(root, node.probe_notes);
  probe::link_rdma_ports(node.rdma_devices, node.netdevs);
  probe::fill_ipv4_live(node.netdevs);
  const rdma::ChoiceInput in{o.device, o.port, o.gid_index, o.local_ipv4, "the mesh's peers", false};
  const rdma::Chosen c = rdma::choose(node, in);
  if (!c.problems.empty()) {
    const auto& f = c.problems.front();
    why_not = f.message + (f.evidence.empty() || f.evidence == f.message ? "" : " (" + f.evidence + ")");
    return nullptr;
  }
  auto impl = std::make_unique<Impl>();
  for (const auto& ch : c.choices) impl->info.why += (impl->info.why.empty() ? "" : "; ") + ch.what + " " + ch.value + ": " + ch.reason;
  if (!impl->create(c.endpoint, o, why_not)) return nullptr;
  return std::unique_ptr<MeshUd>(new MeshUd(std::move(impl)));
}

MeshUd::MeshUd(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MeshUd::~MeshUd() = default;

int MeshUd::fd() const { return impl_->channel->fd; }
const MeshRdmaInfo& MeshUd::info() const { return impl_->info; }
MeshRdmaEndpoint MeshUd::endpoint() const { return impl_->ep; }

std::uint64_t MeshUd::add_remote(const MeshRdmaEndpoint& e, std::string& err) {
  auto& I = *impl_;
  if (e.link != I.ep.link) {
    err = mesh_rdma_status_text(MeshRdmaStatus::LinkDiffers);
    return 0;
  }
  ibv_ah_attr a{};
  a.port_num = static_cast<std::uint8_t>(I.info.port);
  if (e.link == kMeshLinkEth) {
    a.is_global = 1;
    std::memcpy(a.grh.dgid.raw, e.gid.data(), 16);
    a.grh.sgid_index = static_cast<std::uint8_t>(I.info.gid_index);
    a.grh.hop_limit = 64;
  } else {
    a.dlid = e.lid;
  }
  ibv_ah* ah = I.L.create_ah(I.pd, &a);
  if (!ah) {
    char text[INET6_ADDRSTRLEN] = {};
    inet_ntop(AF_INET6, e.gid.data(), text, sizeof text);
    err = "ibv_create_ah to " + (e.link == kMeshLinkEth ? std::string("GID ") + text : "LID " + std::to_string(e.lid)) +
          ": " + errno_text(errno);
    return 0;
  }
  const std::uint64_t id = I.next_remote++;
  I.remotes[id] = {ah, e.qpn};
  return id;
}

void MeshUd::remove_remote(std::uint64_t remote) {
  auto& I = *impl_;
  auto it = I.remotes.find(remote);
  if (it == I.remotes.end()) return;
  // A send still in flight needs no handle: the providers copy the address vector into the work
  // request when it is posted.
  I.L.destroy_ah(it->second.ah);
  I.remotes.erase(it);
}

bool MeshUd::send(std::uint64_t remote, const MeshDatagram& d, std::uint64_t tag, std::string& err) {
  auto& I = *impl_;
  auto it = I.remotes.find(remote);
  if (it == I.remotes.end()) {
    err = "no address handle";
    return false;
  }
  if (I.free_send.empty()) {
    err = "every send slot is in flight";
    return false;
  }
  const int slot = I.free_send.back();
  auto b = encode_datagram(d);
  std::memcpy(I.send_slot(slot), b.data(), b.size());
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(I.send_slot(slot)), static_cast<std::uint32_t>(b.size()), I.mr->lkey};
  ibv_send_wr wr{};
  wr.wr_id = static_cast<std::uint64_t>(slot);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.ud.ah = it->second.ah;
  wr.wr.ud.remote_qpn = it->second.qpn;
  wr.wr.ud.remote_qkey = kMeshQkey;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(I.qp, &wr, &bad); rc != 0) {
    err = "ibv_post_send: " + errno_text(rc);
    return false;
  }
  I.free_send.pop_back();
  I.send_tag[static_cast<std::size_t>(slot)] = tag;
  return true;
}

const std::string& MeshUd::broken() const { return impl_->broken; }

bool MeshUd::drain(std::vector<MeshUdEvent>& out) {
  auto& I = *impl_;
  ibv_cq* ev_cq = nullptr;
  void* ev_ctx = nullptr;
  while (I.L.get_cq_event(I.channel, &ev_cq, &ev_ctx) == 0) ++I.unacked;
  if (I.unacked >= 64) {
    I.L.ack_cq_events(I.rcq.cq, I.unacked);
    I.unacked = 0;
  }
  constexpr auto kAll = static_cast<std::size_t>(-1);
  // Poll, ask for the next event, poll again: a completion between the two would not wake us.
  // A full budget leaves the rest for the next call, which the caller makes at once (no event
  // asked for meanwhile: it would only wake the loop for what it reads anyway).
  auto budget = static_cast<std::size_t>(I.recv_depth);
  budget -= I.poll_all(I.rcq, out, budget);
  if (budget > 0) {
    ibv_req_notify_cq(I.rcq.cq, 0);
    budget -= I.poll_all(I.rcq, out, budget);
  }
  I.poll_all(I.scq, out, kAll);
  return budget == 0;
}

void MeshUd::poll_sends(std::vector<MeshUdEvent>& out) {
  impl_->poll_all(impl_->scq, out, static_cast<std::size_t>(-1));
}

#endif

}  // namespace fabscope::mesh
