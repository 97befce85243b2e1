#pragma once
// The mesh's TCP probe protocol (docs/metrics.md, "Mesh"). A prober opens one connection per
// peer and keeps it:
//   hello   "FSMESH1 " TOKEN "\n"        at most kMaxMeshHelloBytes, the first bytes sent
//   answer  "FSMSHOK\n" or "FSMSHNO\n"   the responder accepts the token or refuses (and closes)
//   probe   16 bytes: "FSMP", u32 sequence, u64 opaque (echoed), big-endian
//   reply   24 bytes: "FSMR", u32 sequence, u64 opaque, u64 the responder's delay in ns (from
//           reading the probe to writing the reply)
// Fixed sizes: the responder never buffers more than one partial probe per connection.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fabscope::exporter {

inline constexpr std::size_t kMaxMeshHelloBytes = 8 + 256 + 1;
inline constexpr std::size_t kMeshProbeBytes = 16;
inline constexpr std::size_t kMeshReplyBytes = 24;
inline constexpr char kMeshAccepted[] = "FSMSHOK\n";
inline constexpr char kMeshRefused[] = "FSMSHNO\n";
inline constexpr std::size_t kMeshAnswerBytes = 8;

std::string mesh_hello(const std::string& token);

// The responder's look at a new connection's first bytes: 0 while the hello's newline has not
// come, else the hello's size. Throws fabscope::Error when the bytes are not a mesh hello or the
// hello would exceed kMaxMeshHelloBytes.
std::size_t mesh_hello_size(std::string_view bytes);
// The token of a complete hello (mesh_hello_size's bytes).
std::string_view mesh_hello_token(std::string_view hello);

struct MeshProbe {
  std::uint32_t seq = 0;
  std::uint64_t opaque = 0;
};
struct MeshReply {
  std::uint32_t seq = 0;
  std::uint64_t opaque = 0;
  std::uint64_t delay_ns = 0;
};

std::array<unsigned char, kMeshProbeBytes> encode_probe(const MeshProbe& p);
std::array<unsigned char, kMeshReplyBytes> encode_reply(const MeshReply& r);
// nullopt when the magic is wrong (the bytes are not ours).
std::optional<MeshProbe> decode_probe(const unsigned char* b);
std::optional<MeshReply> decode_reply(const unsigned char* b);

// A shared token is 16 to 256 printable characters without spaces. Throws fabscope::Error
// naming `source` (the file or the variable) and what is wrong, never the token itself.
void check_mesh_token(const std::string& token, const std::string& source);

}  // namespace fabscope::exporter
