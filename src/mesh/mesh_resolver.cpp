#include "mesh/mesh_resolver.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "core/error.hpp"

namespace fabscope::mesh {

std::vector<std::string> mesh_resolve_getaddrinfo(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(name.c_str(), nullptr, &hints, &res);
  if (rc != 0) throw Error(std::string("cannot resolve ") + name + ": " + gai_strerror(rc));
  std::set<std::string> out;
  for (addrinfo* a = res; a; a = a->ai_next) {
    char buf[INET6_ADDRSTRLEN] = {};
    if (a->ai_family == AF_INET)
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr, buf, sizeof buf);
    else if (a->ai_family == AF_INET6)
      inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr, buf, sizeof buf);
    if (buf[0]) out.insert(buf);
  }
  freeaddrinfo(res);
  if (out.empty()) throw Error("cannot resolve " + name + ": no IPv4 or IPv6 address");
  return {out.begin(), out.end()};
}

bool is_numeric_host(const std::string& host) {
  in_addr v4;
  in6_addr v6;
  // inet_aton: every numeric form getaddrinfo takes without a lookup (127.1 too).
  return inet_pton(AF_INET6, host.c_str(), &v6) == 1 ||
         (host.find_first_not_of("0123456789abcdefxABCDEFX.") == std::string::npos && inet_aton(host.c_str(), &v4) == 1);
}

struct MeshResolver::State {
  struct Entry {
    std::vector<std::string> addresses;
    std::string error;
    std::uint64_t generation = 0;
    bool in_flight = false;   // a thread is resolving it (possibly late)
    bool late = false;        // that lookup passed its deadline (counted once)
    bool queued = false;
    Clock::time_point started{}, returned{};
  };
  MeshResolveFn fn;
  std::chrono::milliseconds deadline{};
  int wake = -1;
  std::mutex mu;
  std::map<std::string, Entry> names;
  std::deque<std::string> queue;
  std::size_t running = 0;
  ~State() {
    if (wake >= 0) ::close(wake);
  }
};

namespace {

// Starts queued lookups while fewer than kMaxMeshLookups run (mu held).
void start_lookups(const std::shared_ptr<MeshResolver::State>& s, MeshResolver::Clock::time_point now) {
  while (s->running < kMaxMeshLookups && !s->queue.empty()) {
    const std::string name = s->queue.front();
    s->queue.pop_front();
    auto& e = s->names[name];
    e.queued = false;
    e.in_flight = true;
    e.late = false;
    e.started = now;
    ++s->running;
    auto run = [s, name] {
      std::vector<std::string> got;
      std::string error;
      try {
        got = s->fn(name);
        if (got.empty()) error = "no address";
      } catch (const std::exception& ex) {
        error = ex.what();
      }
      {
        std::lock_guard<std::mutex> lock(s->mu);
        auto& e = s->names[name];
        if (error.empty()) e.addresses = std::move(got);
        e.error = error;
        e.in_flight = false;
        e.returned = MeshResolver::Clock::now();
        ++e.generation;
        --s->running;
        start_lookups(s, e.returned);
      }
      if (s->wake >= 0) {
        std::uint64_t one = 1;
        (void)!::write(s->wake, &one, sizeof one);
      }
    };
    try {
      std::thread(std::move(run)).detach();
    } catch (const std::exception& ex) {
      // No thread to be had (the process is at its limit): this lookup fails, the next is tried later.
      e.in_flight = false;
      e.error = std::string("cannot resolve ") + name + ": no thread for the lookup (" + ex.what() + ")";
      e.returned = now;
      ++e.generation;
      --s->running;
    }
  }
}

}  // namespace

MeshResolver::MeshResolver(MeshResolveFn fn, std::chrono::milliseconds deadline, int wake_fd)
    : state_(std::make_shared<State>()) {
  state_->fn = fn ? std::move(fn) : MeshResolveFn(mesh_resolve_getaddrinfo);
  state_->deadline = deadline;
  state_->wake = wake_fd >= 0 ? ::dup(wake_fd) : -1;
}

MeshResolver::~MeshResolver() {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->queue.clear();  // lookups under way finish on their own and keep the state alive
}

void MeshResolver::want(const std::string& name, Clock::time_point now, std::chrono::milliseconds max_age) {
  std::lock_guard<std::mutex> lock(state_->mu);
  auto& e = state_->names[name];
  if (e.in_flight || e.queued) return;
  if (e.generation > 0 && now - e.returned < max_age) return;
  e.queued = true;
  state_->queue.push_back(name);
  start_lookups(state_, now);
}

MeshResolver::Answer MeshResolver::get(const std::string& name, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(state_->mu);
  auto it = state_->names.find(name);
  if (it == state_->names.end()) return {};
  auto& e = it->second;
  if (e.in_flight && !e.late && now - e.started >= state_->deadline) {
    e.late = true;
    e.error = "cannot resolve " + name + ": no answer within " + std::to_string(state_->deadline.count()) + " ms";
    ++e.generation;
  }
  return {e.addresses, e.error, e.generation, e.in_flight || e.queued};
}

}  // namespace fabscope::mesh
