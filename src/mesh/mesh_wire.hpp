#pragma once
// The mesh's TCP probe protocol (docs/metrics.md, "Mesh"). A prober opens one connection per
// peer and keeps it:
//   hello   "FSMESH1 " TOKEN "\n"        at most kMaxMeshHelloBytes, the first bytes sent
//   answer  "FSMSHOK\n" or "FSMSHNO\n"   the responder accepts the token or refuses (and closes)
//   probe   16 bytes: "FSMP", u32 sequence, u64 opaque (echoed), big-endian
//   reply   24 bytes: "FSMR", u32 sequence, u64 opaque, u64 the responder's delay in ns (from
//           reading the probe to writing the reply)
//   offer   32 bytes: "FSMA", u32 UD QP number, u16 LID, u8 link (1 InfiniBand, 2 Ethernet),
//           u8 flags, 16-byte GID, 4 zero bytes. The prober's RDMA endpoint, sent once after the
//           answer when it has one (transport auto/rdma).
//   accept  48 bytes: "FSMB", the responder's endpoint in the same layout (QP number 0: no RDMA
//           path, status says why), u64 cookie, u8 status, 11 zero bytes. UD probes carry the
//           cookie; the responder answers a datagram only with a cookie it gave an authenticated
//           connection that is still open, from the QP that connection offered.
// Fixed sizes: the responder never buffers more than one partial frame per connection.
//
// UD datagrams (40 bytes; docs/metrics.md): "FSMU", u8 kind (1 probe, 2 reply, 3 timing),
// 3 zero bytes, u32 sequence, 4 zero bytes, u64 cookie, u64 the responder's delay in ns
// (software clock, from the probe's completion to posting the reply), u64 the responder's delay
// by the device's completion timestamps (kind 3 only: from the probe's receive completion to the
// reply's send completion).
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fabscope::mesh {

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

inline constexpr std::size_t kMeshOfferBytes = 32;
inline constexpr std::size_t kMeshAcceptBytes = 48;
inline constexpr std::size_t kMeshDatagramBytes = 40;

struct MeshRdmaEndpoint {
  std::uint32_t qpn = 0;  // 0: none
  std::uint16_t lid = 0;
  std::uint8_t link = 0;  // 1 InfiniBand, 2 Ethernet (RoCE)
  std::uint8_t flags = 0;  // bit 0: completion timestamps
  std::array<unsigned char, 16> gid{};
};
inline constexpr std::uint8_t kMeshLinkIb = 1, kMeshLinkEth = 2;
inline constexpr std::uint8_t kMeshFlagTimestamps = 1;
// Why an accept carries no endpoint.
enum class MeshRdmaStatus : std::uint8_t {
  Ok = 0,
  NoRdma = 1,        // the responder has no RDMA endpoint (transport tcp, or none could be opened)
  LinkDiffers = 2,   // InfiniBand against Ethernet
  NoRoute = 3,       // the responder could not make an address handle to the prober
};
const char* mesh_rdma_status_text(MeshRdmaStatus s);

struct MeshAccept {
  MeshRdmaEndpoint ep;
  std::uint64_t cookie = 0;
  MeshRdmaStatus status = MeshRdmaStatus::Ok;
};

std::array<unsigned char, kMeshOfferBytes> encode_offer(const MeshRdmaEndpoint& e);
std::array<unsigned char, kMeshAcceptBytes> encode_accept(const MeshAccept& a);
// nullopt when the magic is wrong, the link is unknown or an endpoint has QP number 0 (offer).
std::optional<MeshRdmaEndpoint> decode_offer(const unsigned char* b);
std::optional<MeshAccept> decode_accept(const unsigned char* b);
bool is_offer(const unsigned char* b);   // the first 4 bytes say "FSMA"
bool is_accept(const unsigned char* b);  // "FSMB"

enum class MeshDatagramKind : std::uint8_t { Probe = 1, Reply = 2, Timing = 3 };
struct MeshDatagram {
  MeshDatagramKind kind = MeshDatagramKind::Probe;
  std::uint32_t seq = 0;
  std::uint64_t cookie = 0;
  std::uint64_t delay_ns = 0;
  std::uint64_t hw_delay_ns = 0;
};
std::array<unsigned char, kMeshDatagramBytes> encode_datagram(const MeshDatagram& d);
// nullopt unless exactly kMeshDatagramBytes of ours with a known kind.
std::optional<MeshDatagram> decode_datagram(const unsigned char* b, std::size_t n);

// What the prober makes of a reply or timing datagram. The prober looks the datagram's cookie
// up among the cookies its responders gave it; `expect` is what it holds for that responder
// (known false: no such cookie here).
struct MeshUdExpect {
  bool known = false;
  std::uint32_t qpn = 0;          // the responder's QP number, from its accept
  bool outstanding = false;       // a probe to it waits for its reply
  std::uint32_t seq = 0;          // the last probe's sequence number
};
enum class MeshUdVerdict {
  Answer,    // the reply to the probe under way
  Timing,    // the responder's span for the last probe
  Late,      // ours, but for no probe under way (a late reply, a timing of an older probe): ignored
  Stranger,  // a cookie this prober does not hold, or the right cookie from another queue pair:
             // counted as from an unknown sender, never an answer
};
// `d` is a reply or a timing datagram (probes go to the responder).
MeshUdVerdict judge_prober_datagram(const MeshDatagram& d, std::uint32_t src_qp, const MeshUdExpect& expect);

// The network's share of a UD round trip by completion timestamps: the prober's send-to-receive
// span minus the responder's receive-to-send span, both in ns. nullopt when the result would be
// negative (clocks misread) or a span is 0.
std::optional<std::uint64_t> mesh_network_rtt_ns(std::uint64_t prober_span_ns, std::uint64_t responder_span_ns);
// Device clock ticks to ns at hca_core_clock kHz (ibv_device_attr_ex); 0 kHz -> nullopt.
std::optional<std::uint64_t> mesh_ticks_to_ns(std::uint64_t ticks, std::uint64_t core_clock_khz);

// A shared token is 16 to 256 printable characters without spaces. Throws fabscope::Error
// naming `source` (the file or the variable) and what is wrong, never the token itself.
void check_mesh_token(const std::string& token, const std::string& source);

}  // namespace fabscope::mesh
