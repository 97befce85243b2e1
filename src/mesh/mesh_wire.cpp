#include "mesh/mesh_wire.hpp"

#include <cstring>

#include "core/error.hpp"

namespace fabscope::mesh {

namespace {
constexpr char kHelloPrefix[] = "FSMESH1 ";
constexpr std::size_t kHelloPrefixBytes = sizeof kHelloPrefix - 1;

void put32(unsigned char* b, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b[i] = static_cast<unsigned char>(v >> (24 - 8 * i));
}
void put64(unsigned char* b, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (56 - 8 * i));
}
std::uint32_t get32(const unsigned char* b) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | b[i];
  return v;
}
std::uint64_t get64(const unsigned char* b) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | b[i];
  return v;
}
}  // namespace

std::string mesh_hello(const std::string& token) { return kHelloPrefix + token + "\n"; }

std::size_t mesh_hello_size(std::string_view b) {
  const std::size_t n = std::min(b.size(), kHelloPrefixBytes);
  if (std::memcmp(b.data(), kHelloPrefix, n) != 0) throw Error("not a fabscope mesh hello");
  const auto nl = b.find('\n', n);
  if (nl == std::string_view::npos) {
    if (b.size() >= kMaxMeshHelloBytes) throw Error("hello longer than " + std::to_string(kMaxMeshHelloBytes) + " bytes");
    return 0;
  }
  if (nl + 1 > kMaxMeshHelloBytes) throw Error("hello longer than " + std::to_string(kMaxMeshHelloBytes) + " bytes");
  return nl + 1;
}

std::string_view mesh_hello_token(std::string_view hello) {
  if (hello.size() < kHelloPrefixBytes + 1) return {};
  return hello.substr(kHelloPrefixBytes, hello.size() - kHelloPrefixBytes - 1);
}

std::array<unsigned char, kMeshProbeBytes> encode_probe(const MeshProbe& p) {
  std::array<unsigned char, kMeshProbeBytes> b{};
  std::memcpy(b.data(), "FSMP", 4);
  put32(b.data() + 4, p.seq);
  put64(b.data() + 8, p.opaque);
  return b;
}

std::array<unsigned char, kMeshReplyBytes> encode_reply(const MeshReply& r) {
  std::array<unsigned char, kMeshReplyBytes> b{};
  std::memcpy(b.data(), "FSMR", 4);
  put32(b.data() + 4, r.seq);
  put64(b.data() + 8, r.opaque);
  put64(b.data() + 16, r.delay_ns);
  return b;
}

std::optional<MeshProbe> decode_probe(const unsigned char* b) {
  if (std::memcmp(b, "FSMP", 4) != 0) return std::nullopt;
  return MeshProbe{get32(b + 4), get64(b + 8)};
}

std::optional<MeshReply> decode_reply(const unsigned char* b) {
  if (std::memcmp(b, "FSMR", 4) != 0) return std::nullopt;
  return MeshReply{get32(b + 4), get64(b + 8), get64(b + 16)};
}

namespace {
void put16(unsigned char* b, std::uint16_t v) {
  b[0] = static_cast<unsigned char>(v >> 8);
  b[1] = static_cast<unsigned char>(v);
}
std::uint16_t get16(const unsigned char* b) { return static_cast<std::uint16_t>((b[0] << 8) | b[1]); }
void put_endpoint(unsigned char* b, const char* magic, const MeshRdmaEndpoint& e) {
  std::memcpy(b, magic, 4);
  put32(b + 4, e.qpn);
  put16(b + 8, e.lid);
  b[10] = e.link;
  b[11] = e.flags;
  std::memcpy(b + 12, e.gid.data(), 16);
}
MeshRdmaEndpoint get_endpoint(const unsigned char* b) {
  MeshRdmaEndpoint e;
  e.qpn = get32(b + 4);
  e.lid = get16(b + 8);
  e.link = b[10];
  e.flags = b[11];
  std::memcpy(e.gid.data(), b + 12, 16);
  return e;
}
bool known_link(std::uint8_t l) { return l == kMeshLinkIb || l == kMeshLinkEth; }
}  // namespace

const char* mesh_rdma_status_text(MeshRdmaStatus s) {
  switch (s) {
    case MeshRdmaStatus::Ok: return "ok";
    case MeshRdmaStatus::NoRdma: return "the peer has no RDMA endpoint";
    case MeshRdmaStatus::LinkDiffers: return "the peer's link layer differs (InfiniBand against Ethernet)";
    case MeshRdmaStatus::NoRoute: return "the peer could not make an address handle to this node";
  }
  return "unknown status";
}

std::array<unsigned char, kMeshOfferBytes> encode_offer(const MeshRdmaEndpoint& e) {
  std::array<unsigned char, kMeshOfferBytes> b{};
  put_endpoint(b.data(), "FSMA", e);
  return b;
}

