#include "mesh/mesh.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/regular_file.hpp"
#include "core/socket.hpp"
#include "core/strings.hpp"
#include "mesh/mesh_rdma.hpp"
#include "mesh/mesh_resolver.hpp"
#include "mesh/mesh_wire.hpp"

namespace fabscope::mesh {

namespace {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

constexpr std::size_t kMaxPeersFileBytes = 16u << 20;
// A connection more than this many probes over its rate within one second is flooding: cut.
constexpr std::uint64_t kFloodProbesPerSecond = 1000;
// Bytes read from one connection per loop iteration: a flooding peer cannot starve the others.
constexpr std::size_t kReadPerTurn = 64 * kMeshProbeBytes;
// Replies to no probe under way (late ones, at most one per lost probe) between two probes,
// beyond which the prober drops the connection: a peer sending replies unasked is flooding.
constexpr std::uint32_t kMaxUnsolicitedReplies = 16;
// Consecutive timeouts after which the prober drops a connection and dials again.
constexpr int kTimeoutsBeforeRedial = 3;
// Tags of UD sends: a probe's is its sequence number (below 2^32); the responder's replies and
// timing datagrams carry these bits.
constexpr std::uint64_t kReplyTag = 1ull << 62;
constexpr std::uint64_t kTimingTag = 1ull << 61;
// After an RDMA endpoint could not be opened, the next try.
constexpr auto kRdmaRetry = std::chrono::minutes(5);

std::vector<std::string> local_addresses() {
  std::vector<std::string> out;
  ifaddrs* ifs = nullptr;
  if (getifaddrs(&ifs) != 0) return out;
  for (ifaddrs* i = ifs; i; i = i->ifa_next) {
    if (!i->ifa_addr) continue;
    char buf[INET6_ADDRSTRLEN] = {};
    if (i->ifa_addr->sa_family == AF_INET)
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, buf, sizeof buf);
    else if (i->ifa_addr->sa_family == AF_INET6)
      inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(i->ifa_addr)->sin6_addr, buf, sizeof buf);
    if (buf[0]) out.emplace_back(buf);
  }
  freeifaddrs(ifs);
  return out;
}

// A token bucket: `rate` per second, at most `burst` saved up.
struct Bucket {
  double tokens = 0, rate = 0, burst = 0;
  TimePoint at{};
  bool take(TimePoint now) {
    tokens = std::min(burst, tokens + rate * seconds(now - at));
    at = now;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  }
};

// A connection at the responder.
struct RConn {
  net::Fd fd;
  std::string who;
  std::string source;  // the peer's address (pending connections are bounded per address)
  bool authed = false;
  std::string in;      // the hello so far, then at most one partial probe
  TimePoint deadline{};  // for the hello
  std::uint64_t accepted_seq = 0;  // order of arrival
  TimePoint last_active{};
  Bucket bucket;
  TimePoint flood_window{};
  std::uint64_t limited_in_window = 0;
  bool dead = false;
  std::uint64_t cookie = 0;  // its UD registration (an accepted offer); 0 none
};

// The prober's connection to one peer.
struct PConn {
  enum class State { Idle, Connecting, Hello, Offer, Ready };
  MeshPeer peer;
  net::Fd fd;
  State state = State::Idle;
  std::string in;
  bool pending = false;      // a probe counted as sent, waiting for the connection
  bool resolving = false;    // the peer's name is being resolved (outside the loop) for it
  std::uint32_t unsolicited = 0;  // replies to no probe under way, since the last probe written
  bool outstanding = false;  // a probe written, waiting for its reply
  std::uint32_t seq = 0;
  TimePoint written{}, deadline{};
  int timeouts_in_row = 0;
  bool selected = true;
  // RDMA: the responder's address handle, cookie and QP number (0: probes over this TCP
  // connection). The transport label stays what the last accept decided, also while the
  // connection is redialled.
  std::uint64_t ud_remote = 0, cookie = 0;
  std::uint32_t ud_qpn = 0;
  std::string transport = "tcp";
  // Completion timestamps of the probe in flight (ns, 0 unknown) and the responder's span.
  std::uint64_t t_sent = 0, t_answered = 0, peer_span = 0;
};

}  // namespace

struct Mesh::Impl {
  MeshOptions o;
  net::Fd listener;
  int port = 0;
  net::Fd wake;  // eventfd
  std::thread thread;
  std::atomic<bool> stop{false};

  mutable std::mutex mu;  // guards the stats below; the loop holds it between polls
  std::map<std::pair<std::string, std::string>, MeshPeerStats> stats;  // (peer, transport) ->
  MeshRdmaView rdma_view;
  MeshPeerStats other;
  bool other_used = false;
  MeshResponderStats rstats;
  std::uint64_t listed = 0, bad_lines = 0, list_errors = 0, selected_count = 0;
  double coverage_seconds = 0;

  // Loop state (the loop's thread only).
  std::vector<std::unique_ptr<RConn>> rconns;
  std::uint64_t accepted_count = 0;
  Bucket total_bucket;
  TimePoint accept_paused_until{};
  std::vector<MeshPeer> peers;               // merged sources, sorted by id, this node included
  std::optional<std::size_t> self_index;     // this node's entry, when listed
  std::vector<std::string> self_names;
  std::uint64_t self_hash = 0;
  PeerList file_peers, dns_peers, host_peers;
  struct stat file_stat {};
  bool file_read = false;
  TimePoint next_file_check{}, next_dns{};
  std::unique_ptr<MeshResolver> resolver;    // --mesh-dns and peers listed by name
  std::uint64_t dns_generation = 0;          // of the --mesh-dns answer last applied
  std::uint64_t window = ~0ull;
  std::vector<std::string> selected;         // ids, in probe order
  std::size_t rr = 0;
  std::map<std::string, PConn> pconns;
  std::uint32_t next_seq = 0;
  TimePoint next_probe{};
  std::string last_list_error;
  // RDMA (transport auto): the UD endpoint, opened on the first authenticated connection.
  std::unique_ptr<MeshUd> ud;
  TimePoint ud_retry_at{};
  bool ud_tried = false;
  struct UdReg {
    std::uint64_t remote = 0;
    std::uint32_t qpn = 0;
    RConn* conn = nullptr;
  };
  std::map<std::uint64_t, UdReg> regs;             // responder: cookie ->
  std::map<std::uint64_t, std::string> by_cookie;  // prober: a responder's cookie -> peer id
  struct Timing {
    std::uint64_t cookie = 0;
    std::uint32_t seq = 0;
    std::uint64_t received_ns = 0;
  };
  std::map<std::uint64_t, Timing> timings;         // responder: reply tag -> its probe's receive time
  std::uint64_t next_reply_tag = 0;
  std::mt19937_64 cookie_rng{std::random_device{}() ^ (static_cast<std::uint64_t>(std::random_device{}()) << 32)};
  std::set<std::string> told_tcp;                  // peers whose fall back to tcp was said on stderr
  std::vector<MeshUdEvent> events;
  bool ud_more = false;  // the last drain stopped at its budget: completions may wait unsignalled

