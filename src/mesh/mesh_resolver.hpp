#pragma once
// Names the mesh needs (--mesh-dns, peers listed by name) resolved outside the mesh's loop: the
// loop asks and reads answers, never waits. Each lookup runs on a thread of its own (at most
// kMaxMeshLookups at once), detached, so a resolver that never answers holds neither the loop
// nor the exporter's stop; a lookup past its deadline counts as failed (the last good answer is
// kept and used) and the name is asked again only once that lookup has returned.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fabscope::mesh {

inline constexpr std::size_t kMaxMeshLookups = 4;

// Every address a name resolves to, as text (sorted, no duplicates); throws fabscope::Error
// saying why not. The mesh's default: getaddrinfo.
using MeshResolveFn = std::function<std::vector<std::string>(const std::string& name)>;
std::vector<std::string> mesh_resolve_getaddrinfo(const std::string& name);

// True when host is an IPv4 or IPv6 address written out (nothing to resolve).
bool is_numeric_host(const std::string& host);

class MeshResolver {
 public:
  using Clock = std::chrono::steady_clock;
  // wake_fd: an eventfd written (1) when a lookup returns; duplicated, so it stays valid for a
  // lookup that returns after the resolver is gone.
  MeshResolver(MeshResolveFn fn, std::chrono::milliseconds deadline, int wake_fd);
  ~MeshResolver();
  MeshResolver(const MeshResolver&) = delete;
  MeshResolver& operator=(const MeshResolver&) = delete;

  struct Answer {
    std::vector<std::string> addresses;  // the last good answer; empty: none yet
    std::string error;                   // why the latest lookup failed or is late; "" it did not
    std::uint64_t generation = 0;        // grows with every lookup that returned or went late
    bool in_flight = false;
  };
  // Starts a lookup of name unless one is under way or the last one returned less than max_age
  // ago (a failed one: max_age too). Never blocks.
  void want(const std::string& name, Clock::time_point now, std::chrono::milliseconds max_age);
  // What is known of name (nothing asked: an empty answer). Marks a lookup past its deadline late.
  Answer get(const std::string& name, Clock::time_point now);

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace fabscope::mesh
