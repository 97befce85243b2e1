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

TEST(Redactor, HostNameReplacedInJoinedTokensNotInOtherNames) {
  Redactor r("k");
  r.add_host_name("debian.example.org");
  const std::string in = "debian\nlists.debian.org debian-kernel debian.example.org\n";
  const std::string out = r.text(in);
  EXPECT_EQ(out.find("debian\n"), std::string::npos);
  EXPECT_NE(out.find("lists.debian.org "), std::string::npos);  // a later label of another name
  EXPECT_EQ(out.find("debian-kernel"), std::string::npos);       // joined to another word: still the name
  EXPECT_EQ(out.find("example.org"), std::string::npos);
  EXPECT_EQ(out.size(), in.size());
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

namespace {
// Whether text holds the MAC in any spelling (any case, any separator or none).
bool holds_mac(std::string text, std::string mac) {
  auto squash = [](std::string t) {
    std::string o;
    for (char c : t)
      if (std::isalnum(static_cast<unsigned char>(c))) o += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return o;
  };
  return squash(text).find(squash(mac)) != std::string::npos;
}
std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
}  // namespace

// proc/cmdline spells the netdev's MAC as PXE's BOOTIF (hardware type 01, then '-') and dracut's
// ifname=NAME:MAC, and dracut's ip= holds the gateway and the host name between ':'.
TEST(Redactor, KernelCommandLineFormsAreReplaced) {
  const std::string cmdline =
      "BOOT_IMAGE=/vmlinuz-6.8 root=UUID=0c6b3a64-8b0e-4d1b-9a8e-2f4c6d8e0a1b BOOTIF=01-b8-ce-f6-a1-b2-c4 "
      "ifname=bond0:b8:ce:f6:a1:b2:c5 ip=10.1.2.3::10.1.2.254:255.255.255.0:gpu7:eth0:none quiet\n";
  Redactor r("k");
  r.add_host_name("gpu7");
  r.learn_cmdline(cmdline);
  const std::string out = r.text(cmdline);
  EXPECT_FALSE(holds_mac(out, "b8:ce:f6:a1:b2:c4")) << out;
  EXPECT_FALSE(holds_mac(out, "b8:ce:f6:a1:b2:c5")) << out;
  for (const char* v : {"10.1.2.3:", "10.1.2.254", "gpu7", "0c6b3a64"}) EXPECT_EQ(out.find(v), std::string::npos) << v << ": " << out;
  EXPECT_NE(out.find("BOOTIF=01-b8-ce-f6-"), std::string::npos) << out;  // vendor kept, form kept
  EXPECT_NE(out.find("ifname=bond0:b8:ce:f6:"), std::string::npos) << out;
  EXPECT_NE(out.find(":255.255.255.0:"), std::string::npos) << out;
  EXPECT_NE(out.find(":eth0:none quiet"), std::string::npos) << out;
  // A host name only the command line gives (dracut's ip=) is learnt from it.
  Redactor other("k");
  other.learn_cmdline("ip=10.0.0.2::10.0.0.1:255.255.0.0:login3:ib0:off");
  EXPECT_EQ(other.text("login3 login3.cluster").find("login3"), std::string::npos);
}

// A value read in one file is replaced in every form in which another file spells it.
TEST(Redactor, EveryFormOfAKnownValueIsReplaced) {
  Redactor r("k");
  r.add_host_name("gpu7");
  (void)r.text("b8:ce:f6:a1:b2:c4\n10.1.2.3\n");  // sys/class/net/eth0/address; an address
  const std::string tool =
      "B8-CE-F6-A1-B2-C4 b8ce.f6a1.b2c4 mac=b8cef6a1b2c4 peer ip:10.1.2.3 gw 0302010A\n"
      "to-gpu7 gpu7_eth0 GPU7 Gpu7.cluster\n";
  const std::string out = r.text(tool);
  EXPECT_FALSE(holds_mac(out, "b8cef6a1b2c4")) << out;
  EXPECT_EQ(out.find("10.1.2.3"), std::string::npos) << out;
  EXPECT_EQ(out.find("0302010A"), std::string::npos) << out;  // /proc/net/route's little-endian hex
  EXPECT_EQ(lower(out).find("gpu7"), std::string::npos) << out;
  // The stand-in is the same whatever the spelling; case follows the text.
  const std::string colon = r.text("b8:ce:f6:a1:b2:c4");
  EXPECT_EQ(out.substr(0, 17), [&] {
    std::string u = colon;
    for (auto& c : u) c = c == ':' ? '-' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return u;
  }());
  EXPECT_NE(out.find("to-"), std::string::npos);
  EXPECT_NE(out.find("_eth0 "), std::string::npos);
}

// A host called "vm" (or "net", "kernel") is not a sysctl key: vm.swappiness stays.
TEST(Redactor, ShortHostNameLeavesSysctlKeys) {
  Redactor r("k");
  r.add_host_name("vm");
  const std::string out = r.text("{\"vm.swappiness\": \"60\", \"hostname\": \"vm\", \"x\": \"vm.\"}\n");
  EXPECT_NE(out.find("\"vm.swappiness\""), std::string::npos) << out;
  EXPECT_EQ(out.find("\"vm\""), std::string::npos) << out;
  EXPECT_EQ(out.find("\"vm.\""), std::string::npos) << out;
}

TEST(Redactor, SerialNumbersInFreeTextAreReplaced) {
  Redactor r("k");
  const std::string in = "Serial Number: MT2048X12345\nserial_number=ab1234cd\n\"serial\": \"SN0042\"\nserial port\n";
  const std::string out = r.text(in);
  for (const char* v : {"MT2048X12345", "ab1234cd", "SN0042"}) EXPECT_EQ(out.find(v), std::string::npos) << v << ": " << out;
  EXPECT_EQ(out.size(), in.size());
  EXPECT_NE(out.find("Serial Number: "), std::string::npos);
  EXPECT_NE(out.find("serial port"), std::string::npos);
  EXPECT_EQ(r.text(in), out);  // the same stand-in each time
  const std::string file = r.serial_file("PF3ABC12\n");
  EXPECT_NE(file, "PF3ABC12\n");
  EXPECT_EQ(file.size(), 9u);
  EXPECT_EQ(r.serial_file("To Be Filled By O.E.M.\n"), "To Be Filled By O.E.M.\n");
}

// The stand-in of one address is often another host's address of the same subnet: a stand-in is
// never taken for a value and replaced again (every address keeps its own stand-in).
TEST(Redactor, AStandInIsNeverReplacedAgain) {
  Redactor r("k");
  std::string text;  // 192.168/16 keeps 16 bits: stand-ins of one /24 fall into another /24 of the list
  for (int k = 0; k < 64; ++k)
    for (int h = 1; h < 255; ++h)
      text += "192.168." + std::to_string(k) + "." + std::to_string(h) + " ip:172.16." + std::to_string(k) + "." +
              std::to_string(h) + "\n";
  (void)r.text(text);  // learn
  const std::string out = r.text(text);
  auto dotted = [](std::uint32_t b) {
    return std::to_string(b >> 24) + "." + std::to_string(b >> 16 & 255) + "." + std::to_string(b >> 8 & 255) + "." +
           std::to_string(b & 255);
  };
  std::string want;
  for (int k = 0; k < 64; ++k)
    for (int h = 1; h < 255; ++h)
      want += dotted(r.ipv4(v4(("192.168." + std::to_string(k) + "." + std::to_string(h)).c_str()))) + " ip:" +
              dotted(r.ipv4(v4(("172.16." + std::to_string(k) + "." + std::to_string(h)).c_str()))) + "\n";
  EXPECT_EQ(out, want);
}

}  // namespace fabscope::capture
