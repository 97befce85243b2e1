// DCB netlink: the parser on recorded kernel replies (tests/fixtures/dcbnl/SOURCE) and on replies
// assembled in the kernel's layout where no device could give a real one.
#include <gtest/gtest.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>

#include "core/error.hpp"
#include "probe/dcbnl.hpp"
#include "probe/lossless.hpp"
#include "support/fixtures.hpp"

using namespace fabscope;
using namespace fabscope::probe;
using fabscope::testing::fixture;

namespace {
std::vector<std::uint8_t> reply(const std::string& name) {
  std::ifstream in(fixture("dcbnl") / name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
}  // namespace

TEST(Dcbnl, VirtioNetdevAnswersEopnotsupp) {
  auto r = parse_dcb_reply(reply("virtio-eth0-eopnotsupp.bin"));
  EXPECT_EQ(r.status, DcbReply::Status::Unsupported);
  EXPECT_EQ(r.error, EOPNOTSUPP);
  EXPECT_NE(describe_failure(r).find("no DCB support"), std::string::npos);
}

TEST(Dcbnl, MissingInterfaceAnswersEnodev) {
  auto r = parse_dcb_reply(reply("missing-ifname-enodev.bin"));
  EXPECT_EQ(r.status, DcbReply::Status::NoDevice);
  EXPECT_EQ(r.error, ENODEV);
}

TEST(Dcbnl, RequestEqualsTheOneTheKernelEchoedBack) {
  // Without NETLINK_CAP_ACK the kernel's error reply carries the request it refused, after the
  // 16-byte header and the 4-byte error code.
  auto rec = reply("virtio-eth0-eopnotsupp.bin");
  auto req = build_ieee_get_request("eth0", 1);
  ASSERT_GE(rec.size(), 20 + req.size());
  EXPECT_EQ(std::vector<std::uint8_t>(rec.begin() + 20, rec.begin() + 20 + static_cast<long>(req.size())), req);
}

TEST(Dcbnl, RequestRefusesBadInterfaceNames) {
  EXPECT_THROW(build_ieee_get_request("", 1), Error);
  EXPECT_THROW(build_ieee_get_request("a-name-longer-than-15", 1), Error);
}

TEST(Dcbnl, IeeeReplyGivesPfcBitmapAndAppTable) {
  auto r = parse_dcb_reply(reply("assembled-pfc3-dscp-trust.bin"));
  ASSERT_EQ(r.status, DcbReply::Status::Ok) << r.detail;
  EXPECT_EQ(r.ifname, "enp23s0f0np0");
  ASSERT_TRUE(r.pfc_en);
  EXPECT_EQ(*r.pfc_en, 0x08);
  EXPECT_EQ(r.pfc_cap, 8);
  EXPECT_EQ(r.dcbx, 0x09);
  ASSERT_EQ(r.apps.size(), 2u);
  EXPECT_EQ(r.apps[0].selector, 5);
  EXPECT_EQ(r.apps[0].protocol, 26);
  EXPECT_EQ(r.apps[0].priority, 3);
  EXPECT_EQ(r.apps[1].protocol, 48);
  EXPECT_EQ(r.apps[1].priority, 6);
}

TEST(Dcbnl, AppliedReplySaysPriorityAndDscpTrust) {
  LosslessState s;
  apply_dcb_reply(parse_dcb_reply(reply("assembled-pfc3-dscp-trust.bin")), s);
  ASSERT_TRUE(s.pfc_priorities);
  EXPECT_EQ(*s.pfc_priorities, std::vector<int>{3});
  EXPECT_EQ(s.trust, "dscp");
  EXPECT_TRUE(s.dcb_note.empty());
  LosslessState none;
  apply_dcb_reply(parse_dcb_reply(reply("assembled-no-pfc.bin")), none);
  ASSERT_TRUE(none.pfc_priorities);
  EXPECT_TRUE(none.pfc_priorities->empty());
  EXPECT_EQ(none.trust, "pcp");
  LosslessState unknown;
  apply_dcb_reply(parse_dcb_reply(reply("virtio-eth0-eopnotsupp.bin")), unknown);
  EXPECT_FALSE(unknown.pfc_priorities);
  EXPECT_NE(unknown.dcb_note.find("EOPNOTSUPP"), std::string::npos);
}

// Found by the long run of fabscope_fabric_fuzz: an error code of INT_MIN was negated (UB).
TEST(Dcbnl, ErrorCodeOutsideTheErrnoRangeIsMalformed) {
  auto bytes = reply("virtio-eth0-eopnotsupp.bin");
  ASSERT_GE(bytes.size(), 20u);
  for (std::int32_t code : {INT32_MIN, -4096, 4096, INT32_MAX}) {
    std::memcpy(bytes.data() + 16, &code, sizeof code);  // the error field after the header
    auto r = parse_dcb_reply(bytes);
    EXPECT_EQ(r.status, DcbReply::Status::Malformed) << code;
    EXPECT_NE(r.detail.find("is no errno"), std::string::npos) << r.detail;
  }
  const std::int32_t einval = -EINVAL;
  std::memcpy(bytes.data() + 16, &einval, sizeof einval);
  EXPECT_EQ(parse_dcb_reply(bytes).error, EINVAL);
}

TEST(Dcbnl, EveryTruncationIsMalformedNotACrash) {
  auto full = reply("assembled-pfc3-dscp-trust.bin");
  for (std::size_t n = 0; n < full.size(); ++n) {
    auto r = parse_dcb_reply(std::span<const std::uint8_t>(full.data(), n));
    EXPECT_EQ(r.status, DcbReply::Status::Malformed) << "prefix of " << n << " bytes";
  }
}

TEST(Dcbnl, LengthFieldLargerThanTheBufferIsMalformed) {
  auto full = reply("assembled-pfc3-dscp-trust.bin");
  full[0] = 0xff;
  full[1] = 0xff;
  auto r = parse_dcb_reply(full);
  EXPECT_EQ(r.status, DcbReply::Status::Malformed);
  EXPECT_NE(r.detail.find("does not fit"), std::string::npos) << r.detail;
}