  explicit Impl(MeshOptions opts) : o(std::move(opts)) {
    check_mesh_token(o.token, "mesh");
    if (o.probes_per_second <= 0) throw Error("mesh: the probe rate must be above 0");
    listener = net::listen_tcp(o.listen_host, o.listen_port, 128, false);
    port = net::local_port(listener.get());
    if (o.peer_port == 0) o.peer_port = port;
    wake = net::Fd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (!wake) throw Error(std::string("mesh: eventfd: ") + std::strerror(errno));
    resolver = std::make_unique<MeshResolver>(o.resolve, o.resolve_timeout, wake.get());
    total_bucket = Bucket{o.answers_per_second, o.answers_per_second, std::max(1.0, o.answers_per_second / 5),
                          Clock::now()};
    self_names = o.self_names;
    for (auto& a : local_addresses()) self_names.push_back(a);
    std::string first = o.self_names.empty() ? "" : o.self_names.front();
    self_hash = std::hash<std::string>{}(first.empty() ? std::to_string(port) : first);
    rdma_view.enabled = o.rdma;
    host_peers = peers_from_hosts(o.hosts, o.peer_port);
    report_bad("SLURM_JOB_NODELIST", host_peers);
  }

  // ---------- peers ----------
  void report_bad(const std::string& source, const PeerList& l) {
    for (const auto& b : l.bad_lines)
      std::cerr << "fabscope exporter: mesh: " << source << ":" << b.line << ": " << b.why << ": '" << b.text
                << "' (left out)\n";
  }
  void list_error(const std::string& e) {
    ++list_errors;
    if (e != last_list_error) std::cerr << "fabscope exporter: " << core::printable(e) << " (previous peers kept)\n";
    last_list_error = e;
  }

  // Rereads what changed; true when the merged list may differ.
  bool refresh_sources(TimePoint now, bool force) {
    bool changed = force;
    if (!o.peers_file.empty() && (force || now >= next_file_check)) {
      next_file_check = now + std::chrono::milliseconds(static_cast<long long>(o.peers_file_check_seconds * 1000));
      struct stat st {};
      if (::stat(o.peers_file.c_str(), &st) != 0) {
        list_error("mesh: " + o.peers_file + ": " + std::strerror(errno));
      } else if (!file_read || st.st_mtim.tv_sec != file_stat.st_mtim.tv_sec ||
                 st.st_mtim.tv_nsec != file_stat.st_mtim.tv_nsec || st.st_size != file_stat.st_size) {
        try {
          // Never core::read_input: a FIFO put in the file's place would block this thread in open().
          auto text = core::read_regular_file(o.peers_file, kMaxPeersFileBytes);
          file_peers = parse_peer_list(text, o.peers_file, o.peer_port);
          report_bad(o.peers_file, file_peers);
          file_stat = st;
          file_read = true;
          changed = true;
          std::cerr << "fabscope exporter: mesh: " << o.peers_file << ": " << file_peers.peers.size() << " peers"
                    << (file_peers.bad_lines.empty() ? "" : ", " + std::to_string(file_peers.bad_lines.size()) +
                                                                " bad lines left out")
                    << "\n";
        } catch (const std::exception& e) {
          list_error(std::string("mesh: ") + e.what());
        }
      }
    }
    if (!o.dns_name.empty()) {
      // Asked every rotation window; answered by the resolver's thread, never waited for here.
      if (force || now >= next_dns) {
        next_dns = now + rotation();
        resolver->want(o.dns_name, now, std::chrono::milliseconds(0));
      }
      const auto answer = resolver->get(o.dns_name, now);
      if (answer.generation != dns_generation) {
        dns_generation = answer.generation;
        if (!answer.error.empty()) {
          list_error("mesh: --mesh-dns " + answer.error);  // the last good answer stays
        } else {
          auto fresh = peers_from_hosts(answer.addresses, o.peer_port);
          std::vector<std::string> a, b;
          for (auto& p : fresh.peers) a.push_back(p.id);
          for (auto& p : dns_peers.peers) b.push_back(p.id);
          if (a != b) changed = true;
          dns_peers = std::move(fresh);
        }
      }
    }
    return changed;
  }

  std::chrono::milliseconds rotation() const {
    return std::chrono::milliseconds(static_cast<long long>(o.rotation_seconds * 1000));
  }

  void merge_sources() {
    std::map<std::string, MeshPeer> all;
    for (const PeerList* l : {&host_peers, &dns_peers, &file_peers})
      for (const auto& p : l->peers) {
        auto [it, fresh] = all.emplace(p.id, p);
        if (!fresh && it->second.switch_name.empty()) it->second.switch_name = p.switch_name;
      }
    std::vector<MeshPeer> merged;
    // This node listed under several names (its host name, localhost, 127.1, ::ffff:127.0.0.1):
    // the first stays as its place in the list, the others go (never probed).
    bool self_seen = false;
    for (auto& [id, p] : all) {
      if (is_self(p, self_names, port)) {
        if (self_seen) continue;
        self_seen = true;
      }
      merged.push_back(std::move(p));
    }
    self_index = find_self(merged, self_names, port);
    peers = std::move(merged);
    std::lock_guard<std::mutex> lock(mu);
    listed = peers.size() - (self_index ? 1 : 0);
    bad_lines = file_peers.bad_lines.size() + host_peers.bad_lines.size();
    // Peers no longer listed lose their series.
    std::set<std::string> ids;
    for (auto& p : peers) ids.insert(p.id);
    for (auto it = stats.begin(); it != stats.end();) it = ids.count(it->first.first) ? std::next(it) : stats.erase(it);
  }

