// The two sides of a session over the control connection:
//   client                              server
//   hello {options, endpoint}    ->
//                                <-     welcome {endpoint, choices, cm_address, findings}
//   --oob tcp: qps {qpn, psn, gid, lid} both ways; RDMA CM: one connect per QP
//   buf {addr, rkey, stride}     <->    buf
//   per size: run {size} -> <- ready; the loop; sent/done both ways, progress while running
//     (size_protocol.hpp)
//   bye                          <->    bye
// Any failure sends {"error": finding} to the peer (best effort), so both sides explain it.
#include <atomic>
#include <iostream>

#include "core/strings.hpp"
#include "core/root.hpp"
#include "core/socket.hpp"
#include "probe/probe.hpp"
#include "rdma/choose.hpp"
#include "rdma/control.hpp"
#include "rdma/engine.hpp"
#include "rdma/findings.hpp"
#include "rdma/rdma.hpp"
#include "rdma/stats.hpp"

namespace fabscope::rdma {

namespace {

constexpr const char* kMagic = "fabscope.rdma";
constexpr int kProtocol = 1;

// token: the client's, so that a server with a token takes an error sent before the hello.
void send_error(Control& ctl, const Finding& f, const std::string& token = "") {
  try {
    Watchdog quick("error", 1.0);
    quick.begin("sending the error to the peer");
    json m{{"error", f}};
    if (!token.empty()) m["token"] = token;
    ctl.send(m, quick);
  } catch (const std::exception&) {
    // the peer is gone; its own watchdog explains it there
  }
}

json expect(Control& ctl, Watchdog& wd, const char* key) {
  for (;;) {
    json m = ctl.recv(wd);
    if (m.contains(key)) return m[key];
    if (m.contains("refused")) throw Failure(auth_refused(wd.where()));
    if (m.contains("progress")) continue;
    throw Failure(control_lost(wd.where(), std::string("expected '") + key + "', got " + m.dump().substr(0, 80)));
  }
}

// node: a probe taken earlier, or null to probe the live node now.
Chosen choose_here(const Options& o, const std::string& local_ipv4, const std::string& peer, bool server,
                   const NodeInfo* node) {
  const ChoiceInput in{o.device, o.ib_port, o.gid_index, local_ipv4, peer, server};
  if (node) return choose(*node, in);
  return choose(probe::collect(core::Root("/")), in);
}

// Fail problems end the session; warnings join the findings.
void apply(Result& res, const Chosen& c) {
  res.local = c.endpoint;
  res.choices = c.choices;
  const Finding* fail = nullptr;
  for (const auto& f : c.problems) {
    if (f.severity == Severity::Fail && !fail) fail = &f;
    else res.findings.push_back(f);
  }
  if (fail) throw Failure(*fail);
}

std::optional<int> min_mtu(const Endpoint& a, const Endpoint& b) {
  if (a.active_mtu && b.active_mtu) return std::min(*a.active_mtu, *b.active_mtu);
  return a.active_mtu ? a.active_mtu : b.active_mtu;
}

void run_sizes_client(Engine& eng, Control& ctl, Watchdog& wd, Result& res) {
  for (auto size : res.options.sizes_bytes) {
    wd.begin("start of size " + std::to_string(size));
    eng.prepare(size);
    ctl.send(json{{"run", size}}, wd);
    expect(ctl, wd, "ready");
    res.sizes.push_back(eng.run_size(size, ctl));
  }
  wd.begin("bye");
  ctl.send(json{{"bye", true}}, wd);
  expect(ctl, wd, "bye");
}

Result run_session(const std::string& host, const Options& opts, const NodeInfo* node);

}  // namespace

Result run(const std::string& host, const Options& opts) { return run_session(host, opts, nullptr); }
Result run(const std::string& host, const Options& opts, const NodeInfo& node) { return run_session(host, opts, &node); }

namespace {

Result run_session(const std::string& host, const Options& opts, const NodeInfo* node) {
  Options o = normalized(opts);
  Result res;
  res.role = "client";
  res.options = o;
  res.remote.host = host;
  Watchdog wd("client", o.timeout_s);
  wd.begin("tcp connect to " + host + ":" + std::to_string(o.tcp_port));
  std::optional<Control> ctl;
  try {
    ctl.emplace(Control::connect(host, o.tcp_port, o.timeout_s));
  } catch (const Failure& f) {
    res.findings.push_back(f.finding);
    judge(res);
    throw Unreachable(f.finding.message, res);
  }
  try {
    const std::string peer = ctl->peer_address();
    res.remote.address = peer;
    wd.begin("choosing the local port");
    apply(res, choose_here(o, source_address_for(peer), host == peer ? host : host + " (" + peer + ")", false, node));
    wd.begin("hello");
    json hello = {{"magic", kMagic}, {"version", kProtocol}, {"options", o}, {"endpoint", res.local}};
    if (!o.token.empty()) hello["token"] = o.token;
    ctl->send(json{{"hello", hello}}, wd);
    json w = expect(*ctl, wd, "welcome");
    res.remote = w.at("endpoint").get<Endpoint>();
    for (auto f : w.value("findings", std::vector<Finding>{})) res.findings.push_back(peer_note(f, "server"));
    res.path_mtu = min_mtu(res.local, res.remote);
    Engine eng(o, res.local, wd, true);
    eng.set_control(&*ctl);
    if (o.oob == Oob::Tcp) {
      eng.open_device();
      ctl->send(json{{"qps", eng.qp_addrs()}}, wd);
      wd.begin("QP exchange");
      auto theirs = expect(*ctl, wd, "qps").get<std::vector<QpAddr>>();
      eng.connect_qps(theirs, res.path_mtu.value_or(1024), res.remote);
    } else {
      eng.cm_connect(w.value("cm_address", res.remote.address), o.tcp_port);
    }
    wd.begin("buffer exchange");
    ctl->send(json{{"buf", eng.buf_key()}}, wd);
    eng.set_remote(expect(*ctl, wd, "buf").get<BufKey>());
    run_sizes_client(eng, *ctl, wd, res);
    res.completed = true;
  } catch (const PeerFailure& f) {
    res.findings.push_back(from_peer(f.finding, "server"));
  } catch (const Failure& f) {
    res.findings.push_back(f.finding);
    if (f.finding.id == "rdma.auth_refused") {
      judge(res);
      throw Unreachable(f.finding.message, res);
    }
    send_error(*ctl, f.finding, o.token);
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    Finding f = control_lost(wd.where(), e.what());
    res.findings.push_back(f);
    send_error(*ctl, f, o.token);
  }
  judge(res);
  return res;
}

}  // namespace

struct Server::Impl {
  Options opts;
  Listener listener;
  std::atomic<bool> stopped{false};
  std::shared_ptr<const NodeInfo> node;  // null: probe the live node in every session
  // Port 0 takes the kernel's choice; RDMA CM then listens on the number the kernel gave.
  Impl(const Options& o, std::shared_ptr<const NodeInfo> n)
      : opts(o), listener(o.bind_address, o.tcp_port, o.timeout_s), node(std::move(n)) {
    opts.tcp_port = listener.port();
  }

