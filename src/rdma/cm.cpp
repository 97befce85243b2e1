#include "rdma/cm.hpp"

#ifdef FABSCOPE_RDMA_HEADERS

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>

#include "rdma/findings.hpp"

namespace fabscope::rdma {

namespace {

// How long one look at the event channel waits before the watchdog and the peer's control
// messages are looked at again.
constexpr double kEventPollS = 0.2;
// rdma_resolve_addr and rdma_resolve_route get the watchdog's time, at most this: RDMA CM's own
// timer then ends a lost resolution with an error event.
constexpr double kMaxResolveS = 60;

sockaddr_in sin_of(const std::string& addr, int port) {
  sockaddr_in s{};
  s.sin_family = AF_INET;
  s.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, addr.c_str(), &s.sin_addr);
  return s;
}

}  // namespace

CmConnector::CmConnector(Resources& res, Endpoint& local, Watchdog& wd) : res_(res), local_(local), wd_(wd) {}

CmConnector::~CmConnector() {
  if (!L.error.empty()) return;
  for (auto* id : ids_) {
    if (id->qp) L.cm_destroy_qp(id);
    L.destroy_id(id);
  }
  if (listen_id_) L.destroy_id(listen_id_);
  if (ch_) L.destroy_event_channel(ch_);
}

CmConnector::Event CmConnector::wait(rdma_cm_event_type want, const std::string& peer) {
  for (;;) {
    pollfd p{ch_->fd, POLLIN, 0};
    int ms = static_cast<int>(std::min(wd_.remaining_s(), kEventPollS) * 1000) + 1;
    int n = ::poll(&p, 1, ms);
    if (n <= 0) {
      wd_.check();
      // The peer may have failed meanwhile (memlock, no device): its error ends the wait.
      if (ctl_)
        while (ctl_->poll()) {
        }
      continue;
    }
    rdma_cm_event* ev = nullptr;
    if (L.get_cm_event(ch_, &ev) != 0) res_.fail_call("rdma_get_cm_event", errno);
    Event e{ev->event, ev->status, ev->id};
    L.ack_cm_event(ev);
    wd_.tick();
    if (e.type == want) return e;
    if (e.type == RDMA_CM_EVENT_DISCONNECTED && want != RDMA_CM_EVENT_DISCONNECTED) continue;
    const char* name = L.event_str ? L.event_str(e.type) : "RDMA_CM_EVENT_?";
    throw Failure(cm_event(wd_.where(), e.type, name ? name : "?", e.status, peer, local_));
  }
}

void CmConnector::ensure_channel() {
  if (!L.cm)
    throw Failure(no_device("librdmacm.so.1 is not loadable: RDMA CM is unavailable",
                            "Install librdmacm1 (rdma-core), or run both sides with --oob tcp."));
  if (!ch_) {
    ch_ = L.create_event_channel();
    if (!ch_) res_.fail_call("rdma_create_event_channel", errno);
  }
}

void CmConnector::adopt_context(ibv_context* c) {
  if (res_.created()) return;
  const char* name = L.get_device_name(c->device);
  if (name && local_.device != name) {
    // RDMA CM routes by address; what it picked is what runs, and the output says so.
    local_.device = name;
  }
  res_.create_on(c);
}

ibv_qp* CmConnector::create_qp(rdma_cm_id* id) {
  auto a = res_.qp_init(true);
  if (L.cm_create_qp(id, res_.pd(), &a) != 0) {
    a = res_.qp_init(false);
    if (L.cm_create_qp(id, res_.pd(), &a) != 0) res_.fail_call("rdma_create_qp", errno);
  }
  res_.adopt_qp(id->qp, a.cap.max_inline_data);
  return id->qp;
}

rdma_conn_param CmConnector::conn_param() const {
  rdma_conn_param p{};
  p.responder_resources = static_cast<uint8_t>(res_.rd_atom());
  p.initiator_depth = static_cast<uint8_t>(res_.rd_atom());
  p.retry_count = kQpRetryCount;
  p.rnr_retry_count = kQpRnrRetry;
  return p;
}

void CmConnector::listen(const std::string& address, int port, int connections) {
  ensure_channel();
  wd_.begin("rdma_listen");
  if (L.create_id(ch_, &listen_id_, nullptr, RDMA_PS_TCP) != 0) res_.fail_call("rdma_create_id", errno);
  sockaddr_in sin = sin_of(address, port);
  if (L.bind_addr(listen_id_, reinterpret_cast<sockaddr*>(&sin)) != 0)
    res_.fail_call("rdma_bind_addr(" + address + ":" + std::to_string(port) + ")", errno);
  if (L.listen(listen_id_, connections) != 0) res_.fail_call("rdma_listen", errno);
}

void CmConnector::accept(int connections) {
  for (int q = 0; q < connections; ++q) {
    wd_.begin("RDMA CM accept (QP " + std::to_string(q) + ")");
    Event e = wait(RDMA_CM_EVENT_CONNECT_REQUEST, "client");
    ids_.push_back(e.id);
    adopt_context(e.id->verbs);
    create_qp(e.id);
    rdma_conn_param p = conn_param();
    if (L.accept(e.id, &p) != 0) res_.fail_call("rdma_accept", errno);
    wait(RDMA_CM_EVENT_ESTABLISHED, "client");
  }
}

void CmConnector::connect(const std::string& address, int port, int connections) {
  ensure_channel();
  sockaddr_in dst = sin_of(address, port);
  sockaddr_in src = sin_of(local_.address, 0);
  const int ms = static_cast<int>(std::min(wd_.timeout_s(), kMaxResolveS) * 1000);
  for (int q = 0; q < connections; ++q) {
    rdma_cm_id* id = nullptr;
    if (L.create_id(ch_, &id, nullptr, RDMA_PS_TCP) != 0) res_.fail_call("rdma_create_id", errno);
    ids_.push_back(id);
    wd_.begin("rdma_resolve_addr");
    if (L.resolve_addr(id, local_.address.empty() ? nullptr : reinterpret_cast<sockaddr*>(&src),
                       reinterpret_cast<sockaddr*>(&dst), ms) != 0)
      res_.fail_call("rdma_resolve_addr(" + address + ")", errno);
    wait(RDMA_CM_EVENT_ADDR_RESOLVED, address);
    wd_.begin("rdma_resolve_route");
    if (L.resolve_route(id, ms) != 0) res_.fail_call("rdma_resolve_route", errno);
    wait(RDMA_CM_EVENT_ROUTE_RESOLVED, address);
    adopt_context(id->verbs);
    create_qp(id);
    wd_.begin("rdma_connect (QP " + std::to_string(q) + ")");
    rdma_conn_param p = conn_param();
    if (L.connect(id, &p) != 0) res_.fail_call("rdma_connect", errno);
    wait(RDMA_CM_EVENT_ESTABLISHED, address);
  }
}

}  // namespace fabscope::rdma

#endif
