#pragma once
// The exporter's mesh mode (`--mesh`): every node answers probes of the mesh's other nodes and
// probes a few of them itself, round robin, at a fixed total rate. Each peer gets a TCP
// connection (the control channel: token, then the RDMA endpoints); with transport auto the
// probes themselves travel as UD datagrams over RDMA (mesh_rdma.hpp, transport="rdma_ib" or
// "rdma_roce") when both ends have an endpoint on the same link layer, else over that TCP
// connection (transport="tcp"). One thread does both, in one poll() loop; it exists only when the
// mode is on. Nothing in the loop waits: names are resolved on threads of their own
// (mesh_resolver.hpp) and outside files are opened without waiting. Scrapes read
// the counters under a mutex the loop holds only between two polls, never across one.
//
// Bounds (docs/metrics.md, "Mesh"): a connection is answered only after a hello with the mesh's
// shared token (compared in constant time); at most max_pending connections say hello at once
// (max_pending_per_source of one address), each within hello_timeout and kMaxMeshHelloBytes; a
// new connection over either limit cuts the oldest one waiting of its own address, else of the
// address holding the most (a prober says hello with its connect), never itself; at most
// max_connections authenticated ones
// (the longest idle is cut for a new one); every connection buffers at most one partial probe;
// probes beyond the per-connection and total rates are not answered, and a connection far over
// them is cut. Every refusal is counted by reason.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mesh/mesh_families.hpp"
#include "mesh/mesh_peers.hpp"
#include "mesh/mesh_resolver.hpp"

namespace fabscope::mesh {

struct MeshOptions {
  std::string listen_host;          // "" every address (IPv6 dual-stack where available)
  int listen_port = 9418;           // 0: the kernel's choice (tests)
  std::string token;                // the mesh's shared token (check_mesh_token)
  // Peer sources, all optional and merged; none: the node only answers.
  std::string peers_file;           // reread when its modification time or size changes
  std::string dns_name;             // resolved again every rotation window
  std::vector<std::string> hosts;   // fixed names (Slurm's node list, expanded)
  int peer_port = 0;                // port of peers listed without one; 0: listen_port
  std::vector<std::string> self_names;  // names and addresses that mean this node ("" ignored)
  std::string self_switch;          // the switch this node is cabled to; "" unknown
  bool rdma = true;                 // transport auto (RDMA where both ends can); false: tcp only
  std::string rdma_device;          // "" the engine's choice for the control connection's address
  std::optional<int> rdma_port, rdma_gid_index;
  SelectOptions select;
  double rotation_seconds = 60;
  double probes_per_second = 10;    // this node's total
  std::chrono::milliseconds probe_timeout{200};
  std::chrono::milliseconds connect_timeout{1000};
  std::size_t peer_label_limit = 64;
  // The responder's bounds.
  double answers_per_second_per_connection = 100;
  double answers_per_second = 1000;
  std::size_t max_connections = 64;
  std::size_t max_pending = 32;            // waiting for their hello, in all
  std::size_t max_pending_per_source = 8;  // waiting for their hello, from one address
  std::chrono::milliseconds hello_timeout{2000};
  double peers_file_check_seconds = 5;
  // Names (--mesh-dns, peers listed by name) are resolved outside the loop (mesh_resolver.hpp):
  // a lookup not answered within resolve_timeout counts as failed and the last good answer
  // stays. resolve: empty is getaddrinfo (tests put a stand-in).
  std::chrono::milliseconds resolve_timeout{5000};
  MeshResolveFn resolve;
};

class Mesh {
 public:
  // Binds the responder's port (throws fabscope::Error naming the address when it cannot) and
  // checks the token; starts nothing.
  explicit Mesh(MeshOptions opts);
  ~Mesh();
  Mesh(const Mesh&) = delete;
  Mesh& operator=(const Mesh&) = delete;

  int port() const;  // the bound port
  void start();      // the loop's thread
  void stop();       // wakes the loop at once and joins it

  MeshView view() const;
  std::vector<MetricFamily> families() const { return mesh_families(view()); }

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace fabscope::mesh
