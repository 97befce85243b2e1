#include "rdma/lib.hpp"

#ifdef FABSCOPE_RDMA_HEADERS
#include <dlfcn.h>

#include <cerrno>
#include <cstring>

namespace fabscope::rdma {

namespace {

template <typename Fn>
bool bind(void* h, Fn& fn, const char* name, const char* version = nullptr) {
  // libibverbs exports IBVERBS_1.0 compatibility versions of the device calls beside
  // IBVERBS_1.1; the header binds to 1.1, so ask for that version first.
  void* p = version ? dlvsym(h, name, version) : nullptr;
  if (!p) p = dlsym(h, name);
  fn = reinterpret_cast<Fn>(p);
  return p != nullptr;
}

Lib load() {
  Lib l;
  void* v = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!v) {
    l.error = std::string("libibverbs.so.1 not loadable (install libibverbs1 and the provider "
                          "package, ibverbs-providers): ") + dlerror();
    return l;
  }
  const char* V = "IBVERBS_1.1";
  bool ok = bind(v, l.get_device_list, "ibv_get_device_list", V) &&
            bind(v, l.free_device_list, "ibv_free_device_list", V) &&
            bind(v, l.get_device_name, "ibv_get_device_name", V) &&
            bind(v, l.open_device, "ibv_open_device", V) && bind(v, l.close_device, "ibv_close_device", V) &&
            bind(v, l.query_device, "ibv_query_device", V) && bind(v, l.query_gid, "ibv_query_gid", V) &&
            bind(v, l.alloc_pd, "ibv_alloc_pd", V) && bind(v, l.dealloc_pd, "ibv_dealloc_pd", V) &&
            bind(v, l.reg_mr, "ibv_reg_mr", V) && bind(v, l.dereg_mr, "ibv_dereg_mr", V) &&
            bind(v, l.create_cq, "ibv_create_cq", V) && bind(v, l.destroy_cq, "ibv_destroy_cq", V) &&
            bind(v, l.create_qp, "ibv_create_qp", V) && bind(v, l.destroy_qp, "ibv_destroy_qp", V) &&
            bind(v, l.modify_qp, "ibv_modify_qp", V);
  bind(v, l.query_port_compat, "ibv_query_port", V);
  if (!ok) {
    l.error = "libibverbs.so.1 lacks one of the verbs fabscope rdma calls (rdma-core too old?)";
    return l;
  }
  void* c = dlopen("librdmacm.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!c) return l;  // --oob tcp still works; the CM path reports it
  l.cm = bind(c, l.create_event_channel, "rdma_create_event_channel") &&
         bind(c, l.destroy_event_channel, "rdma_destroy_event_channel") &&
         bind(c, l.create_id, "rdma_create_id") && bind(c, l.destroy_id, "rdma_destroy_id") &&
         bind(c, l.bind_addr, "rdma_bind_addr") && bind(c, l.resolve_addr, "rdma_resolve_addr") &&
         bind(c, l.resolve_route, "rdma_resolve_route") && bind(c, l.cm_create_qp, "rdma_create_qp") &&
         bind(c, l.cm_destroy_qp, "rdma_destroy_qp") && bind(c, l.connect, "rdma_connect") &&
         bind(c, l.listen, "rdma_listen") && bind(c, l.accept, "rdma_accept") &&
         bind(c, l.reject, "rdma_reject") && bind(c, l.disconnect, "rdma_disconnect") &&
         bind(c, l.get_cm_event, "rdma_get_cm_event") && bind(c, l.ack_cm_event, "rdma_ack_cm_event") &&
         bind(c, l.event_str, "rdma_event_str");
  return l;
}

}  // namespace

int Lib::query_port(ibv_context* ctx, uint8_t port, ibv_port_attr& attr) const {
  std::memset(&attr, 0, sizeof attr);
  if (verbs_context* vctx = verbs_get_ctx_op(ctx, query_port))
    return vctx->query_port(ctx, port, &attr, sizeof attr);
  if (!query_port_compat) return ENOSYS;
  return query_port_compat(ctx, port, reinterpret_cast<_compat_ibv_port_attr*>(&attr));
}

const Lib& lib() {
  static const Lib l = load();
  return l;
}

}  // namespace fabscope::rdma
#endif
