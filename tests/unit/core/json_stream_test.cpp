#include "core/json_stream.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace fabscope {
namespace {

std::string streamed(const json& rest, const std::string& key, const json& array) {
  std::ostringstream out;
  write_json_streaming_array(out, rest, key, array.size(), [&array](std::size_t i) { return array.at(i); });
  return out.str();
}

void expect_same_as_dump(json doc, const std::string& key) {
  json array = doc.at(key);
  doc.erase(key);
  json whole = doc;
  whole[key] = array;
  EXPECT_EQ(streamed(doc, key, array), dump_json(whole)) << key;
}

TEST(StreamingArray, WritesWhatDumpJsonWritesWhereverTheKeySorts) {
  const json elements = json::array({json::object({{"a", 1}, {"b", json::array({1, 2, json::object({{"c", "x\ny"}})})}}),
                                     json::object(), json::array(), 3.5, nullptr, "text \"quoted\""});
  for (const std::string key : {"aaa", "nodes", "zzz"}) {
    json doc = {{"links", json::array({json::object({{"a_node", 0}})})}, {"schema", "fabscope.fabric"},
                {"notes", json::array()}, {"sms", json::object({{"x", json::object({{"y", 1}})}})}};
    doc[key] = elements;
    expect_same_as_dump(doc, key);
  }
}

TEST(StreamingArray, AnEmptyArrayAndAnOnlyKeyAreWrittenAsDumpJsonDoes) {
  expect_same_as_dump(json{{"nodes", json::array()}, {"schema", "s"}}, "nodes");
  expect_same_as_dump(json{{"nodes", json::array({1})}}, "nodes");
}

TEST(StreamingArray, NonUtf8TextIsReplacedAsInDumpJson) {
  json doc = {{"nodes", json::array({std::string("bad \xff byte")})}, {"name", std::string("\xfe")}};
  expect_same_as_dump(doc, "nodes");
}

TEST(StreamingArray, AKeyAlreadyInTheObjectIsAnInternalError) {
  std::ostringstream out;
  EXPECT_THROW(write_json_streaming_array(out, json{{"nodes", 1}}, "nodes", 0, [](std::size_t) { return json(); }),
               Error);
  EXPECT_THROW(write_json_streaming_array(out, json::array(), "nodes", 0, [](std::size_t) { return json(); }), Error);
}

TEST(StreamingArray, ElementsAreBuiltOneAtATimeInOrder) {
  std::ostringstream out;
  std::size_t calls = 0;
  write_json_streaming_array(out, json::object(), "n", 4, [&calls](std::size_t i) {
    EXPECT_EQ(i, calls++);
    return json(static_cast<int>(i));
  });
  EXPECT_EQ(calls, 4u);
  EXPECT_EQ(out.str(), dump_json(json{{"n", json::array({0, 1, 2, 3})}}));
}

}  // namespace
}  // namespace fabscope