std::array<unsigned char, kMeshAcceptBytes> encode_accept(const MeshAccept& a) {
  std::array<unsigned char, kMeshAcceptBytes> b{};
  put_endpoint(b.data(), "FSMB", a.ep);
  put64(b.data() + 28, a.cookie);
  b[36] = static_cast<unsigned char>(a.status);
  return b;
}

bool is_offer(const unsigned char* b) { return std::memcmp(b, "FSMA", 4) == 0; }
bool is_accept(const unsigned char* b) { return std::memcmp(b, "FSMB", 4) == 0; }

std::optional<MeshRdmaEndpoint> decode_offer(const unsigned char* b) {
  if (!is_offer(b)) return std::nullopt;
  auto e = get_endpoint(b);
  if (e.qpn == 0 || e.qpn > 0xffffff || !known_link(e.link)) return std::nullopt;
  return e;
}

std::optional<MeshAccept> decode_accept(const unsigned char* b) {
  if (!is_accept(b)) return std::nullopt;
  MeshAccept a;
  a.ep = get_endpoint(b);
  a.cookie = get64(b + 28);
  if (b[36] > static_cast<unsigned char>(MeshRdmaStatus::NoRoute)) return std::nullopt;
  a.status = static_cast<MeshRdmaStatus>(b[36]);
  if (a.status == MeshRdmaStatus::Ok && (a.ep.qpn == 0 || a.ep.qpn > 0xffffff || !known_link(a.ep.link)))
    return std::nullopt;
  return a;
}

std::array<unsigned char, kMeshDatagramBytes> encode_datagram(const MeshDatagram& d) {
  std::array<unsigned char, kMeshDatagramBytes> b{};
  std::memcpy(b.data(), "FSMU", 4);
  b[4] = static_cast<unsigned char>(d.kind);
  put32(b.data() + 8, d.seq);
  put64(b.data() + 16, d.cookie);
  put64(b.data() + 24, d.delay_ns);
  put64(b.data() + 32, d.hw_delay_ns);
  return b;
}

std::optional<MeshDatagram> decode_datagram(const unsigned char* b, std::size_t n) {
  if (n != kMeshDatagramBytes || std::memcmp(b, "FSMU", 4) != 0) return std::nullopt;
  if (b[4] < 1 || b[4] > 3) return std::nullopt;
  MeshDatagram d;
  d.kind = static_cast<MeshDatagramKind>(b[4]);
  d.seq = get32(b + 8);
  d.cookie = get64(b + 16);
  d.delay_ns = get64(b + 24);
  d.hw_delay_ns = get64(b + 32);
  return d;
}

MeshUdVerdict judge_prober_datagram(const MeshDatagram& d, std::uint32_t src_qp, const MeshUdExpect& expect) {
  if (!expect.known || src_qp != expect.qpn) return MeshUdVerdict::Stranger;
  if (d.kind == MeshDatagramKind::Reply)
    return expect.outstanding && d.seq == expect.seq ? MeshUdVerdict::Answer : MeshUdVerdict::Late;
  if (d.kind == MeshDatagramKind::Timing) return d.seq == expect.seq ? MeshUdVerdict::Timing : MeshUdVerdict::Late;
  return MeshUdVerdict::Stranger;  // a probe is not the prober's to judge
}

std::optional<std::uint64_t> mesh_network_rtt_ns(std::uint64_t prober_span_ns, std::uint64_t responder_span_ns) {
  if (prober_span_ns == 0 || responder_span_ns == 0 || responder_span_ns > prober_span_ns) return std::nullopt;
  return prober_span_ns - responder_span_ns;
}

std::optional<std::uint64_t> mesh_ticks_to_ns(std::uint64_t ticks, std::uint64_t core_clock_khz) {
  if (core_clock_khz == 0) return std::nullopt;
  // ticks * 1e6 / kHz without overflow for spans of up to hours at GHz clocks.
  const long double ns = static_cast<long double>(ticks) * 1e6L / static_cast<long double>(core_clock_khz);
  return static_cast<std::uint64_t>(ns + 0.5L);
}

void check_mesh_token(const std::string& token, const std::string& source) {
  if (token.size() < 16)
    throw Error(source + ": the mesh token has " + std::to_string(token.size()) +
                " characters, at least 16 are needed (e.g. openssl rand -hex 16)");
  if (token.size() > 256) throw Error(source + ": the mesh token is longer than 256 characters");
  for (std::size_t i = 0; i < token.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(token[i]);
    if (c <= ' ' || c >= 127)
      throw Error(source + ": the mesh token has a space, control or non-ASCII character at offset " + std::to_string(i));
  }
}

}  // namespace fabscope::mesh
