// ibqueryerrors' threshold file: what it accepts, and file:line for what it does not.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "fabric/thresholds.hpp"

using namespace fabscope;
using namespace fabscope::fabric;

namespace {
std::string threshold_error(const std::string& text) {
  try {
    (void)parse_thresholds(text, "error_thresholds");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(Thresholds, ReadsTheManPageExample) {
  const auto t = parse_thresholds(
      "# Define thresholds for error counters\nSymbolErrorCounter=10\nLinkErrorRecoveryCounter=10\n"
      "VL15Dropped=100\n",
      "f");
  EXPECT_EQ(t.of(Counter::SymbolErrorCounter), 10u);
  EXPECT_EQ(t.of(Counter::LinkErrorRecoveryCounter), 10u);
  EXPECT_EQ(t.of(Counter::VL15Dropped), 100u);
  EXPECT_EQ(t.of(Counter::PortRcvErrors), 0u);
  EXPECT_FALSE(t.has(Counter::PortRcvErrors));
}

TEST(Thresholds, BlankLinesSpacesHexAndALaterLineWin) {
  const auto t = parse_thresholds("\n  PortRcvErrors = 0x10 \n\r\nPortRcvErrors=5\r\nPortXmitWait=1000\n", "f");
  EXPECT_EQ(t.of(Counter::PortRcvErrors), 5u);
  EXPECT_EQ(t.of(Counter::PortXmitWait), 1000u);
}

TEST(Thresholds, UnknownCounterIsNamedWithFileAndLine) {
  EXPECT_EQ(threshold_error("# x\nSymbolErrors=3\n").rfind("error_thresholds:2: 'SymbolErrors' is not an error counter", 0),
            0u);
  EXPECT_EQ(threshold_error("PortXmitData=3\n").rfind("error_thresholds:1: 'PortXmitData' is not an error counter", 0), 0u);
}

TEST(Thresholds, LineWithoutEqualsOrNumberIsNamed) {
  EXPECT_EQ(threshold_error("SymbolErrorCounter 10\n"), "error_thresholds:1: 'SymbolErrorCounter 10' is not CounterName=value");
  EXPECT_EQ(threshold_error("SymbolErrorCounter=ten\n").rfind("error_thresholds:1: SymbolErrorCounter='ten': the value", 0),
            0u);
  EXPECT_NE(threshold_error("SymbolErrorCounter=-1\n"), "");
  EXPECT_NE(threshold_error("SymbolErrorCounter=99999999999999999999999\n"), "");
  EXPECT_NE(threshold_error("SymbolErrorCounter=\n"), "");
}
