#include "exporter/http_request.hpp"

#include <gtest/gtest.h>

namespace fabscope::exporter {
namespace {

const HttpLimits kLimits{};

TEST(HttpRequest, SimpleGet_IsCompleteWithPathWithoutQuery) {
  std::string req = "GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n\r\n";
  auto r = parse_request(req, kLimits);
  ASSERT_EQ(r.status, ParseStatus::Complete);
  EXPECT_EQ(r.request.method, "GET");
  EXPECT_EQ(r.request.path, "/metrics");
  EXPECT_EQ(r.request.target, "/metrics?x=1");
  EXPECT_EQ(r.consumed, req.size());
  EXPECT_TRUE(r.request.keep_alive);
}

TEST(HttpRequest, HeadWithoutEmptyLine_IsIncomplete) {
  EXPECT_EQ(parse_request("GET /metrics HTTP/1.1\r\nHost: a\r\n", kLimits).status, ParseStatus::Incomplete);
}

TEST(HttpRequest, BareLineFeeds_AreAccepted) {
  EXPECT_EQ(parse_request("GET / HTTP/1.0\n\n", kLimits).status, ParseStatus::Complete);
}

TEST(HttpRequest, Pipelined_ConsumesOnlyTheFirstRequest) {
  std::string one = "GET /healthz HTTP/1.1\r\n\r\n";
  auto r = parse_request(one + "GET /metrics HTTP/1.1\r\n\r\n", kLimits);
  ASSERT_EQ(r.status, ParseStatus::Complete);
  EXPECT_EQ(r.consumed, one.size());
  EXPECT_EQ(r.request.path, "/healthz");
}

TEST(HttpRequest, Http10_ClosesUnlessKeepAliveAsked) {
  EXPECT_FALSE(parse_request("GET / HTTP/1.0\r\n\r\n", kLimits).request.keep_alive);
  EXPECT_TRUE(parse_request("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", kLimits).request.keep_alive);
}

TEST(HttpRequest, ConnectionClose_EndsKeepAlive) {
  EXPECT_FALSE(parse_request("GET / HTTP/1.1\r\nConnection: close\r\n\r\n", kLimits).request.keep_alive);
}

TEST(HttpRequest, OversizeHead_Is431EvenBeforeItEnds) {
  std::string big = "GET / HTTP/1.1\r\nX: " + std::string(kLimits.max_request_bytes, 'a');
  auto r = parse_request(big, kLimits);
  EXPECT_EQ(r.status, ParseStatus::Error);
  EXPECT_EQ(r.error_status, 431);
}

TEST(HttpRequest, TooManyHeaderFields_Is431) {
  std::string req = "GET / HTTP/1.1\r\n";
  for (std::size_t i = 0; i <= kLimits.max_headers; ++i) req += "X-" + std::to_string(i) + ": 1\r\n";
  auto r = parse_request(req + "\r\n", kLimits);
  EXPECT_EQ(r.status, ParseStatus::Error);
  EXPECT_EQ(r.error_status, 431);
}

TEST(HttpRequest, GarbageRequestLine_Is400) {
  EXPECT_EQ(parse_request("\x16\x03\x01 hello\r\n\r\n", kLimits).error_status, 400);
  EXPECT_EQ(parse_request("GET metrics HTTP/1.1\r\n\r\n", kLimits).error_status, 400);
  EXPECT_EQ(parse_request("GET /a b HTTP/1.1\r\n\r\n", kLimits).error_status, 400);
}

TEST(HttpRequest, Http2Preface_Is505) {
  EXPECT_EQ(parse_request("GET / HTTP/2.0\r\n\r\n", kLimits).error_status, 505);
}

TEST(HttpRequest, HeaderWithoutColon_Is400) {
  EXPECT_EQ(parse_request("GET / HTTP/1.1\r\nNoColonHere\r\n\r\n", kLimits).error_status, 400);
}

TEST(HttpRequest, FoldedHeaderLine_Is400) {
  EXPECT_EQ(parse_request("GET / HTTP/1.1\r\nA: b\r\n  folded: c\r\n\r\n", kLimits).error_status, 400);
}

TEST(HttpRequest, Body_IsFlaggedAndEndsKeepAlive) {
  auto r = parse_request("POST /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", kLimits);
  ASSERT_EQ(r.status, ParseStatus::Complete);
  EXPECT_TRUE(r.request.has_body);
  EXPECT_FALSE(r.request.keep_alive);
}

TEST(HttpRequest, BadContentLength_Is400) {
  EXPECT_EQ(parse_request("GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", kLimits).error_status, 400);
}

}  // namespace
}  // namespace fabscope::exporter

