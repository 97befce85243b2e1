#pragma once
// SHA-256 (FIPS 180-4): the digest of each file in a capture's manifest, and the keyed mapping
// of `capture --redact` (a digest of a secret key and the value, so one value always gets one
// replacement within a capture and the key, never written, is needed to tie them back).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace fabscope::core {

class Sha256 {
 public:
  Sha256();
  Sha256& update(std::string_view data);
  std::array<std::uint8_t, 32> digest();  // finishes; the object is spent afterwards

 private:
  void block(const std::uint8_t* p);
  std::array<std::uint32_t, 8> h_;
  std::array<std::uint8_t, 64> buf_{};
  std::size_t used_ = 0;
  std::uint64_t total_bytes_ = 0;
};

// Lowercase hex of the digest of data.
std::string sha256_hex(std::string_view data);

}  // namespace fabscope::core