  void reselect(std::uint64_t w) {
    window = w;
    std::string own_switch = o.self_switch;
    if (own_switch.empty() && self_index) own_switch = peers[*self_index].switch_name;
    Selection s = select_peers(peers, self_index, self_hash, own_switch, w, o.select);
    selected.clear();
    for (auto i : s.peers) selected.push_back(peers[i].id);
    std::set<std::string> keep(selected.begin(), selected.end());
    for (auto& [id, c] : pconns) c.selected = keep.count(id) > 0;
    for (auto i : s.peers)
      if (!pconns.count(peers[i].id)) pconns[peers[i].id].peer = peers[i];
    rr = 0;
    std::lock_guard<std::mutex> lock(mu);
    coverage_seconds = static_cast<double>(s.coverage_windows) * o.rotation_seconds;
    selected_count = selected.size();
  }

  // ---------- prober ----------
  // The stats a peer's results go to (mu held): its own until the label limit, then a slot freed
  // by a peer not probed for three rotation windows, else the _other sum.
  MeshPeerStats& stats_for(const std::string& id, const std::string& transport) {
    const auto key = std::make_pair(id, transport);
    auto it = stats.find(key);
    if (it != stats.end()) return it->second;
    if (stats.size() >= o.peer_label_limit) {
      const double stale_before = core::unix_seconds() - 3 * o.rotation_seconds;
      auto oldest = stats.end();
      for (auto s = stats.begin(); s != stats.end(); ++s)
        if (!pconns.count(s->first.first) && s->second.last_probe_timestamp_seconds < stale_before &&
            (oldest == stats.end() ||
             s->second.last_probe_timestamp_seconds < oldest->second.last_probe_timestamp_seconds))
          oldest = s;
      if (oldest == stats.end()) {
        other_used = true;
        other.peer = kMeshOtherPeer;
        other.transport = "all";
        return other;
      }
      stats.erase(oldest);
    }
    auto& s = stats[key];
    s.peer = id;
    s.transport = transport;
    return s;
  }

  // The peer answers over `transport`: its series of another transport (probes that failed
  // before the handshake chose this one, or before a fall back) keep their counters but lose
  // their up/last-probe verdicts, which would otherwise say "unreachable" for ever (mu held).
  void forget_verdicts(const std::string& id, const std::string& transport) {
    for (auto it = stats.lower_bound({id, ""}); it != stats.end() && it->first.first == id; ++it)
      if (it->first.second != transport) it->second.probed = false;
  }

  void close_pconn(PConn& c) {
    c.resolving = false;
    c.unsolicited = 0;
    c.fd.reset();
    c.state = PConn::State::Idle;
    c.in.clear();
    if (c.ud_remote) {
      ud->remove_remote(c.ud_remote);
      by_cookie.erase(c.cookie);
    }
    c.ud_remote = c.cookie = 0;
    c.ud_qpn = 0;
  }

  void finish(PConn& c, const char* reason) {
    if (!c.pending && !c.outstanding) return;  // nothing was counted as sent
    {
      std::lock_guard<std::mutex> lock(mu);
      auto& s = stats_for(c.peer.id, c.transport);
      s.probed = true;
      s.up = false;
      s.last_probe_timestamp_seconds = core::unix_seconds();
      ++s.errors[reason];
    }
    c.pending = c.outstanding = false;
  }

  void answered(PConn& c, TimePoint now, std::uint64_t delay_ns) {
    (void)delay_ns;  // the peer's own delay: exported by the peer itself
    const double rtt = seconds(now - c.written);
    {
      std::lock_guard<std::mutex> lock(mu);
      auto& s = stats_for(c.peer.id, c.transport);
      forget_verdicts(c.peer.id, c.transport);
      s.rtt.observe(rtt);
      ++s.answered;
      s.probed = true;
      s.up = true;
      s.last_probe_timestamp_seconds = s.last_answer_timestamp_seconds = core::unix_seconds();
    }
    c.outstanding = false;
    c.timeouts_in_row = 0;
  }

  void write_probe(PConn& c, TimePoint now) {
    c.pending = false;
    c.unsolicited = 0;
    c.seq = ++next_seq;
    if (c.ud_remote) {
      c.t_sent = c.t_answered = c.peer_span = 0;
      std::string err;
      c.written = Clock::now();
      c.outstanding = true;
      if (!ud->send(c.ud_remote, {MeshDatagramKind::Probe, c.seq, c.cookie, 0, 0}, c.seq, err)) {
        finish(c, "rdma_error");
        return;
      }
      c.deadline = now + o.probe_timeout;
      return;
    }
    auto b = encode_probe({c.seq, 0});
    c.written = Clock::now();
    ssize_t n = ::send(c.fd.get(), b.data(), b.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n != static_cast<ssize_t>(b.size())) {
      // Sixteen bytes that do not fit: the peer stopped reading long ago, or the socket broke.
      c.outstanding = true;
      finish(c, "closed");
      close_pconn(c);
      return;
    }
    c.outstanding = true;
    c.deadline = now + o.probe_timeout;
  }

