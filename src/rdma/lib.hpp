#pragma once
// libibverbs.so.1 and librdmacm.so.1, opened with dlopen once per process: a small function
// table instead of link-time dependencies, so the fabscope binary starts on nodes without
// rdma-core. The data path (ibv_post_send, ibv_post_recv, ibv_poll_cq) is static inline in
// <infiniband/verbs.h> and calls through the context's ops, so it needs no symbol at all.
// The libibverbs part is the probe's table (probe/ibverbs.hpp).
// Only compiled where the headers exist (FABSCOPE_RDMA_HEADERS).
#if __has_include(<infiniband/verbs.h>) && __has_include(<rdma/rdma_cma.h>)
#define FABSCOPE_RDMA_HEADERS 1
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "probe/ibverbs.hpp"

namespace fabscope::rdma {

// The verbs calls are probe::ibverbs()'s table (one dlopen of libibverbs per process); this adds
// librdmacm's.
struct Lib : probe::IbverbsLib {
  bool cm = false;  // librdmacm loaded

  rdma_event_channel* (*create_event_channel)() = nullptr;
  void (*destroy_event_channel)(rdma_event_channel*) = nullptr;
  int (*create_id)(rdma_event_channel*, rdma_cm_id**, void*, rdma_port_space) = nullptr;
  int (*destroy_id)(rdma_cm_id*) = nullptr;
  int (*bind_addr)(rdma_cm_id*, sockaddr*) = nullptr;
  int (*resolve_addr)(rdma_cm_id*, sockaddr*, sockaddr*, int) = nullptr;
  int (*resolve_route)(rdma_cm_id*, int) = nullptr;
  int (*cm_create_qp)(rdma_cm_id*, ibv_pd*, ibv_qp_init_attr*) = nullptr;
  void (*cm_destroy_qp)(rdma_cm_id*) = nullptr;
  int (*connect)(rdma_cm_id*, rdma_conn_param*) = nullptr;
  int (*listen)(rdma_cm_id*, int) = nullptr;
  int (*accept)(rdma_cm_id*, rdma_conn_param*) = nullptr;
  int (*reject)(rdma_cm_id*, const void*, uint8_t) = nullptr;
  int (*disconnect)(rdma_cm_id*) = nullptr;
  int (*get_cm_event)(rdma_event_channel*, rdma_cm_event**) = nullptr;
  int (*ack_cm_event)(rdma_cm_event*) = nullptr;
  const char* (*event_str)(rdma_cm_event_type) = nullptr;
};

// Loads on first call; later calls return the same table. need_cm: librdmacm is required.
const Lib& lib();

}  // namespace fabscope::rdma
#endif
