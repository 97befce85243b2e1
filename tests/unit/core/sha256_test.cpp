#include "core/sha256.hpp"

#include <gtest/gtest.h>

namespace fabscope::core {

// FIPS 180-4 examples (NIST CSRC "SHA256.pdf"), and a message crossing the padding boundary.
TEST(Sha256, MatchesFipsExamples) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, MillionAsInPiecesEqualsOneUpdate) {
  Sha256 h;
  const std::string chunk(1000, 'a');
  for (int i = 0; i < 1000; ++i) h.update(chunk);
  auto d = h.digest();
  EXPECT_EQ(d[0], 0xcd);
  EXPECT_EQ(d[31], 0xd0);  // cdc76e5c...c7112cd0
}

}  // namespace fabscope::core