  void start_connect(PConn& c, TimePoint now) {
    c.deadline = now + o.connect_timeout;
    std::string address = c.peer.host;
    if (!is_numeric_host(address)) {
      // A name: its last good address from the resolver (looked up again each rotation window);
      // none yet: the probe waits for the lookup, within its connect timeout (resume_resolved).
      resolver->want(address, now, rotation());
      const auto answer = resolver->get(address, now);
      if (answer.addresses.empty()) {
        if (!answer.in_flight) {
          finish(c, "connect");
          return;
        }
        c.resolving = true;
        return;
      }
      address = answer.addresses.front();
    }
    c.resolving = false;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;  // no lookup in this loop, ever
    addrinfo* res = nullptr;
    const std::string port = std::to_string(c.peer.port);
    if (getaddrinfo(address.c_str(), port.c_str(), &hints, &res) != 0 || !res) {
      finish(c, "connect");
      return;
    }
    net::Fd fd(::socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    int rc = fd ? ::connect(fd.get(), res->ai_addr, res->ai_addrlen) : -1;
    const int err = errno;
    freeaddrinfo(res);
    if (!fd || (rc != 0 && err != EINPROGRESS)) {
      finish(c, "connect");
      return;
    }
    net::set_nodelay(fd.get());
    c.fd = std::move(fd);
    c.state = PConn::State::Connecting;
    if (rc == 0) connected(c);
  }

  void connected(PConn& c) {
    const std::string hello = mesh_hello(o.token);
    ssize_t n = ::send(c.fd.get(), hello.data(), hello.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n != static_cast<ssize_t>(hello.size())) {
      finish(c, "connect");
      close_pconn(c);
      return;
    }
    c.state = PConn::State::Hello;
  }

  void probe_next(TimePoint now) {
    if (selected.empty()) return;
    const std::string& id = selected[rr++ % selected.size()];
    PConn& c = pconns[id];
    if (c.pending || c.outstanding) return;  // the previous probe is still under way
    {
      std::lock_guard<std::mutex> lock(mu);
      ++stats_for(id, c.transport).sent;
    }
    if (c.state == PConn::State::Ready) return write_probe(c, now);
    c.pending = true;
    if (c.state == PConn::State::Idle) start_connect(c, now);
  }

  void on_pconn(PConn& c, short revents, TimePoint now) {
    if (c.state == PConn::State::Connecting) {
      if (!(revents & (POLLOUT | POLLERR | POLLHUP))) return;
      int err = 0;
      socklen_t len = sizeof err;
      ::getsockopt(c.fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0) {
        if (c.pending) finish(c, "connect");
        close_pconn(c);
        return;
      }
      return connected(c);
    }
    if (!(revents & (POLLIN | POLLERR | POLLHUP))) return;
    char buf[4 * kMeshReplyBytes];
    const std::size_t frame = c.state == PConn::State::Hello   ? kMeshAnswerBytes
                              : c.state == PConn::State::Offer ? kMeshAcceptBytes
                                                               : kMeshReplyBytes;
    ssize_t n = ::recv(c.fd.get(), buf, sizeof buf - std::min(c.in.size(), frame), MSG_DONTWAIT);
    if (n <= 0) {
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
      if (c.pending || c.outstanding)
        finish(c, c.state == PConn::State::Hello || c.state == PConn::State::Offer ? "connect" : "closed");
      close_pconn(c);
      return;
    }
    c.in.append(buf, static_cast<std::size_t>(n));
    if (c.state == PConn::State::Hello) {
      if (c.in.size() < kMeshAnswerBytes) return;
      const std::string answer = c.in.substr(0, kMeshAnswerBytes);
      c.in.erase(0, kMeshAnswerBytes);
      if (answer == kMeshAccepted) {
        if (ensure_ud(c.fd.get(), now)) {
          auto offer = encode_offer(ud->endpoint());
          if (::send(c.fd.get(), offer.data(), offer.size(), MSG_DONTWAIT | MSG_NOSIGNAL) !=
              static_cast<ssize_t>(offer.size())) {
            if (c.pending) finish(c, "connect");
            close_pconn(c);
            return;
          }
          c.state = PConn::State::Offer;
          return;
        }
        set_transport(c, "tcp");
        c.state = PConn::State::Ready;
        if (c.pending) write_probe(c, now);
        return;
      }
      if (c.pending) finish(c, answer == kMeshRefused ? "refused" : "bad_reply");
      close_pconn(c);
      return;
    }
    if (c.state == PConn::State::Offer) {
      if (c.in.size() < kMeshAcceptBytes) return;
      auto acc = decode_accept(reinterpret_cast<const unsigned char*>(c.in.data()));
      c.in.erase(0, kMeshAcceptBytes);
      if (!acc) {
        if (c.pending) finish(c, "bad_reply");
        close_pconn(c);
        return;
      }
      on_accept(c, *acc);
      c.state = PConn::State::Ready;
      if (c.pending) write_probe(c, now);
      if (c.in.empty()) return;
    }
    while (c.in.size() >= kMeshReplyBytes) {
      auto r = decode_reply(reinterpret_cast<const unsigned char*>(c.in.data()));
      c.in.erase(0, kMeshReplyBytes);
      if (!r) {
        if (c.outstanding) finish(c, "bad_reply");
        close_pconn(c);
        return;
      }
      // A reply to a probe already counted as timed out is late: it was a loss, it stays one.
      if (c.outstanding && r->seq == c.seq) {
        answered(c, now, r->delay_ns);
      } else if (++c.unsolicited > kMaxUnsolicitedReplies) {
        // More replies than probes: a listed peer flooding us costs a redial, not our loop.
        if (c.outstanding) finish(c, "bad_reply");
        close_pconn(c);
        return;
      }
    }
  }

  // Probes that waited for their peer's name: connect once it resolved, fail once it did not.
  void resume_resolved(TimePoint now) {
    for (auto& [id, c] : pconns) {
      if (!c.resolving || c.state != PConn::State::Idle) continue;
      const auto answer = resolver->get(c.peer.host, now);
      if (!answer.addresses.empty()) {
        start_connect(c, now);
      } else if (!answer.in_flight || !answer.error.empty()) {
        c.resolving = false;
        finish(c, "connect");
      }
    }
  }

  void expire_pconns(TimePoint now) {
    for (auto it = pconns.begin(); it != pconns.end();) {
      PConn& c = it->second;
      if ((c.pending || c.outstanding) && now >= c.deadline) {
        if (c.outstanding) {
          finish(c, "timeout");
          if (++c.timeouts_in_row >= kTimeoutsBeforeRedial) close_pconn(c);
        } else {
          finish(c, "connect");
          close_pconn(c);
        }
      }
      // A peer out of the rotation is let go once nothing of it is under way.
      if (!c.selected && !c.pending && !c.outstanding) {
        close_pconn(c);
        it = pconns.erase(it);
      }
      else ++it;
    }
  }

  // ---------- responder ----------
  void reject(RConn& c, const char* reason) {
    std::lock_guard<std::mutex> lock(mu);
    ++rstats.rejected[reason];
    c.dead = true;
  }

  void accept_some(TimePoint now) {
    if (now < accept_paused_until) return;
    for (int i = 0; i < 16; ++i) {
      int fd = ::accept4(listener.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
          accept_paused_until = now + std::chrono::milliseconds(100);  // no busy spin without descriptors
        return;
      }
      auto c = std::make_unique<RConn>();
      c->fd = net::Fd(fd);
      net::set_nodelay(fd);
      c->who = net::peer_text(fd);
      c->source = net::peer_ip(fd);
      make_room_for_pending(c->source);
      c->deadline = now + o.hello_timeout;
      c->accepted_seq = ++accepted_count;
      c->last_active = now;
      c->bucket = Bucket{o.answers_per_second_per_connection, o.answers_per_second_per_connection,
                         std::max(1.0, o.answers_per_second_per_connection / 5), now};
      c->flood_window = now;
      rconns.push_back(std::move(c));
    }
  }

  // A new connection is always taken (a real prober sends its hello with the connect, so it
  // never waits long): when its source address already has max_pending_per_source connections
  // waiting for their hello, the oldest of those is cut; else, when max_pending wait in all, the
  // oldest of the address holding the most. A stranger holding idle connections, even from a
  // few addresses, thus loses its own, never the newest arrival nor a prober alone on its
  // address, and one address cannot hold more than its share.
  void make_room_for_pending(const std::string& source) {
    struct Share {
      std::size_t count = 0;
      RConn* oldest = nullptr;
    };
    std::map<std::string, Share> shares;
    std::size_t all = 0;
    for (auto& r : rconns) {
      if (r->authed || r->dead) continue;
      ++all;
      auto& sh = shares[r->source];
      ++sh.count;
      if (!sh.oldest || r->accepted_seq < sh.oldest->accepted_seq) sh.oldest = r.get();
    }
    const auto here = shares.find(source);
    if (here != shares.end() && here->second.count >= std::max<std::size_t>(1, o.max_pending_per_source)) {
      reject(*here->second.oldest, "too_many_connections");
    } else if (all >= std::max<std::size_t>(1, o.max_pending)) {
      const Share* most = nullptr;
      for (const auto& [addr, sh] : shares)
        if (!most || sh.count > most->count ||
            (sh.count == most->count && sh.oldest->accepted_seq < most->oldest->accepted_seq))
          most = &sh;
      if (most) reject(*most->oldest, "too_many_connections");
    }
  }

  void on_hello(RConn& c, TimePoint now) {
    char buf[kMaxMeshHelloBytes];
    ssize_t n = ::recv(c.fd.get(), buf, kMaxMeshHelloBytes - c.in.size(), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      reject(c, "hello_timeout");  // gone before saying who it is
      return;
    }
    if (n < 0) return;
    c.in.append(buf, static_cast<std::size_t>(n));
    std::size_t size = 0;
    try {
      size = mesh_hello_size(c.in);
    } catch (const Error&) {
      reject(c, "garbage");
      return;
    }
    if (size == 0) return;
    if (!net::secret_equal(mesh_hello_token(std::string_view(c.in).substr(0, size)), o.token)) {
      (void)::send(c.fd.get(), kMeshRefused, kMeshAnswerBytes, MSG_DONTWAIT | MSG_NOSIGNAL);
      reject(c, "unauthenticated");
      return;
    }
    // What came after the hello (at most the rest of one bounded read) is read as probes.
    c.in.erase(0, size);
    const auto authed = static_cast<std::size_t>(
        std::count_if(rconns.begin(), rconns.end(), [](const auto& r) { return r->authed && !r->dead; }));
    if (authed >= o.max_connections) {
      // Full: the longest idle authenticated connection makes room (a peer that rotated away
      // and did not close).
      RConn* idle = nullptr;
      for (auto& r : rconns)
        if (r->authed && !r->dead && (!idle || r->last_active < idle->last_active)) idle = r.get();
      if (idle) reject(*idle, "too_many_connections");
    }
    if (::send(c.fd.get(), kMeshAccepted, kMeshAnswerBytes, MSG_DONTWAIT | MSG_NOSIGNAL) !=
        static_cast<ssize_t>(kMeshAnswerBytes)) {
      c.dead = true;
      return;
    }
    c.authed = true;
    c.last_active = now;
    if (!c.in.empty()) on_frames(c, now);  // an offer or probes sent right behind the hello
  }

  void on_probes(RConn& c) {
    char buf[kReadPerTurn];
    ssize_t n = ::recv(c.fd.get(), buf, kReadPerTurn - c.in.size(), MSG_DONTWAIT);
    const TimePoint read_at = Clock::now();
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      c.dead = true;  // the prober let go (rotation) or went away: not a refusal
      return;
    }
    if (n < 0) return;
    c.last_active = read_at;
    c.in.append(buf, static_cast<std::size_t>(n));
    on_frames(c, read_at);
  }

