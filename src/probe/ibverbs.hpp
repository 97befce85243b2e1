#pragma once
// libibverbs.so.1, opened with dlopen once per process: one function table for every caller (the
// probe's device and port queries, the point-to-point engine's PD/MR/CQ/QP setup in rdma/), so
// the binary starts on nodes without rdma-core and carries no NEEDED entry for it. Only the
// exported functions are bound: the header's inline wrappers (ibv_query_port, ibv_query_gid_ex)
// would link against libibverbs, and the data path (ibv_post_send, ibv_poll_cq) calls through
// the context's ops. Declared only where <infiniband/verbs.h> exists (FABSCOPE_IBVERBS_HEADER).
#if __has_include(<infiniband/verbs.h>)
#define FABSCOPE_IBVERBS_HEADER 1
#include <infiniband/verbs.h>

#include <string>

namespace fabscope::probe {

struct IbverbsLib {
  std::string error;  // why libibverbs.so.1 could not be loaded; "" when it was

  ibv_device** (*get_device_list)(int*) = nullptr;
  void (*free_device_list)(ibv_device**) = nullptr;
  const char* (*get_device_name)(ibv_device*) = nullptr;
  ibv_context* (*open_device)(ibv_device*) = nullptr;
  int (*close_device)(ibv_context*) = nullptr;
  int (*query_device)(ibv_context*, ibv_device_attr*) = nullptr;
  int (*query_port_compat)(ibv_context*, uint8_t, _compat_ibv_port_attr*) = nullptr;
  int (*query_gid)(ibv_context*, uint8_t, int, ibv_gid*) = nullptr;
  // rdma-core v31 and later only: the GID table with types and netdevs in one call.
  ssize_t (*query_gid_table)(ibv_context*, ibv_gid_entry*, size_t, uint32_t, size_t) = nullptr;
  ibv_pd* (*alloc_pd)(ibv_context*) = nullptr;
  int (*dealloc_pd)(ibv_pd*) = nullptr;
  ibv_mr* (*reg_mr)(ibv_pd*, void*, size_t, int) = nullptr;
  int (*dereg_mr)(ibv_mr*) = nullptr;
  ibv_cq* (*create_cq)(ibv_context*, int, void*, ibv_comp_channel*, int) = nullptr;
  int (*destroy_cq)(ibv_cq*) = nullptr;
  ibv_qp* (*create_qp)(ibv_pd*, ibv_qp_init_attr*) = nullptr;
  int (*destroy_qp)(ibv_qp*) = nullptr;
  int (*modify_qp)(ibv_qp*, ibv_qp_attr*, int) = nullptr;
  // The exporter's mesh prober (UD queue pairs woken through a completion channel).
  ibv_ah* (*create_ah)(ibv_pd*, ibv_ah_attr*) = nullptr;
  int (*destroy_ah)(ibv_ah*) = nullptr;
  ibv_comp_channel* (*create_comp_channel)(ibv_context*) = nullptr;
  int (*destroy_comp_channel)(ibv_comp_channel*) = nullptr;
  int (*get_cq_event)(ibv_comp_channel*, ibv_cq**, void**) = nullptr;
  void (*ack_cq_events)(ibv_cq*, unsigned int) = nullptr;

  // ibv_query_port as the header's inline wrapper does it: the provider's extended op when it
  // has one, else the compat entry point. Clears attr first.
  int query_port(ibv_context* ctx, uint8_t port, ibv_port_attr& attr) const;
  // The device listing and device/port queries (what the probe needs).
  bool has_device_queries() const;
  // Those plus the PD, MR, CQ and QP calls (what the point-to-point engine needs).
  bool has_engine_calls() const;
  // Those plus address handles and completion channels (the mesh prober's UD queue pair).
  bool has_mesh_calls() const;
};

// Loads on the first call; later calls return the same table.
const IbverbsLib& ibverbs();

}  // namespace fabscope::probe
#endif