  // The first message decides whether this is a session at all: a connection that does not
  // start with a fabscope hello (or a client's error, when its own setup failed before the
  // hello), or with a token configured does not carry the token, is dropped with a line on
  // stderr and no result. nullopt then, else the first message.
  std::optional<json> admit(Control& ctl) {
    Watchdog wd("server", opts.timeout_s);
    wd.begin("hello");
    const std::string peer = ctl.peer_address();
    auto drop = [&](const std::string& why) {
      std::cerr << "fabscope rdma: dropped a connection from " << (peer.empty() ? "?" : peer) << ": "
                << core::printable(why) << "\n";  // why may quote the stranger's bytes
      return std::nullopt;
    };
    json m;
    try {
      m = ctl.first_message(wd);
    } catch (const Failure& f) {
      return drop(f.finding.evidence.substr(0, 120));
    }
    const bool hello = m.contains("hello") && m["hello"].is_object() && m["hello"].value("magic", "") == kMagic;
    if (!hello && !m.contains("error")) return drop("its first message is not a fabscope rdma hello");
    if (!opts.token.empty()) {
      const json& carrier = hello ? m["hello"] : m;
      const auto it = carrier.find("token");
      if (it == carrier.end() || !it->is_string() || !net::secret_equal(it->get<std::string>(), opts.token)) {
        Watchdog quick("server", 1.0);
        try {
          ctl.send(json{{"refused", "wrong or missing token"}}, quick);
        } catch (const std::exception&) {
        }
        return drop("refused: wrong or missing FABSCOPE_RDMA_TOKEN");
      }
    }
    return m;
  }