namespace fabscope::exporter {
namespace {

bool gzip_of(const std::string& value) {
  auto r = parse_request("GET /metrics HTTP/1.1\r\nAccept-Encoding: " + value + "\r\n\r\n", HttpLimits{});
  EXPECT_EQ(r.status, ParseStatus::Complete);
  return r.request.accepts_gzip;
}

TEST(HttpRequest, AcceptEncoding_GzipUnlessRefusedWithQZero) {
  EXPECT_TRUE(gzip_of("gzip"));                       // what Prometheus sends
  EXPECT_TRUE(gzip_of("deflate, GZIP;q=0.5"));
  EXPECT_TRUE(gzip_of("*"));
  EXPECT_TRUE(gzip_of("gzip;q=1.0"));
  EXPECT_FALSE(gzip_of("gzip;q=0"));
  EXPECT_FALSE(gzip_of("gzip; q=0.000"));
  EXPECT_FALSE(gzip_of("identity"));
  EXPECT_FALSE(gzip_of("br, deflate"));
  EXPECT_FALSE(gzip_of(""));
  EXPECT_FALSE(parse_request("GET / HTTP/1.1\r\n\r\n", HttpLimits{}).request.accepts_gzip);
}

// gzip named with q=0 is refused even when "*" accepts everything else (RFC 9110: "*" matches
// only codings not listed); a weight that is not a qvalue does not count as acceptance.
TEST(HttpRequest, AcceptEncoding_ExplicitRefusalWinsOverStar_AndBadWeightsAreIgnored) {
  EXPECT_FALSE(gzip_of("gzip;q=0, *"));
  EXPECT_FALSE(gzip_of("*, gzip;q=0"));
  EXPECT_FALSE(gzip_of("*;q=1, GZIP; Q=0.0"));
  EXPECT_FALSE(gzip_of("gzip;q=1, gzip;q=0"));
  EXPECT_TRUE(gzip_of("gzip;q=0.001, *;q=0"));
  EXPECT_FALSE(gzip_of("*;q=0"));
  EXPECT_FALSE(gzip_of("gzip;q=-1"));
  EXPECT_FALSE(gzip_of("gzip;q=2"));
  EXPECT_FALSE(gzip_of("gzip;q=1.5"));
  EXPECT_FALSE(gzip_of("gzip;q=0.5000"));
  EXPECT_FALSE(gzip_of("gzip;q="));
  EXPECT_FALSE(gzip_of("*;q=abc"));
  EXPECT_TRUE(gzip_of("gzip;q=-1, *"));  // the bad element ignored, "*" accepts
  EXPECT_TRUE(gzip_of("x-gzip"));
  // Two field lines are one list.
  auto r = parse_request("GET / HTTP/1.1\r\nAccept-Encoding: *\r\nAccept-Encoding: gzip;q=0\r\n\r\n", HttpLimits{});
  EXPECT_FALSE(r.request.accepts_gzip);
  EXPECT_EQ(parse_qvalue("0.5"), std::optional<int>(500));
  EXPECT_EQ(parse_qvalue("1.000"), std::optional<int>(1000));
  EXPECT_EQ(parse_qvalue("1.001"), std::nullopt);
  EXPECT_EQ(parse_qvalue("0."), std::optional<int>(0));
}

}  // namespace
}  // namespace fabscope::exporter
