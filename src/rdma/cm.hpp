#pragma once
// RDMA CM connection setup for a side's Resources: the server listens and accepts one
// connection per QP, the client connects one per QP, one after the other. RDMA CM routes by
// address: the first connection's device context becomes the resources' (and the endpoint's
// device, so the output names what ran), and each connection creates its QP there. Every wait
// polls the event channel under the watchdog and, when given, the control connection, so that
// an error the peer reports there ends the wait at once.
// Internal to fabscope_rdma: the engine (engine.hpp) builds on it, and so can the planned mesh
// prober (no session, no loops needed).
#include <string>
#include <vector>

#include "rdma/control.hpp"
#include "rdma/lib.hpp"
#include "rdma/resources.hpp"
#include "rdma/watchdog.hpp"

#ifdef FABSCOPE_RDMA_HEADERS

namespace fabscope::rdma {

class CmConnector {
 public:
  // local: its device is updated to the one RDMA CM picked; its address is the client's source.
  CmConnector(Resources& res, Endpoint& local, Watchdog& wd);
  // Destroys the connections' QPs and ids, the listening id and the event channel.
  ~CmConnector();
  CmConnector(const CmConnector&) = delete;
  CmConnector& operator=(const CmConnector&) = delete;

  void set_control(Control* ctl) { ctl_ = ctl; }

  // Server: listen on address:port before telling the client where, then accept `connections`.
  void listen(const std::string& address, int port, int connections);
  void accept(int connections);
  // Client: `connections` connections to address:port, in order.
  void connect(const std::string& address, int port, int connections);

 private:
  struct Event {
    rdma_cm_event_type type;
    int status;
    rdma_cm_id* id;
  };
  Event wait(rdma_cm_event_type want, const std::string& peer);
  void ensure_channel();
  void adopt_context(ibv_context* c);
  ibv_qp* create_qp(rdma_cm_id* id);
  rdma_conn_param conn_param() const;

  Resources& res_;
  Endpoint& local_;
  Watchdog& wd_;
  const Lib& L = lib();
  Control* ctl_ = nullptr;  // polled during waits for an error from the peer
  rdma_event_channel* ch_ = nullptr;
  rdma_cm_id* listen_id_ = nullptr;
  std::vector<rdma_cm_id*> ids_;
};

}  // namespace fabscope::rdma

#endif
