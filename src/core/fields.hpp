#pragma once
// Checked access to the keys of a saved JSON document, for the readers of saved files (each
// module's reader of its own results, and report's of the inputs it reads itself). Every error
// names the file and the field's path ("results[3].out_of_place.busbw_gbytes_per_s") with what
// was found, so a bad input is reported, never rendered as a wrong number. A Fields refers to
// its file name and JSON value: both outlive it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/finding.hpp"
#include "core/json.hpp"

namespace fabscope::core {

class Fields {
 public:
  // An empty file name leaves it out of the errors ("field 'a.b': what"), for a caller that puts
  // its own in front.
  Fields(const std::string& file, const json& j, std::string path = "");

  // The object at a key (or an array element); throws when missing or not an object/array.
  Fields object(const std::string& key) const;
  std::vector<Fields> array(const std::string& key) const;  // elements of an array key
  std::vector<Fields> elements() const;  // this value's own elements (an array in an array)
  std::optional<Fields> optional_object(const std::string& key) const;  // null or missing: nullopt

  std::string str(const std::string& key) const;                       // required string
  std::string str_or(const std::string& key, const std::string& def) const;  // missing/null: def
  double num(const std::string& key) const;                            // required finite number
  std::optional<double> opt_num(const std::string& key) const;         // null/missing: nullopt
  std::int64_t integer(const std::string& key) const;
  std::optional<std::int64_t> opt_int(const std::string& key) const;
  std::uint64_t uint(const std::string& key) const;                    // >= 0
  std::vector<std::string> strings(const std::string& key) const;      // missing: empty
  std::vector<double> numbers(const std::string& key) const;           // required, finite numbers
  bool boolean(const std::string& key) const;                          // required true/false
  bool boolean_or(const std::string& key, bool def) const;             // missing/null: def

  bool has(const std::string& key) const;
  const json& raw() const { return *j_; }
  // An Error naming the file and the field: "FILE: field 'a.b': what".
  [[noreturn]] void fail(const std::string& key, const std::string& what) const;

 private:
  std::string where(const std::string& key) const;
  const json* at(const std::string& key) const;  // nullptr when missing

  const std::string* file_;
  const json* j_;
  std::string path_;
};

// "string \"abc\"", "number 3", "null", "object", ...: what a field held, for messages.
std::string describe(const json& v);

// A findings[] array as in fabscope.check: id and severity required, the texts optional.
std::vector<Finding> findings_from(const Fields& parent, const std::string& key);

}  // namespace fabscope::core
