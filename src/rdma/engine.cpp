#include "rdma/engine.hpp"

#include "rdma/findings.hpp"

#ifndef FABSCOPE_RDMA_HEADERS

namespace fabscope::rdma {
struct Engine::Impl {};
Engine::Engine(const Options&, Endpoint&, Watchdog&, bool) {
  throw Failure(no_device("fabscope was built without rdma-core headers (libibverbs-dev, librdmacm-dev)",
                          "Rebuild fabscope with libibverbs-dev and librdmacm-dev installed."));
}
Engine::~Engine() = default;
void Engine::open_device() {}
std::vector<QpAddr> Engine::qp_addrs() const { return {}; }
void Engine::connect_qps(const std::vector<QpAddr>&, int, const Endpoint&) {}
void Engine::cm_listen(const std::string&, int) {}
void Engine::cm_accept() {}
void Engine::cm_connect(const std::string&, int) {}
void Engine::set_control(Control*) {}

BufKey Engine::buf_key() const { return {}; }
void Engine::set_remote(const BufKey&) {}
void Engine::prepare(std::uint64_t) {}
SizeResult Engine::run_size(std::uint64_t, Control&) { return {}; }
bool Engine::verify(std::uint64_t) const { return false; }
std::string Engine::device_name() const { return ""; }
}  // namespace fabscope::rdma

#else

#include "rdma/cm.hpp"
#include "rdma/loops.hpp"

namespace fabscope::rdma {

// Destroyed in reverse: the loops, then RDMA CM's connections (their QPs first), then the
// resources the QPs ran on.
struct Engine::Impl {
  Impl(const Options& o, Endpoint& l, Watchdog& wd, bool client)
      : local(l), res(resource_spec(o), l, wd), cm(res, l, wd), loops(o, res, wd, client), qps(o.qps) {}
  Endpoint& local;
  Resources res;
  CmConnector cm;
  Loops loops;
  int qps;
};

Engine::Engine(const Options& opts, Endpoint& local, Watchdog& wd, bool client)
    : impl_(std::make_unique<Impl>(opts, local, wd, client)) {
  if (!lib().error.empty())
    throw Failure(no_device(lib().error, "Install rdma-core's libibverbs1, librdmacm1 and ibverbs-providers."));
}

Engine::~Engine() = default;

void Engine::open_device() { impl_->res.open_device(); }
std::vector<QpAddr> Engine::qp_addrs() const { return impl_->res.qp_addrs(); }
void Engine::connect_qps(const std::vector<QpAddr>& remote, int path_mtu, const Endpoint& rep) {
  impl_->res.connect_qps(remote, path_mtu, rep);
}

void Engine::cm_listen(const std::string& address, int port) { impl_->cm.listen(address, port, impl_->qps); }
void Engine::cm_accept() { impl_->cm.accept(impl_->qps); }
void Engine::cm_connect(const std::string& address, int port) { impl_->cm.connect(address, port, impl_->qps); }
void Engine::set_control(Control* ctl) { impl_->cm.set_control(ctl); }

BufKey Engine::buf_key() const { return impl_->res.buf_key(); }
void Engine::set_remote(const BufKey& k) { impl_->loops.set_remote(k); }
void Engine::prepare(std::uint64_t size) { impl_->loops.prepare(size); }
SizeResult Engine::run_size(std::uint64_t size, Control& ctl) { return impl_->loops.run(size, ctl); }
bool Engine::verify(std::uint64_t size) const { return impl_->loops.verify(size); }
std::string Engine::device_name() const { return impl_->local.device; }

}  // namespace fabscope::rdma

#endif
