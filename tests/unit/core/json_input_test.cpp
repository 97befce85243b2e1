// parse_input_json: duplicate keys refused at any depth, and a cost linear in the input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "core/json.hpp"

using fabscope::parse_input_json;

TEST(ParseInputJson, RefusesADuplicateKeyAtAnyDepth) {
  EXPECT_THROW(parse_input_json(R"({"a": 1, "a": 2})"), fabscope::Error);
  EXPECT_THROW(parse_input_json(R"([{"x": [{"k": 1, "k": 1}]}])"), fabscope::Error);
  // The same key in sibling objects, and at several depths, is not a duplicate.
  EXPECT_NO_THROW(parse_input_json(R"([{"k": 1}, {"k": 2}, {"k": {"k": {"k": 3}}}])"));
  // An object after a deeper one starts with no keys.
  EXPECT_NO_THROW(parse_input_json(R"({"a": {"b": {"c": 1}}, "b": {"c": 2}, "c": 3})"));
}

TEST(ParseInputJson, KeepsWhatJsonParseBuilds) {
  const std::string text = R"({"a": [1, 2.5, "x", null, true, {"b": []}], "c": {}})";
  EXPECT_EQ(parse_input_json(text), fabscope::json::parse(text));
  EXPECT_THROW(parse_input_json(R"({"a": 1} x)"), fabscope::json::parse_error);
  EXPECT_THROW(parse_input_json(R"({"a": )"), fabscope::json::parse_error);
  EXPECT_THROW(parse_input_json(""), fabscope::json::parse_error);
}

// A million empty objects in one array (3 MB). Checking duplicate keys through nlohmann's
// callback parser rescanned the enclosing array at each object's end: n^2 / 2 element visits,
// hours for this input; linear, it is well under a second. The child is stopped by SIGALRM after
// 120 s (a bound on the test, not a measurement: two orders of magnitude above the linear cost).
TEST(ParseInputJsonDeathTest, AnArrayOfAMillionObjectsParsesInLinearTime) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::string text = "[";
  for (int i = 0; i < 1000000; ++i) text += i ? ",{}" : "{}";
  text += "]";
  EXPECT_EXIT(
      {
        ::alarm(120);
        const auto j = parse_input_json(text);
        std::_Exit(j.size() == 1000000 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}