  // The complete frames in c.in: offers answered at once, probes in one reply batch.
  void on_frames(RConn& c, TimePoint read_at) {
    std::vector<MeshProbe> answer;
    std::uint64_t limited = 0;
    std::size_t off = 0;
    while (off + 4 <= c.in.size()) {
      const auto* b = reinterpret_cast<const unsigned char*>(c.in.data() + off);
      if (is_offer(b)) {
        if (off + kMeshOfferBytes > c.in.size()) break;
        on_offer(c, b, read_at);
        if (c.dead) return;
        off += kMeshOfferBytes;
        continue;
      }
      if (off + kMeshProbeBytes > c.in.size()) break;
      auto p = decode_probe(b);
      if (!p) {
        reject(c, "garbage");
        return;
      }
      if (c.bucket.take(read_at) && total_bucket.take(read_at)) answer.push_back(*p);
      else ++limited;
      off += kMeshProbeBytes;
    }
    c.in.erase(0, off);
    if (read_at - c.flood_window >= std::chrono::seconds(1)) {
      c.flood_window = read_at;
      c.limited_in_window = 0;
    }
    c.limited_in_window += limited;
    std::string out;
    out.reserve(answer.size() * kMeshReplyBytes);
    const TimePoint send_at = Clock::now();
    const auto delay_ns = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(send_at - read_at).count());
    for (const auto& p : answer) {
      auto r = encode_reply({p.seq, p.opaque, delay_ns});
      out.append(reinterpret_cast<const char*>(r.data()), r.size());
    }
    std::uint64_t blocked = 0;
    if (!out.empty()) {
      ssize_t s = ::send(c.fd.get(), out.data(), out.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      if (s != static_cast<ssize_t>(out.size())) {
        // The prober does not read its replies: never buffer for it, let it go.
        blocked = answer.size();
        c.dead = true;
      }
    }
    std::lock_guard<std::mutex> lock(mu);
    rstats.probes["answered"] += answer.size() - blocked;
    rstats.probes["rate_limited"] += limited;
    rstats.probes["send_blocked"] += blocked;
    for (std::size_t i = 0; i < answer.size() - blocked; ++i) rstats.delay.observe(static_cast<double>(delay_ns) * 1e-9);
    if (c.limited_in_window > kFloodProbesPerSecond && !c.dead) {
      ++rstats.rejected["flood"];
      c.dead = true;
    }
  }

