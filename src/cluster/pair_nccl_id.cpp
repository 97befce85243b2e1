// The pieces of the nccl pair engine that need neither CUDA nor NCCL: the unique id's text form
// for the exchange, and how many transfers fill a direction.
#include <cmath>

#include "cluster/pair_engine.hpp"

namespace fabscope::cluster {

std::string nccl_id_hex(const std::array<unsigned char, kNcclIdBytes>& id) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * kNcclIdBytes);
  for (unsigned char b : id) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0xf]);
  }
  return out;
}

bool nccl_id_from_hex(const std::string& text, std::array<unsigned char, kNcclIdBytes>& id) {
  if (text.size() != 2 * kNcclIdBytes) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < kNcclIdBytes; ++i) {
    const int hi = nibble(text[2 * i]), lo = nibble(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    id[i] = static_cast<unsigned char>(hi << 4 | lo);
  }
  return true;
}

long nccl_transfer_count(double duration_s, double one_transfer_s) {
  constexpr long kMin = 2, kMax = 100'000;
  if (!(one_transfer_s > 0) || !std::isfinite(one_transfer_s) || !(duration_s > 0)) return kMin;
  const double n = std::ceil(duration_s / one_transfer_s);
  if (n >= static_cast<double>(kMax)) return kMax;
  return std::max(kMin, static_cast<long>(n));
}

}  // namespace fabscope::cluster
