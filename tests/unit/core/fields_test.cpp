// core::Fields: each error names the file, the field's path and what the field held.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/fields.hpp"

namespace fabscope::core {
namespace {

const std::string kFieldsFile = "r.json";

template <typename F>
std::string field_error(F&& read) {
  try {
    read();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Fields, ErrorNamesTheFileThePathAndWhatWasFound) {
  const json j = json::parse(R"({"results": [{"x": 1}, {"x": "a"}], "o": {"n": null}})");
  const Fields top(kFieldsFile, j);
  const auto rows = top.array("results");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].num("x"), 1.0);
  EXPECT_EQ(field_error([&] { (void)rows[1].num("x"); }), "r.json: field 'results[1].x': expected a number, got string \"a\"");
  EXPECT_EQ(field_error([&] { (void)top.object("o").num("n"); }), "r.json: field 'o.n': expected a number, got null");
  EXPECT_EQ(field_error([&] { (void)top.str("missing"); }), "r.json: field 'missing': missing");
  EXPECT_EQ(field_error([&] { (void)top.array("o"); }), "r.json: field 'o': expected an array, got an object");
}

TEST(Fields, OptionalKeysReadAsAbsentWhenMissingOrNull) {
  const json j = json::parse(R"({"a": null, "s": ["x", "y"]})");
  const Fields top(kFieldsFile, j);
  EXPECT_FALSE(top.opt_num("a"));
  EXPECT_FALSE(top.opt_int("b"));
  EXPECT_FALSE(top.optional_object("a"));
  EXPECT_EQ(top.str_or("a", "d"), "d");
  EXPECT_EQ(top.strings("s"), (std::vector<std::string>{"x", "y"}));
  EXPECT_TRUE(top.strings("none").empty());
  EXPECT_FALSE(top.has("a"));
}

TEST(Fields, IntegersAreCheckedForTypeAndSign) {
  const json j = json::parse(R"({"f": 1.5, "neg": -2, "s": [1]})");
  const Fields top(kFieldsFile, j);
  EXPECT_EQ(field_error([&] { (void)top.integer("f"); }), "r.json: field 'f': expected an integer, got number 1.5");
  EXPECT_EQ(field_error([&] { (void)top.uint("neg"); }), "r.json: field 'neg': expected a non-negative integer, got -2");
  EXPECT_EQ(field_error([&] { (void)top.strings("s"); }), "r.json: field 's[0]': expected a string, got number 1");
}

TEST(Fields, WithoutAFileName_TheErrorStartsAtTheField) {
  const std::string none;
  const json j = json::parse(R"({"a": {"b": "x"}})");
  EXPECT_EQ(field_error([&] { (void)Fields(none, j).object("a").num("b"); }),
            "field 'a.b': expected a number, got string \"x\"");
}

TEST(Fields, FindingsAreReadWithTheirSeverityChecked) {
  const json j = json::parse(R"({"findings": [{"id": "x.y", "severity": "warn", "message": "m"},
                                               {"id": "x.z", "severity": "bad"}]})");
  EXPECT_EQ(field_error([&] { (void)findings_from(Fields(kFieldsFile, j), "findings"); }),
            "r.json: field 'findings[1].severity': expected ok, info, warn or fail, got \"bad\"");
  json one = j;
  one["findings"].erase(1);
  const auto f = findings_from(Fields(kFieldsFile, one), "findings");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].id, "x.y");
  EXPECT_EQ(f[0].severity, Severity::Warn);
  EXPECT_EQ(f[0].message, "m");
}

TEST(Describe, NamesTheTypeAndCutsLongStrings) {
  EXPECT_EQ(describe(json(true)), "boolean true");
  EXPECT_EQ(describe(json(std::string(50, 'a'))), "string \"" + std::string(40, 'a') + "...\"");
  EXPECT_EQ(describe(json::array()), "an array");
}

TEST(Fields, BooleansAndNumberArrays) {
  const json j = json::parse(R"({"t": true, "n": null, "s": "yes", "xs": [1, 2.5], "bad": [1, "2"], "o": {}})");
  const Fields top(kFieldsFile, j);
  EXPECT_TRUE(top.boolean("t"));
  EXPECT_TRUE(top.boolean_or("n", true));   // null: the default
  EXPECT_FALSE(top.boolean_or("gone", false));
  EXPECT_EQ(field_error([&] { (void)top.boolean("n"); }), "r.json: field 'n': expected true or false, got null");
  EXPECT_EQ(field_error([&] { (void)top.boolean("gone"); }), "r.json: field 'gone': missing");
  EXPECT_EQ(field_error([&] { (void)top.boolean_or("s", false); }),
            "r.json: field 's': expected true or false, got string \"yes\"");
  EXPECT_EQ(top.numbers("xs"), (std::vector<double>{1, 2.5}));
  EXPECT_EQ(field_error([&] { (void)top.numbers("bad"); }), "r.json: field 'bad[1]': expected a number, got string \"2\"");
  EXPECT_EQ(field_error([&] { (void)top.numbers("o"); }), "r.json: field 'o': expected an array of numbers, got an object");
  EXPECT_EQ(field_error([&] { (void)top.object("o").numbers("xs"); }), "r.json: field 'o.xs': missing");
}

}  // namespace
}  // namespace fabscope::core