  void expire_rconns(TimePoint now) {
    for (auto& c : rconns)
      if (!c->authed && !c->dead && now >= c->deadline) reject(*c, "hello_timeout");
    for (auto& c : rconns)
      if (c->dead && c->cookie) drop_reg(*c);
    rconns.erase(std::remove_if(rconns.begin(), rconns.end(), [](const auto& c) { return c->dead; }), rconns.end());
    std::lock_guard<std::mutex> lock(mu);
    rstats.connections_open = rconns.size();
  }

  // ---------- RDMA ----------
  // The UD endpoint, opened on the first authenticated connection with that connection's local
  // address (the engine's choice: the device holding it); false when the transport is tcp or no
  // endpoint could be opened (said once on stderr, tried again after kRdmaRetry).
  bool ensure_ud(int fd, TimePoint now) {
    if (!o.rdma) return false;
    if (ud) return true;
    if (ud_tried && now < ud_retry_at) return false;
    ud_tried = true;
    ud_retry_at = now + kRdmaRetry;
    MeshRdmaOptions ro;
    ro.device = o.rdma_device;
    ro.port = o.rdma_port;
    ro.gid_index = o.rdma_gid_index;
    ro.local_ipv4 = net::local_ip(fd);  // IPv4 without a dual-stack socket's "::ffff:"
    if (ro.local_ipv4.find('.') == std::string::npos) ro.local_ipv4.clear();  // IPv6 proper: no RoCE v2 IPv4 GID
    std::string why;
    ud = MeshUd::open(ro, why);
    std::lock_guard<std::mutex> lock(mu);
    rdma_view.tried = true;
    if (!ud) {
      rdma_view.up = false;
      std::cerr << "fabscope exporter: mesh: no RDMA endpoint (" << core::printable(why)
                << "); probing over tcp, tried again in 5 minutes\n";
      return false;
    }
    const auto& i = ud->info();
    rdma_view.up = true;
    rdma_view.device = i.device;
    rdma_view.port = i.port;
    rdma_view.gid_index = i.gid_index;
    rdma_view.link_layer = i.link_layer;
    rdma_view.transport = i.transport;
    rdma_view.timestamps = i.timestamps;
    std::cerr << "fabscope exporter: mesh: RDMA endpoint " << i.device << ":" << i.port << " (" << i.transport
              << ", UD QP " << ud->endpoint().qpn << ", completion timestamps "
              << (i.timestamps ? "read" : "not offered") << "): " << core::printable(i.why) << "\n";
    return true;
  }

  void drop_reg(RConn& c) {
    auto it = regs.find(c.cookie);
    if (it != regs.end()) {
      ud->remove_remote(it->second.remote);
      regs.erase(it);
    }
    c.cookie = 0;
  }

  // Responder: an authenticated prober offers its UD endpoint; the accept says ours (or why not).
  void on_offer(RConn& c, const unsigned char* b, TimePoint now) {
    auto e = decode_offer(b);
    if (!e) {
      reject(c, "garbage");
      return;
    }
    if (c.cookie) drop_reg(c);
    MeshAccept acc;
    acc.status = MeshRdmaStatus::NoRdma;
    if (ensure_ud(c.fd.get(), now)) {
      if (e->link != ud->endpoint().link) {
        acc.status = MeshRdmaStatus::LinkDiffers;
      } else {
        std::string err;
        const std::uint64_t remote = ud->add_remote(*e, err);
        if (!remote) {
          acc.status = MeshRdmaStatus::NoRoute;
          std::cerr << "fabscope exporter: mesh: " << core::printable(c.who) << ": " << core::printable(err) << "\n";
        } else {
          std::uint64_t cookie = 0;
          while (cookie == 0 || regs.count(cookie)) cookie = cookie_rng();
          regs[cookie] = {remote, e->qpn, &c};
          c.cookie = cookie;
          acc.status = MeshRdmaStatus::Ok;
          acc.ep = ud->endpoint();
          acc.cookie = cookie;
        }
      }
    }
    auto a = encode_accept(acc);
    if (::send(c.fd.get(), a.data(), a.size(), MSG_DONTWAIT | MSG_NOSIGNAL) != static_cast<ssize_t>(a.size()))
      c.dead = true;
  }

  // The probe waiting for this connection was counted as sent under the transport the peer had;
  // it goes out under `to`. A series that held only that count goes away.
  void set_transport(PConn& c, const std::string& to) {
    if (c.transport == to) return;
    if (c.pending) {
      std::lock_guard<std::mutex> lock(mu);
      auto it = stats.find({c.peer.id, c.transport});
      if (it != stats.end() && it->second.sent > 0) {
        --it->second.sent;
        if (it->second.sent == 0 && !it->second.probed) stats.erase(it);
      }
      ++stats_for(c.peer.id, to).sent;
    }
    c.transport = to;
  }

