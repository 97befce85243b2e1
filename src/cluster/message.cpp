#include "cluster/message.hpp"

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "core/socket.hpp"

namespace fabscope::cluster {

std::array<unsigned char, kHeaderBytes> encode_header(const Header& h) {
  std::array<unsigned char, kHeaderBytes> b{};
  std::memcpy(b.data(), "FSCL", 4);
  b[4] = kProtocolVersion;
  b[5] = static_cast<unsigned char>(h.type);
  for (int i = 0; i < 4; ++i) {
    b[8 + i] = static_cast<unsigned char>(h.rank >> (24 - 8 * i));
    b[12 + i] = static_cast<unsigned char>(h.payload_bytes >> (24 - 8 * i));
  }
  return b;
}

Header parse_header(const unsigned char* bytes, std::size_t size, const std::string& from) {
  if (size < kHeaderBytes)
    throw Error(from + ": message header of " + std::to_string(size) + " bytes, expected " +
                std::to_string(kHeaderBytes));
  if (std::memcmp(bytes, "FSCL", 4) != 0)
    throw Error(from + ": not a fabscope cluster message (bad magic): another program on this port?");
  if (bytes[4] != kProtocolVersion)
    throw Error(from + ": cluster protocol version " + std::to_string(bytes[4]) + ", this fabscope speaks " +
                std::to_string(kProtocolVersion) + " (install the same fabscope version on every node)");
  if (bytes[5] < 1 || bytes[5] > 4) throw Error(from + ": unknown message type " + std::to_string(bytes[5]));
  if (bytes[6] != 0 || bytes[7] != 0) throw Error(from + ": reserved header bytes are not zero");
  Header h;
  h.type = static_cast<MessageType>(bytes[5]);
  for (int i = 0; i < 4; ++i) {
    h.rank = (h.rank << 8) | bytes[8 + i];
    h.payload_bytes = (h.payload_bytes << 8) | bytes[12 + i];
  }
  if (h.payload_bytes > kMaxPayloadBytes)
    throw Error(from + ": message of " + std::to_string(h.payload_bytes) + " bytes, more than the " +
                std::to_string(kMaxPayloadBytes) + " allowed");
  return h;
}

std::size_t hello_frame_size(std::string_view b) {
  if (b.size() < kHeaderBytes) return 0;
  Header h;
  try {
    h = parse_header(reinterpret_cast<const unsigned char*>(b.data()), kHeaderBytes, "");
  } catch (const Error& e) {
    throw Error(std::string(e.what()).substr(2));  // without the empty peer name
  }
  if (h.type != MessageType::Hello) throw Error("first message is not a hello (not a fabscope cluster rank?)");
  if (h.payload_bytes > kMaxHelloBytes)
    throw Error("a hello of " + std::to_string(h.payload_bytes) + " bytes, more than the " +
                std::to_string(kMaxHelloBytes) + " allowed");
  return kHeaderBytes + h.payload_bytes;
}

std::string encode_hello(const Hello& h) {
  return json{{"token", h.token}, {"fabscope_version", h.fabscope_version}, {"rank", h.rank},
              {"world", h.world}, {"name", h.name}}
      .dump();
}

json parse_payload(const std::string& payload, const std::string& from) {
  json j = json::parse(payload, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw Error(from + ": payload is not a JSON object");
  return j;
}

Hello parse_hello(const std::string& payload, const std::string& from) {
  json j = parse_payload(payload, from);
  auto str = [&](const char* k) {
    auto it = j.find(k);
    if (it == j.end() || !it->is_string()) throw Error(from + ": hello without a string '" + k + "'");
    std::string v = it->get<std::string>();
    if (v.size() > 256) throw Error(from + ": hello field '" + k + "' longer than 256 bytes");
    return v;
  };
  auto num = [&](const char* k) {
    auto it = j.find(k);
    if (it == j.end() || !it->is_number_integer()) throw Error(from + ": hello without an integer '" + k + "'");
    auto v = it->get<long long>();
    if (v < 0 || v > 1'000'000) throw Error(from + ": hello field '" + k + "' out of range: " + std::to_string(v));
    return static_cast<int>(v);
  };
  Hello h;
  h.token = str("token");
  h.fabscope_version = str("fabscope_version");
  h.rank = num("rank");
  h.world = num("world");
  h.name = str("name");
  return h;
}

bool token_equal(const std::string& a, const std::string& b) { return net::secret_equal(a, b); }

PairPlan parse_plan(const json& plan) {
  if (!plan.is_object()) throw Error("the plan is not a JSON object");
  auto field = [&](const char* k) -> const json& {
    auto it = plan.find(k);
    if (it == plan.end()) throw Error(std::string("the plan has no '") + k + "'");
    return *it;
  };
  PairPlan p;
  const json& joined = field("joined");
  if (!joined.is_array() || joined.size() > 1'000'000) throw Error("the plan's 'joined' is not an array of ranks");
  for (const auto& r : joined) {
    if (!r.is_number_integer() || r.get<long long>() < 0 || r.get<long long>() > 1'000'000)
      throw Error("the plan's 'joined' holds " + r.dump() + ", not a rank");
    p.joined.push_back(static_cast<int>(r.get<long long>()));
  }
  const json& offers = field("offers");
  if (!offers.is_array()) throw Error("the plan's 'offers' is not an array");
  for (const auto& o : offers) {
    if (!o.is_array() || (o.size() != 4 && o.size() != 6)) throw Error("an offer of the plan is not 4 or 6 strings");
    std::array<std::string, 6> v;
    for (std::size_t i = 0; i < o.size(); ++i) {
      if (!o[i].is_string()) throw Error("an offer of the plan holds " + o[i].dump() + ", not a string");
      v[i] = o[i].get<std::string>();
    }
    p.offers.push_back(std::move(v));
  }
  if (p.offers.size() != p.joined.size()) throw Error("the plan's offers and ranks differ in number");
  const json& mode = field("mode");
  if (!mode.is_string()) throw Error("the plan's 'mode' is not a string");
  p.mode = mode.get<std::string>();
  const json& seed = field("seed");
  if (!seed.is_number_unsigned() && !(seed.is_number_integer() && seed.get<long long>() >= 0))
    throw Error("the plan's 'seed' is " + seed.dump() + ", not an unsigned integer");
  p.seed = seed.get<std::uint64_t>();
  const json& secret = field("pair_secret");
  if (!secret.is_string() || secret.get<std::string>().size() < 16 || secret.get<std::string>().size() > 128 ||
      secret.get<std::string>().find_first_not_of("0123456789abcdef") != std::string::npos)
    throw Error("the plan's 'pair_secret' is not 16 to 128 hex digits");
  p.pair_secret = secret.get<std::string>();
  return p;
}

}  // namespace fabscope::cluster
