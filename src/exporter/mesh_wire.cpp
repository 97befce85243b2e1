#include "exporter/mesh_wire.hpp"

#include <cstring>

#include "core/error.hpp"

namespace fabscope::exporter {

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

}  // namespace fabscope::exporter