  // Prober: the responder's accept decides the transport of this peer's probes.
  void on_accept(PConn& c, const MeshAccept& acc) {
    std::string why;
    if (acc.status == MeshRdmaStatus::Ok) {
      const std::uint64_t remote = ud->add_remote(acc.ep, why);
      if (remote) {
        c.ud_remote = remote;
        c.cookie = acc.cookie;
        c.ud_qpn = acc.ep.qpn;
        by_cookie[acc.cookie] = c.peer.id;
        set_transport(c, ud->info().transport);
        told_tcp.erase(c.peer.id);
        return;
      }
    } else {
      why = mesh_rdma_status_text(acc.status);
    }
    set_transport(c, "tcp");
    if (told_tcp.insert(c.peer.id).second)
      std::cerr << "fabscope exporter: mesh: " << core::printable(c.peer.id) << ": probing over tcp: "
                << core::printable(why) << "\n";
  }

  PConn* pconn_by_cookie(std::uint64_t cookie) {
    auto it = by_cookie.find(cookie);
    if (it == by_cookie.end()) return nullptr;
    auto p = pconns.find(it->second);
    return p == pconns.end() || p->second.cookie != cookie ? nullptr : &p->second;
  }

  PConn* pconn_by_seq(std::uint32_t seq) {
    for (auto& [id, c] : pconns)
      if (c.ud_remote && c.seq == seq) return &c;
    return nullptr;
  }

  // Both completion timestamps of the prober and the responder's span: the network's share.
  void network_sample(PConn& c) {
    if (!c.t_sent || !c.t_answered || !c.peer_span || c.t_answered <= c.t_sent) return;
    auto net = mesh_network_rtt_ns(c.t_answered - c.t_sent, c.peer_span);
    c.t_sent = c.t_answered = c.peer_span = 0;
    if (!net) return;
    std::lock_guard<std::mutex> lock(mu);
    stats_for(c.peer.id, c.transport).network_rtt.observe(static_cast<double>(*net) * 1e-9);
  }

