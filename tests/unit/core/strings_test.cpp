#include <gtest/gtest.h>

#include "core/finding.hpp"
#include "core/json.hpp"
#include "core/strings.hpp"

using namespace fabscope;

TEST(Strings, ParseIntTakesSignDecimalAndHexOnly) {
  EXPECT_EQ(core::parse_int(" 42 ").value(), 42);
  EXPECT_EQ(core::parse_int("-0x10").value(), -16);
  EXPECT_EQ(core::parse_int("0X1f").value(), 31);
  EXPECT_EQ(core::parse_int("9223372036854775807").value(), INT64_MAX);
  EXPECT_FALSE(core::parse_int("9223372036854775808"));
  EXPECT_FALSE(core::parse_int("--1"));
  EXPECT_FALSE(core::parse_int("-"));
  EXPECT_FALSE(core::parse_int("0x"));
  EXPECT_FALSE(core::parse_int("12 34"));
  EXPECT_FALSE(core::parse_int(""));
}

TEST(Strings, ParseU64RejectsSignsAndTakesTheFullRange) {
  EXPECT_EQ(core::parse_u64("18446744073709551615").value(), UINT64_MAX);
  EXPECT_EQ(core::parse_u64("0xff\n").value(), 255u);
  EXPECT_FALSE(core::parse_u64("18446744073709551616"));
  EXPECT_FALSE(core::parse_u64("-1"));
  EXPECT_FALSE(core::parse_u64("+1"));
  EXPECT_FALSE(core::parse_u64("N/A (no PMA)"));
}

TEST(Strings, JoinSeparatesEveryItemAndCountsWhatItLeavesOut) {
  EXPECT_EQ(core::join({}, ", "), "");
  EXPECT_EQ(core::join({"a"}, ", "), "a");
  EXPECT_EQ(core::join({"a", "b", "c"}, ", "), "a, b, c");
  EXPECT_EQ(core::join({"a", "b", "c"}, ",", 2), "a,b,... (1 more)");
  EXPECT_EQ(core::join({"a", "b"}, ",", 2), "a,b");
}

TEST(Strings, CaseMappingIsAsciiOnly) {
  EXPECT_EQ(core::lower("Ring_LL128"), "ring_ll128");
  EXPECT_EQ(core::upper("nccl_ib_hca"), "NCCL_IB_HCA");
  EXPECT_EQ(core::upper("\xc3\xa9t\xc3\xa9"), "\xc3\xa9T\xc3\xa9");  // UTF-8 bytes untouched
}

TEST(Strings, FormatDoubleTakesAnyOneConversionFormatAndNeverCuts) {
  EXPECT_EQ(core::format_double("%.2f", 1.0), "1.00");
  EXPECT_EQ(core::format_double("%+.1f%%", 12.34), "+12.3%");
  EXPECT_EQ(core::format_double("%.3g/s", 0.000123456), "0.000123/s");
  EXPECT_EQ(core::format_double("%.0f GB/s", 451.6), "452 GB/s");
  const std::string big = core::format_double("%.0f", 1e300);
  EXPECT_EQ(big.size(), 301u);
  EXPECT_EQ(big.substr(0, 4), "1000");
}

TEST(Finding, MakeFindingAnchorsOnTheGivenPage) {
  Finding f = make_finding("env.bad_value", Severity::Warn, "NCCL_X", "msg", "ev", "fix", "docs/ncclenv.md");
  EXPECT_EQ(f.id, "env.bad_value");
  EXPECT_EQ(f.severity, Severity::Warn);
  EXPECT_EQ(f.subject, "NCCL_X");
  EXPECT_EQ(f.message, "msg");
  EXPECT_EQ(f.evidence, "ev");
  EXPECT_EQ(f.remedy, "fix");
  EXPECT_EQ(f.docs, "docs/ncclenv.md#env-bad_value");
  EXPECT_EQ(make_finding("link.port_down", Severity::Fail, "", "", "", "").docs, "docs/checks.md#link-port_down");
}

TEST(Json, DumpJsonReplacesBytesThatAreNotUtf8) {
  json j{{"v", std::string("a\xff" "b")}};
  EXPECT_EQ(dump_json(j, -1), "{\"v\":\"a\xef\xbf\xbd" "b\"}");
  EXPECT_EQ(dump_json(json{{"k", 1}}), "{\n  \"k\": 1\n}");
}

// Outside text on a terminal: an escape sequence (ESC [ 2 J clears the screen, OSC sets the title,
// BEL rings), a C1 CSI (U+009B) or broken UTF-8 never gets through; ordinary UTF-8 does.
TEST(Strings, PrintableKeepsTextAndReplacesEveryControlByte) {
  EXPECT_EQ(core::printable("node-01 400 Gb/s"), "node-01 400 Gb/s");
  EXPECT_EQ(core::printable("\x1b[2Jevil\x07"), "?[2Jevil?");
  EXPECT_EQ(core::printable("\x1b]0;title\x1b\\"), "?]0;title?\\");
  EXPECT_EQ(core::printable("a\tb\nc\rd\x7f" "e"), "a?b?c?d?e");
  EXPECT_EQ(core::printable(std::string("nul\0x", 5)), "nul?x");
  EXPECT_EQ(core::printable("\xc2\x9b" "31m"), "?31m");        // U+009B, the 8-bit CSI
  EXPECT_EQ(core::printable("\x9b" "31m"), "?31m");            // a lone byte: not UTF-8
  EXPECT_EQ(core::printable("\xc0\xaf"), "??");                // overlong '/'
  EXPECT_EQ(core::printable("\xed\xa0\x80"), "???");           // a surrogate
  EXPECT_EQ(core::printable("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80");
  EXPECT_EQ(core::printable("cut \xe2\x86"), "cut ??");
}

TEST(Strings, PrintableLinesKeepsTheNewlinesOnly) {
  EXPECT_EQ(core::printable_lines("one\x1b[31m\ntwo\r\n\nthree"), "one?[31m\ntwo?\n\nthree");
  EXPECT_EQ(core::printable_lines(""), "");
  EXPECT_EQ(core::printable_lines("end\n"), "end\n");
}

TEST(Strings, ContainsFindsBytesAnywhereAndTheEmptyNeedleEverywhere) {
  EXPECT_TRUE(core::contains("NET/IB : GPU Direct RDMA Disabled", "Direct RDMA"));
  EXPECT_TRUE(core::contains("abc", ""));
  EXPECT_TRUE(core::contains("", ""));
  EXPECT_FALSE(core::contains("", "a"));
  EXPECT_FALSE(core::contains("ab", "abc"));
  EXPECT_TRUE(core::contains(std::string_view("a\0b", 3), std::string_view("\0b", 2)));
  EXPECT_FALSE(core::contains("Direct", "direct"));
}

TEST(Strings, FindAgreesWithStringViewFindForNeedlesLedBySpaces) {
  // core::find anchors on the needle's first byte that is not a space; the answers are
  // string_view::find's, at every start.
  const std::string_view hay = "comm 0x1 rank 0 nRanks 2  nNodes 1 rank  3 ranks";
  for (std::string_view needle : {" rank ", "  rank", " nNodes ", "rank", " ", "  ", "", " ranks", " x "})
    for (std::size_t from = 0; from <= hay.size() + 1; ++from)
      EXPECT_EQ(core::find(hay, needle, from), hay.find(needle, from)) << "'" << needle << "' from " << from;
  EXPECT_EQ(core::find("ab", " ab"), std::string_view::npos);
  EXPECT_EQ(core::find(" a", " a"), 0u);
}
