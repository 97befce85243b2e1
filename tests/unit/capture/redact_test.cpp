#include "capture/redact.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>

namespace fabscope::capture {

namespace {
std::uint32_t v4(const char* s) {
  in_addr a{};
  inet_pton(AF_INET, s, &a);
  return ntohl(a.s_addr);
}
}  // namespace

TEST(Redactor, MacKeepsVendorAndChangesTheRest) {
  Redactor r("k");
  const std::string out = r.text("b8:ce:f6:a1:b2:c4\n");
  EXPECT_EQ(out.substr(0, 9), "b8:ce:f6:");
  EXPECT_NE(out, "b8:ce:f6:a1:b2:c4\n");
  EXPECT_EQ(out.size(), 18u);
  EXPECT_EQ(r.text("B8:CE:F6:A1:B2:C4").substr(0, 9), "B8:CE:F6:");  // case kept
}

TEST(Redactor, SameValueSameStandInEverywhere) {
  Redactor r("k");
  EXPECT_EQ(r.text("a 52:54:00:12:34:56 b"), r.text("a 52:54:00:12:34:56 b"));
  Redactor other("other key");
  EXPECT_NE(r.text("52:54:00:12:34:56"), other.text("52:54:00:12:34:56"));
}

TEST(Redactor, RoceGuidFollowsTheMacStandIn) {
  Redactor r("k");
  const std::string mac = r.text("52:54:00:12:34:56");
  // EUI-64 of 52:54:00:12:34:56 is 5054:00ff:fe12:3456; its stand-in is the EUI-64 of the MAC's.
  const std::string guid = r.text("5054:00ff:fe12:3456");
  auto hex = [](const std::string& s, std::size_t i) { return s.substr(i, 2); };
  EXPECT_EQ(guid.substr(0, 4), "5054");
  EXPECT_EQ(guid.substr(4, 8), ":00ff:fe");
  EXPECT_EQ(guid.substr(12, 2), hex(mac, 9));
  EXPECT_EQ(guid.substr(15, 2), hex(mac, 12));
  EXPECT_EQ(guid.substr(17, 2), hex(mac, 15));
}

TEST(Redactor, LinkLocalGidFollowsThePortGuid) {
  Redactor r("k");
  const std::string guid = r.text("b8ce:f603:00a1:b2c4");
  const std::string gid = r.text("fe80:0000:0000:0000:b8ce:f603:00a1:b2c4");
  EXPECT_EQ(gid, "fe80:0000:0000:0000:" + guid);
  EXPECT_EQ(guid.substr(0, 7), "b8ce:f6");
}

TEST(Redactor, Ipv4MappedGidFollowsTheAddress) {
  Redactor r("k");
  const std::uint32_t a = r.ipv4(v4("10.1.2.3"));
  char want[64];
  std::snprintf(want, sizeof want, "0000:0000:0000:0000:0000:ffff:%04x:%04x", a >> 16, a & 0xffff);
  EXPECT_EQ(r.text("0000:0000:0000:0000:0000:ffff:0a01:0203"), want);
}

TEST(Redactor, Ipv4KeepsSubnetsAndNetworks) {
  Redactor r("k");
  const std::uint32_t a = r.ipv4(v4("10.20.30.40")), b = r.ipv4(v4("10.20.30.41")), c = r.ipv4(v4("10.20.99.1"));
  EXPECT_EQ(a >> 24, 10u);
  EXPECT_NE(a, v4("10.20.30.40"));
  EXPECT_EQ(a >> 8, b >> 8);    // same /24 stays the same /24
  EXPECT_EQ(a >> 16, c >> 16);  // same /16 ...
  EXPECT_NE(a >> 8, c >> 8);    // ... different /24 stays different
  EXPECT_EQ(r.ipv4(v4("10.20.30.0")) >> 8, a >> 8);
  EXPECT_EQ(r.ipv4(v4("10.20.30.0")) & 0xff, 0u);  // a network stays a network
  EXPECT_EQ(r.ipv4(v4("192.168.7.9")) >> 16, 0xc0a8u);
  EXPECT_EQ(r.text("255.255.255.0 127.0.0.1"), "255.255.255.0 127.0.0.1");
}

TEST(Redactor, VersionsAndNumbersAreNotAddresses) {
  Redactor r("k");
  for (const char* s : {"5.8-1.0.1.1", "fw 28.39.1002", "20.31.1014", "580.159.04", "v1.2.3.4", "12:34:56"})
    EXPECT_EQ(r.text(s), s);
}

TEST(Redactor, HostNameReplacedAsAWholeTokenOnly) {
  Redactor r("k");
  r.add_host_name("debian.example.org");
  const std::string out = r.text("debian\nlists.debian.org debian-kernel debian.example.org\n");
  EXPECT_EQ(out.find("debian\n"), std::string::npos);
  EXPECT_NE(out.find("lists.debian.org debian-kernel "), std::string::npos);
  EXPECT_EQ(out.find("example.org"), std::string::npos);
  EXPECT_EQ(out.size(), std::string("debian\nlists.debian.org debian-kernel debian.example.org\n").size());
}

TEST(Redactor, GpuUuidReplacedKeepingItsForm) {
  Redactor r("k");
  const std::string in = "GPU UUID: GPU-1b4a9a4e-8f33-2b2c-9d3e-5f0c1f2a3b4c\n";
  const std::string out = r.text(in);
  EXPECT_NE(out, in);
  EXPECT_EQ(out.size(), in.size());
  EXPECT_EQ(out.substr(0, 14), "GPU UUID: GPU-");
  EXPECT_EQ(out[22], '-');
}

TEST(Redactor, BinaryDataLeftAlone) {
  Redactor r("k");
  const std::string bin("\x00\x01" "52:54:00:12:34:56", 19);
  EXPECT_EQ(r.text(bin), bin);
}

TEST(Redactor, PciDeviceSerialNumberReplaced) {
  Redactor r("k");
  std::string cfg(4096, '\0');
  // Extended capability 0x0003 (DSN) at 0x100, version 1, no next; serial 0x0123456789abcdef.
  cfg[0x100] = 0x03, cfg[0x102] = 0x01;
  const unsigned char serial[8] = {0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01};
  for (int i = 0; i < 8; ++i) cfg[0x104 + i] = static_cast<char>(serial[i]);
  const std::string out = r.pci_config(cfg);
  EXPECT_NE(out.substr(0x104, 8), cfg.substr(0x104, 8));
  EXPECT_EQ(out.substr(0x109, 3), cfg.substr(0x109, 3));  // vendor part of the EUI-64 kept
  EXPECT_EQ(out.substr(0, 0x104), cfg.substr(0, 0x104));
  EXPECT_EQ(r.counts()["serial"], 1u);
}

}  // namespace fabscope::capture
