#pragma once
// The mesh's RDMA transport: one unreliable-datagram (UD) queue pair per node, shared by the
// prober and the responder, woken through a completion channel so the mesh's poll() loop waits
// on it like on a socket. Device, port and GID come from the point-to-point engine's choice
// (rdma/choose.hpp) for the address this node's control connection uses. Completion timestamps
// are asked of the device (ibv_create_cq_ex); where it has none, only the software clock is read.
//
// Opened lazily by the mesh, on the first authenticated connection in either direction; never
// in a node that does not run `--mesh`, and never with `--mesh-transport tcp`. libibverbs is the
// process's one dlopen'ed table (probe/ibverbs.hpp).
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mesh/mesh_wire.hpp"

namespace fabscope::mesh {

struct MeshRdmaOptions {
  std::string device;               // "" choose; "mlx5_0"
  std::optional<int> port;          // with device
  std::optional<int> gid_index;     // "" choose (the RoCE v2 GID of local_ipv4)
  std::string local_ipv4;           // this node's address on the control connection ("" unknown)
  int recv_depth = 128;             // receives posted (datagrams beyond them are dropped by the device)
  int send_depth = 64;              // sends in flight at most
};

struct MeshRdmaInfo {
  std::string device;
  int port = 1;
  int gid_index = -1;               // -1: no GRH (InfiniBand inside the subnet)
  std::string link_layer;           // "InfiniBand" | "Ethernet"
  std::string transport;            // label value: "rdma_ib" | "rdma_roce"
  bool timestamps = false;          // the device's completion timestamps are read
  std::uint64_t core_clock_khz = 0;
  std::string why;                  // the choice's reasons, one line
};

struct MeshUdEvent {
  enum class Kind { Received, Garbage, Sent, SendFailed };  // Garbage: a datagram not ours
  Kind kind = Kind::Received;
  MeshDatagram msg;                 // Received
  std::uint32_t src_qp = 0;         // Received
  std::uint64_t tag = 0;            // Sent / SendFailed: send()'s tag
  std::uint64_t hw_ns = 0;          // the device's completion time in ns; 0 without timestamps
  std::chrono::steady_clock::time_point at{};  // when the completion was polled
  std::string error;                // SendFailed
};

class MeshUd {
 public:
  // nullptr with `why_not` when no RDMA endpoint can be opened (no libibverbs, no device, no
  // ACTIVE port, no RoCE v2 GID for the address, a verbs call failed: each named).
  static std::unique_ptr<MeshUd> open(const MeshRdmaOptions& opts, std::string& why_not);
  ~MeshUd();
  MeshUd(const MeshUd&) = delete;
  MeshUd& operator=(const MeshUd&) = delete;

  int fd() const;  // readable when completions wait
  const MeshRdmaInfo& info() const;
  MeshRdmaEndpoint endpoint() const;

  // An address handle to a remote endpoint; 0 and `err` when it cannot be made.
  std::uint64_t add_remote(const MeshRdmaEndpoint& e, std::string& err);
  void remove_remote(std::uint64_t remote);
  // Posts one datagram; `tag` comes back in its Sent/SendFailed event. false and `err` when every
  // send slot is in flight or the post failed.
  bool send(std::uint64_t remote, const MeshDatagram& d, std::uint64_t tag, std::string& err);
  // The completions so far (call when fd() polls readable; cheap when none wait), at most
  // recv_depth receives: true when that many were taken and more may wait, which fd() will not
  // say (call again at once). A flood of datagrams thus never holds the caller's loop; what the
  // device cannot post meanwhile it drops. Only receives make fd() readable: send completions
  // wait for this or for poll_sends.
  bool drain(std::vector<MeshUdEvent>& out);
  // The send completions so far, without a system call (each turn of the loop).
  void poll_sends(std::vector<MeshUdEvent>& out);
  // A completion failed: the queue pair is in the error state and flushes everything (soft-RoCE
  // does this when a datagram's destination does not resolve). "" while healthy. The mesh then
  // closes this endpoint and opens a new one.
  const std::string& broken() const;

  struct Impl;

 private:
  explicit MeshUd(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fabscope::mesh