  void on_ud_probe(const MeshUdEvent& ev) {
    auto it = regs.find(ev.msg.cookie);
    if (it == regs.end() || it->second.qpn != ev.src_qp || it->second.conn->dead) {
      std::lock_guard<std::mutex> lock(mu);
      ++rstats.probes["unknown_sender"];
      return;
    }
    RConn& c = *it->second.conn;
    const TimePoint now = Clock::now();
    c.last_active = now;
    if (!c.bucket.take(now) || !total_bucket.take(now)) {
      std::lock_guard<std::mutex> lock(mu);
      ++rstats.probes["rate_limited"];
      return;
    }
    const auto delay_ns =
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(now - ev.at).count());
    const std::uint64_t tag = kReplyTag | (next_reply_tag++ & 0xffffffffull);
    std::string err;
    const bool ok = ud->send(it->second.remote, {MeshDatagramKind::Reply, ev.msg.seq, ev.msg.cookie, delay_ns, 0},
                             tag, err);
    if (ok && ev.hw_ns) timings[tag] = {ev.msg.cookie, ev.msg.seq, ev.hw_ns};
    std::lock_guard<std::mutex> lock(mu);
    if (!ok) {
      ++rstats.probes["send_blocked"];
      return;
    }
    ++rstats.probes["answered"];
    rstats.delay.observe(static_cast<double>(delay_ns) * 1e-9);
  }

  // Prober: a reply or timing datagram counts only with the cookie of one of our responders,
  // from that responder's queue pair; a stranger's is counted as from an unknown sender.
  void on_ud_reply(const MeshUdEvent& ev) {
    PConn* c = pconn_by_cookie(ev.msg.cookie);
    MeshUdExpect expect;
    if (c) expect = {true, c->ud_qpn, c->outstanding, c->seq};
    switch (judge_prober_datagram(ev.msg, ev.src_qp, expect)) {
      case MeshUdVerdict::Answer:
        c->t_answered = ev.hw_ns;
        answered(*c, ev.at, ev.msg.delay_ns);
        network_sample(*c);
        break;
      case MeshUdVerdict::Timing:
        c->peer_span = ev.msg.hw_delay_ns;
        network_sample(*c);
        break;
      case MeshUdVerdict::Late:
        break;
      case MeshUdVerdict::Stranger: {
        std::lock_guard<std::mutex> lock(mu);
        ++rstats.probes["unknown_sender"];
        break;
      }
    }
  }

  // receives: the completion channel woke us (every completion); else the send completions only.
  void on_ud_events(bool receives) {
    events.clear();
    if (receives) ud_more = ud->drain(events);
    else ud->poll_sends(events);
    for (const auto& ev : events) {
      switch (ev.kind) {
        case MeshUdEvent::Kind::Garbage: {
          std::lock_guard<std::mutex> lock(mu);
          ++rstats.probes["unknown_sender"];
          break;
        }
        case MeshUdEvent::Kind::Received:
          if (ev.msg.kind == MeshDatagramKind::Probe) on_ud_probe(ev);
          else on_ud_reply(ev);
          break;
        case MeshUdEvent::Kind::Sent:
        case MeshUdEvent::Kind::SendFailed:
          if (ev.tag & kReplyTag) {
            auto t = timings.find(ev.tag);
            if (t == timings.end()) break;
            const Timing tm = t->second;
            timings.erase(t);
            auto r = regs.find(tm.cookie);
            if (ev.kind == MeshUdEvent::Kind::Sent && ev.hw_ns > tm.received_ns && r != regs.end()) {
              std::string err;
              (void)ud->send(r->second.remote,
                             {MeshDatagramKind::Timing, tm.seq, tm.cookie, 0, ev.hw_ns - tm.received_ns},
                             kTimingTag, err);
            }
          } else if (!(ev.tag & kTimingTag)) {
            PConn* c = pconn_by_seq(static_cast<std::uint32_t>(ev.tag));
            if (!c) break;
            if (ev.kind == MeshUdEvent::Kind::SendFailed) {
              if (c->outstanding) finish(*c, "rdma_error");
            } else {
              c->t_sent = ev.hw_ns;
              network_sample(*c);
            }
          }
          break;
      }
    }
    if (!ud->broken().empty()) reset_ud(ud->broken());
  }

  // The queue pair failed: every registration and address handle goes with it. Probers of ours
  // on RDMA dial again (and offer the new endpoint); connections of probers registered here are
  // cut, so they dial again too. The next connection opens a new endpoint at once.
  void reset_ud(const std::string& why) {
    std::cerr << "fabscope exporter: mesh: the RDMA endpoint failed (" << core::printable(why)
              << "); opening a new one\n";
    for (auto& [id, c] : pconns)
      if (c.ud_remote) {
        if (c.outstanding) finish(c, "rdma_error");
        close_pconn(c);
      }
    for (auto& c : rconns)
      if (c->cookie) {
        drop_reg(*c);
        c->dead = true;
      }
    timings.clear();
    by_cookie.clear();
    ud.reset();
    ud_more = false;
    ud_tried = false;
    std::lock_guard<std::mutex> lock(mu);
    rdma_view.up = false;
    ++rdma_view.resets;
  }

  // ---------- the loop ----------
  std::uint64_t window_now() const {
    return static_cast<std::uint64_t>(std::floor(core::unix_seconds() / std::max(1e-3, o.rotation_seconds)));
  }

  void loop() {
    const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / o.probes_per_second));
    TimePoint now = Clock::now();
    next_probe = now + period;
    std::vector<pollfd> pfds;
    std::vector<PConn*> pfd_pconns;
    while (!stop.load()) {
      now = Clock::now();
      if (refresh_sources(now, window == ~0ull)) {
        merge_sources();
        reselect(window_now());
      } else if (window_now() != window) {
        reselect(window_now());
      }
      if (now >= next_probe) {
        probe_next(now);
        next_probe += period;
        if (next_probe < now) next_probe = now + period;  // after a stall: no burst to catch up
      }
      resume_resolved(now);
      expire_pconns(now);
      expire_rconns(now);

      TimePoint wake_at = next_probe;
      for (auto& [id, c] : pconns)
        if (c.pending || c.outstanding) wake_at = std::min(wake_at, c.deadline);
      for (auto& c : rconns)
        if (!c->authed) wake_at = std::min(wake_at, c->deadline);
      if (!o.peers_file.empty()) wake_at = std::min(wake_at, next_file_check);
      if (!o.dns_name.empty()) wake_at = std::min(wake_at, next_dns);
      // A reply whose send completion carries the timestamp of a timing datagram still to send.
      if (!timings.empty()) wake_at = std::min(wake_at, now + std::chrono::milliseconds(1));

      pfds.clear();
      pfd_pconns.clear();
      pfds.push_back({wake.get(), POLLIN, 0});
      pfds.push_back({listener.get(), static_cast<short>(now >= accept_paused_until ? POLLIN : 0), 0});
      for (auto& c : rconns) pfds.push_back({c->fd.get(), POLLIN, 0});
      const std::size_t first_pconn = pfds.size();
      for (auto& [id, c] : pconns) {
        if (c.state == PConn::State::Idle) continue;
        pfds.push_back({c.fd.get(), static_cast<short>(c.state == PConn::State::Connecting ? POLLOUT : POLLIN), 0});
        pfd_pconns.push_back(&c);
      }
      const std::size_t ud_index = pfds.size();
      if (ud) pfds.push_back({ud->fd(), POLLIN, 0});
      const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(wake_at - Clock::now()).count();
      // Completions left by a drain at its budget: look at the sockets without waiting, then
      // drain again.
      ::poll(pfds.data(), pfds.size(), ud_more ? 0 : static_cast<int>(std::clamp<long long>(wait + 1, 0, 1000)));
      now = Clock::now();
      if (pfds[0].revents) {
        std::uint64_t v;
        (void)::read(wake.get(), &v, sizeof v);
      }
      // Connections of this turn, by index: accept_some appends, so the snapshot stays valid.
      const std::size_t known = first_pconn - 2;
      for (std::size_t i = 0; i < known; ++i) {
        if (!pfds[2 + i].revents) continue;
        RConn& c = *rconns[i];
        if (c.dead) continue;
        if (c.authed) on_probes(c);
        else on_hello(c, now);
      }
      if (pfds[1].revents & POLLIN) accept_some(now);
      for (std::size_t i = 0; i < pfd_pconns.size(); ++i)
        if (pfds[first_pconn + i].revents) on_pconn(*pfd_pconns[i], pfds[first_pconn + i].revents, now);
      // The endpoint may have been opened during this turn (then ud_index is past the end).
      if (ud) on_ud_events(ud_more || (ud_index < pfds.size() && pfds[ud_index].revents));
    }
  }
};

Mesh::Mesh(MeshOptions opts) : impl_(std::make_unique<Impl>(std::move(opts))) {}

Mesh::~Mesh() { stop(); }

int Mesh::port() const { return impl_->port; }

void Mesh::start() {
  if (impl_->thread.joinable()) return;
  impl_->stop = false;
  impl_->thread = std::thread([this] {
    try {
      impl_->loop();
    } catch (const std::exception& e) {
      std::cerr << "fabscope exporter: mesh stopped: " << core::printable(e.what()) << "\n";
    }
  });
}

void Mesh::stop() {
  impl_->stop = true;
  std::uint64_t one = 1;
  (void)::write(impl_->wake.get(), &one, sizeof one);
  if (impl_->thread.joinable()) impl_->thread.join();
}

MeshView Mesh::view() const {
  MeshView v;
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (const auto& [id, s] : impl_->stats) v.peers.push_back(s);
  if (impl_->other_used) v.peers.push_back(impl_->other);
  std::sort(v.peers.begin(), v.peers.end(), [](const auto& a, const auto& b) { return a.peer < b.peer; });
  v.responder = impl_->rstats;
  v.peers_listed = impl_->listed;
  v.peers_selected = impl_->selected_count;
  v.peer_label_limit = impl_->o.peer_label_limit;
  v.rotation_seconds = impl_->o.rotation_seconds;
  v.coverage_period_seconds = impl_->coverage_seconds;
  v.probe_rate_per_second = impl_->o.probes_per_second;
  v.peer_list_bad_lines = impl_->bad_lines;
  v.peer_list_errors_total = impl_->list_errors;
  v.rdma = impl_->rdma_view;
  return v;
}

}  // namespace fabscope::mesh
