#include "probe/ibverbs.hpp"

#ifdef FABSCOPE_IBVERBS_HEADER
#include <dlfcn.h>

#include <cerrno>
#include <cstring>

namespace fabscope::probe {

namespace {

template <typename Fn>
void bind(void* h, Fn& fn, const char* name) {
  // libibverbs exports IBVERBS_1.0 compatibility versions of the device calls beside
  // IBVERBS_1.1; the header binds to 1.1, so ask for that version first.
  void* p = dlvsym(h, name, "IBVERBS_1.1");
  if (!p) p = dlsym(h, name);
  fn = reinterpret_cast<Fn>(p);
}

IbverbsLib load() {
  IbverbsLib l;
  // RTLD_GLOBAL: librdmacm, loaded after it by rdma/lib.cpp, resolves its verbs calls here.
  void* h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    l.error = std::string("libibverbs.so.1 not loadable (install libibverbs1 and the provider "
                          "package, ibverbs-providers): ") + dlerror();
    return l;
  }
  bind(h, l.get_device_list, "ibv_get_device_list");
  bind(h, l.free_device_list, "ibv_free_device_list");
  bind(h, l.get_device_name, "ibv_get_device_name");
  bind(h, l.open_device, "ibv_open_device");
  bind(h, l.close_device, "ibv_close_device");
  bind(h, l.query_device, "ibv_query_device");
  bind(h, l.query_port_compat, "ibv_query_port");
  bind(h, l.query_gid, "ibv_query_gid");
  l.query_gid_table = reinterpret_cast<decltype(l.query_gid_table)>(dlsym(h, "_ibv_query_gid_table"));
  bind(h, l.alloc_pd, "ibv_alloc_pd");
  bind(h, l.dealloc_pd, "ibv_dealloc_pd");
  bind(h, l.reg_mr, "ibv_reg_mr");
  bind(h, l.dereg_mr, "ibv_dereg_mr");
  bind(h, l.create_cq, "ibv_create_cq");
  bind(h, l.destroy_cq, "ibv_destroy_cq");
  bind(h, l.create_qp, "ibv_create_qp");
  bind(h, l.destroy_qp, "ibv_destroy_qp");
  bind(h, l.modify_qp, "ibv_modify_qp");
  bind(h, l.create_ah, "ibv_create_ah");
  bind(h, l.destroy_ah, "ibv_destroy_ah");
  bind(h, l.create_comp_channel, "ibv_create_comp_channel");
  bind(h, l.destroy_comp_channel, "ibv_destroy_comp_channel");
  bind(h, l.get_cq_event, "ibv_get_cq_event");
  bind(h, l.ack_cq_events, "ibv_ack_cq_events");
  return l;  // the handle stays open for the life of the process
}

}  // namespace

int IbverbsLib::query_port(ibv_context* ctx, uint8_t port, ibv_port_attr& attr) const {
  std::memset(&attr, 0, sizeof attr);
  if (verbs_context* vctx = verbs_get_ctx_op(ctx, query_port))
    return vctx->query_port(ctx, port, &attr, sizeof attr);
  if (!query_port_compat) return ENOSYS;
  return query_port_compat(ctx, port, reinterpret_cast<_compat_ibv_port_attr*>(&attr));
}

bool IbverbsLib::has_device_queries() const {
  return get_device_list && free_device_list && get_device_name && open_device && close_device && query_device;
}

bool IbverbsLib::has_engine_calls() const {
  return has_device_queries() && query_gid && alloc_pd && dealloc_pd && reg_mr && dereg_mr && create_cq &&
         destroy_cq && create_qp && destroy_qp && modify_qp;
}

bool IbverbsLib::has_mesh_calls() const {
  return has_engine_calls() && create_ah && destroy_ah && create_comp_channel && destroy_comp_channel && get_cq_event &&
         ack_cq_events;
}

const IbverbsLib& ibverbs() {
  static const IbverbsLib l = load();
  return l;
}

}  // namespace fabscope::probe
#endif
