#include "capture/tar.hpp"

#include <gtest/gtest.h>

namespace fabscope::capture {

namespace {
unsigned checksum_of(const std::string& block) {
  unsigned sum = 0;
  for (std::size_t i = 0; i < 512; ++i) sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(block[i]);
  return sum;
}
}  // namespace

TEST(TarWriter, UstarHeaderWithValidChecksumAndPaddedData) {
  TarWriter t(1700000000);
  t.add_file("node/proc/cmdline", "ro quiet\n");
  const std::string a = t.finish();
  ASSERT_EQ(a.size(), 512u + 512u + 1024u);
  EXPECT_EQ(a.substr(0, 17), "node/proc/cmdline");
  EXPECT_EQ(a.substr(257, 5), "ustar");
  EXPECT_EQ(a[156], '0');
  EXPECT_EQ(std::stoul(a.substr(124, 11), nullptr, 8), 9u);
  EXPECT_EQ(std::stoul(a.substr(148, 6), nullptr, 8), checksum_of(a));
  EXPECT_EQ(a.substr(512, 9), "ro quiet\n");
}

TEST(TarWriter, LongNameAndLinkGoIntoAPaxRecord) {
  TarWriter t(0);
  const std::string name = "n/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/infiniband/mlx5_0/ports/1/hw";
  const std::string path = name + "_counters/out_of_buffer";
  const std::string target = "../../../../" + std::string(120, 'd');
  t.add_symlink(path, target);
  const std::string a = t.finish();
  EXPECT_EQ(a[156], 'x');
  const std::string pax = a.substr(512, 512);
  EXPECT_NE(pax.find(" path=" + path + "\n"), std::string::npos);
  EXPECT_NE(pax.find(" linkpath=" + target + "\n"), std::string::npos);
  // Each record starts with its own length.
  const std::size_t len = std::stoul(pax);
  EXPECT_EQ(pax[len - 1], '\n');
  EXPECT_EQ(a[1024 + 156], '2');
}

}  // namespace fabscope::capture
