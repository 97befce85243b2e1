// libFuzzer target for the probe mesh's outside inputs: a peer list file (parse_peer_list and the
// selection over what it yields), and the bytes a stranger sends the responder (the hello's
// framing and token, probes, an RDMA offer) or a peer sends the prober (its answer, replies, an
// RDMA accept), and the UD datagrams anyone on the fabric can send the queue pair.
// Build and run: scripts/fuzz.sh mesh (or cmake --preset fuzz; see tests/fuzz/README).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "mesh/mesh_peers.hpp"
#include "mesh/mesh_wire.hpp"

using namespace fabscope;
using namespace fabscope::mesh;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto l = parse_peer_list(text, "fuzz", 9418);
    for (std::size_t i = 1; i < l.peers.size(); ++i)
      if (!(l.peers[i - 1].id < l.peers[i].id)) std::abort();  // sorted, no duplicates
    for (const auto& p : l.peers)
      if (p.port < 1 || p.port > 65535 || p.host.empty()) std::abort();
    SelectOptions o;
    o.sample = 3;
    auto s = select_peers(l.peers, l.peers.empty() ? std::nullopt : std::optional<std::size_t>(0), 7, "x", size, o);
    for (auto i : s.peers)
      if (i >= l.peers.size() || i == 0) std::abort();
  } catch (const Error&) {
  }
  try {
    const std::size_t n = mesh_hello_size(text);
    if (n > kMaxMeshHelloBytes || n > size) std::abort();
    if (n) (void)mesh_hello_token(std::string_view(text).substr(0, n));
  } catch (const Error&) {
  }
  for (std::size_t off = 0; off + kMeshReplyBytes <= size; off += kMeshReplyBytes) {
    (void)decode_probe(data + off);
    if (auto r = decode_reply(data + off)) {
      auto again = encode_reply(*r);
      if (std::string_view(reinterpret_cast<const char*>(again.data()), again.size()) !=
          std::string_view(text).substr(off, kMeshReplyBytes))
        std::abort();
    }
  }
  // RDMA: what decodes must encode back to the same endpoint fields, and a datagram of any other
  // length than kMeshDatagramBytes is never ours.
  if (size >= kMeshAcceptBytes) {
    if (auto o = decode_offer(data)) {
      if (o->qpn == 0 || o->qpn > 0xffffff) std::abort();
      auto again = encode_offer(*o);
      if (std::string_view(reinterpret_cast<const char*>(again.data()), 28) != std::string_view(text).substr(0, 28))
        std::abort();
    }
    if (auto a = decode_accept(data)) {
      auto again = encode_accept(*a);
      if (std::string_view(reinterpret_cast<const char*>(again.data()), 37) != std::string_view(text).substr(0, 37))
        std::abort();
    }
  }
  if (auto d = decode_datagram(data, size)) {
    if (size != kMeshDatagramBytes) std::abort();
    // Every field but the reserved bytes (5-7, 12-15) comes back as it was.
    auto again = encode_datagram(*d);
    if (std::memcmp(again.data(), data, 5) != 0 || std::memcmp(again.data() + 8, data + 8, 4) != 0 ||
        std::memcmp(again.data() + 16, data + 16, kMeshDatagramBytes - 16) != 0)
      std::abort();
  }
  return 0;
}
