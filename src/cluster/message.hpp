#pragma once
// The env-contract exchange's wire format (no MPI): every message is a 16-byte header and a
// JSON payload.
//   0  "FSCL"  magic
//   4  u8      protocol version (kProtocolVersion)
//   5  u8      type (MessageType)
//   6  u16     0
//   8  u32     sender rank, big-endian
//  12  u32     payload bytes, big-endian, at most kMaxPayloadBytes
// Parsers never trust the peer: the header is checked field by field, the payload length bounded
// before anything is allocated, the JSON parsed without exceptions and its fields type-checked.
#include <array>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.hpp"

namespace fabscope::cluster {

constexpr std::uint8_t kProtocolVersion = 1;
constexpr std::size_t kHeaderBytes = 16;
// A node summary is a few KiB; a schedule for 10,000 nodes' rounds is sent round by round. 4 MiB
// bounds what one peer can make rank 0 allocate.
constexpr std::uint32_t kMaxPayloadBytes = 4u << 20;
// Before its token is checked a peer gets no more than one header and a hello: five fields of
// at most 256 bytes each fit in 2 KiB.
constexpr std::uint32_t kMaxHelloBytes = 2048;

enum class MessageType : std::uint8_t { Hello = 1, Welcome = 2, Reject = 3, Data = 4 };

struct Header {
  MessageType type = MessageType::Data;
  std::uint32_t rank = 0;
  std::uint32_t payload_bytes = 0;
};

std::array<unsigned char, kHeaderBytes> encode_header(const Header& h);
// Throws fabscope::Error saying what is wrong (bad magic, other protocol version, unknown type,
// payload over the bound); `from` names the peer in the message.
Header parse_header(const unsigned char* bytes, std::size_t size, const std::string& from);

// Rank 0's first look at a new connection, before its token is checked (net::Gate's framer):
// 0 while fewer than kHeaderBytes arrived, else the size of the hello frame. Throws Error (the
// text without a peer name) when the header is malformed, not a hello or over kMaxHelloBytes.
std::size_t hello_frame_size(std::string_view bytes);

struct Hello {
  std::string token;              // the job's shared token
  std::string fabscope_version;
  int rank = 0;
  int world = 0;
  std::string name;               // the sender's hostname
};

std::string encode_hello(const Hello& h);
Hello parse_hello(const std::string& payload, const std::string& from);

// Constant-time comparison of the token (no early exit that times out the prefix).
bool token_equal(const std::string& a, const std::string& b);

// A payload that must be a JSON object (Data messages). Throws Error naming the peer.
json parse_payload(const std::string& payload, const std::string& from);

// The pair plan rank 0 broadcasts (cluster/pair_plan.cpp): the ranks that joined, what each offers
// (name, TCP pair address, RDMA address, RDMA note, and since --engine nccl: the NCCL device and
// note; a plan of 4 strings per offer has them empty), the pairs mode, the schedule's seed and
// the job's pair secret.
// Every field is type- and range-checked (a float where an integer belongs would be undefined
// behaviour in a plain conversion); throws Error naming the field.
struct PairPlan {
  std::vector<int> joined;
  std::vector<std::array<std::string, 6>> offers;
  std::string mode;
  std::uint64_t seed = 0;
  std::string pair_secret;  // 16 to 128 hex digits: every pair connection carries it
};
PairPlan parse_plan(const json& plan);

}  // namespace fabscope::cluster
