#include "rdma/lib.hpp"

#ifdef FABSCOPE_RDMA_HEADERS
#include <dlfcn.h>

namespace fabscope::rdma {

namespace {

template <typename Fn>
bool bind(void* h, Fn& fn, const char* name) {
  fn = reinterpret_cast<Fn>(dlsym(h, name));
  return fn != nullptr;
}

Lib load() {
  Lib l;
  static_cast<probe::IbverbsLib&>(l) = probe::ibverbs();
  if (!l.error.empty()) return l;
  if (!l.has_engine_calls()) {
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

const Lib& lib() {
  static const Lib l = load();
  return l;
}

}  // namespace fabscope::rdma
#endif