  Result session(Control& ctl, const json& first) {
    Result res;
    res.role = "server";
    res.options = opts;
    Watchdog wd("server", opts.timeout_s);
    try {
      wd.begin("hello");
      if (!first.contains("hello")) {
        // The client failed before its hello: quoted as what the client said.
        Finding said;
        try {
          said = first.at("error").get<Finding>();
        } catch (const std::exception& e) {
          throw Failure(control_lost(wd.where(), std::string("unreadable error from the client: ") + e.what()));
        }
        throw PeerFailure(said);
      }
      const json& h = first["hello"];
      if (int_or<int>(h, "version", 0) != kProtocol)
        throw Failure(control_lost(wd.where(), "the client speaks " + h.value("magic", std::string("?")) +
                                                   " protocol " + std::to_string(int_or<int>(h, "version", 0)) +
                                                   ", this server " + kMagic + " " + std::to_string(kProtocol) +
                                                   ": run the same fabscope version on both sides"));
      Options o;
      try {
        o = h.at("options").get<Options>();
        o.device = opts.device;
        o.ib_port = opts.ib_port;
        o.gid_index = opts.gid_index;
        o.timeout_s = opts.timeout_s;
        o.tcp_port = opts.tcp_port;
        o = normalized(o);
      } catch (const std::exception& e) {
        throw Failure(control_lost(wd.where(), std::string("the client's options are not usable: ") + e.what()));
      }
      res.options = o;
      res.remote = h.at("endpoint").get<Endpoint>();
      wd.begin("choosing the local port");
      apply(res, choose_here(o, ctl.local_address(), ctl.peer_address(), true, node.get()));
      if (res.local.address.empty()) res.local.address = ctl.local_address();
      res.path_mtu = min_mtu(res.local, res.remote);
      Engine eng(o, res.local, wd, false);
      eng.set_control(&ctl);
      if (o.oob == Oob::Cm) eng.cm_listen(res.local.address, o.tcp_port);
      ctl.send(json{{"welcome",
                     {{"endpoint", res.local},
                      {"choices", res.choices},
                      {"cm_address", res.local.address},
                      {"findings", res.findings}}}},
               wd);
      if (o.oob == Oob::Tcp) {
        eng.open_device();
        wd.begin("QP exchange");
        auto theirs = expect(ctl, wd, "qps").get<std::vector<QpAddr>>();
        ctl.send(json{{"qps", eng.qp_addrs()}}, wd);
        eng.connect_qps(theirs, res.path_mtu.value_or(1024), res.remote);
      } else {
        eng.cm_accept();
      }
      wd.begin("buffer exchange");
      eng.set_remote(expect(ctl, wd, "buf").get<BufKey>());
      ctl.send(json{{"buf", eng.buf_key()}}, wd);
      for (;;) {
        wd.begin("waiting for the next size");
        json m = ctl.recv(wd);
        if (m.contains("bye")) {
          ctl.send(json{{"bye", true}}, wd);
          break;
        }
        if (!m.contains("run")) continue;
        auto size = int_at<std::uint64_t>(m, "run");
        bool known = false;
        for (auto s : o.sizes_bytes) known = known || s == size;
        if (!known) throw Failure(control_lost(wd.where(), "the client asked for size " + std::to_string(size) +
                                                               " it did not announce"));
        eng.prepare(size);
        ctl.send(json{{"ready", size}}, wd);
        res.sizes.push_back(eng.run_size(size, ctl));
      }
      res.completed = true;
    } catch (const PeerFailure& f) {
      res.findings.push_back(from_peer(f.finding, "client"));
    } catch (const Failure& f) {
      res.findings.push_back(f.finding);
      send_error(ctl, f.finding);
    } catch (const std::exception& e) {
      Finding f = control_lost(wd.where(), e.what());
      res.findings.push_back(f);
      send_error(ctl, f);
    }
    judge(res);
    return res;
  }
};

Server::Server(const Options& opts) : impl_(std::make_unique<Impl>(opts, nullptr)) {}
Server::Server(const Options& opts, std::shared_ptr<const NodeInfo> node)
    : impl_(std::make_unique<Impl>(opts, std::move(node))) {}
Server::~Server() = default;

int Server::tcp_port() const { return impl_->listener.port(); }

std::optional<Result> Server::serve_one(double wait_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  for (;;) {
    if (impl_->stopped) return std::nullopt;
    double left = 0;
    if (wait_s > 0) {
      left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) return std::nullopt;
    }
    auto ctl = impl_->listener.accept(left);
    if (!ctl) return std::nullopt;
    if (auto h = impl_->admit(*ctl)) return impl_->session(*ctl, *h);
  }
}

std::optional<Result> Server::serve_one_from(const std::string& peer_ipv4, double wait_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  for (;;) {
    if (impl_->stopped) return std::nullopt;
    const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return std::nullopt;
    auto ctl = impl_->listener.accept(left);
    if (!ctl) return std::nullopt;
    if (ctl->peer_address() != peer_ipv4) continue;
    if (auto h = impl_->admit(*ctl)) return impl_->session(*ctl, *h);
  }
}

void Server::serve(int sessions, const std::function<void(const Result&)>& on_result) {
  for (int n = 0; sessions <= 0 || n < sessions; ++n) {
    auto r = serve_one(0);
    if (!r) return;
    if (on_result) on_result(*r);
  }
}

void Server::set_token(const std::string& token) { impl_->opts.token = token; }

void Server::stop() {
  impl_->stopped = true;
  impl_->listener.stop();
}

}  // namespace fabscope::rdma
