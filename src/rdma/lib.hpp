#pragma once
// libibverbs.so.1 and librdmacm.so.1, opened with dlopen once per process: a small function
// table instead of link-time dependencies, so the fabscope binary starts on nodes without
// rdma-core. The data path (ibv_post_send, ibv_post_recv, ibv_poll_cq) is static inline in
// <infiniband/verbs.h> and calls through the context's ops, so it needs no symbol at all.
// Only compiled where the headers exist (FABSCOPE_RDMA_HEADERS).
#if __has_include(<infiniband/verbs.h>) && __has_include(<rdma/rdma_cma.h>)
#define FABSCOPE_RDMA_HEADERS 1
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <string>

namespace fabscope::rdma {

struct Lib {
  std::string error;  // why the libraries could not be used; "" when they can
  bool cm = false;    // librdmacm loaded

  ibv_device** (*get_device_list)(int*) = nullptr;
  void (*free_device_list)(ibv_device**) = nullptr;
  const char* (*get_device_name)(ibv_device*) = nullptr;
  ibv_context* (*open_device)(ibv_device*) = nullptr;
  int (*close_device)(ibv_context*) = nullptr;
  int (*query_device)(ibv_context*, ibv_device_attr*) = nullptr;
  int (*query_port_compat)(ibv_context*, uint8_t, _compat_ibv_port_attr*) = nullptr;
  int (*query_gid)(ibv_context*, uint8_t, int, ibv_gid*) = nullptr;
  ibv_pd* (*alloc_pd)(ibv_context*) = nullptr;
  int (*dealloc_pd)(ibv_pd*) = nullptr;
  ibv_mr* (*reg_mr)(ibv_pd*, void*, size_t, int) = nullptr;
  int (*dereg_mr)(ibv_mr*) = nullptr;
  ibv_cq* (*create_cq)(ibv_context*, int, void*, ibv_comp_channel*, int) = nullptr;
  int (*destroy_cq)(ibv_cq*) = nullptr;
  ibv_qp* (*create_qp)(ibv_pd*, ibv_qp_init_attr*) = nullptr;
  int (*destroy_qp)(ibv_qp*) = nullptr;
  int (*modify_qp)(ibv_qp*, ibv_qp_attr*, int) = nullptr;

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

  // ibv_query_port as the header's inline wrapper does it (extended op, else the compat call).
  int query_port(ibv_context* ctx, uint8_t port, ibv_port_attr& attr) const;
};

// Loads on first call; later calls return the same table. need_cm: librdmacm is required.
const Lib& lib();

}  // namespace fabscope::rdma
#endif
