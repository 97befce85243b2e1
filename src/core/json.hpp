#pragma once
// nlohmann::json plus std::optional support: nullopt <-> null. Every --json output carries
// "schema" (a name) and "schema_version" (an integer bumped on incompatible change).
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace nlohmann {
template <typename T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& v) {
    if (v) j = *v; else j = nullptr;
  }
  static void from_json(const json& j, std::optional<T>& v) {
    if (j.is_null()) v = std::nullopt; else v = j.get<T>();
  }
};
}  // namespace nlohmann

namespace fabscope {
using json = nlohmann::json;

// Output text of a document that quotes values read from a node, a log or a file: a byte that is
// not UTF-8 becomes U+FFFD instead of throwing (the readers keep only text, but the output must
// not fail should one slip through). indent -1 is one line.
inline std::string dump_json(const json& j, int indent = 2) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

// Integers read from input (a peer, a saved result, a file): nlohmann's get<T>() converts a
// float or an out-of-range integer without a word (for a float beyond T's range that is
// undefined behaviour), so such integers are read with these: a JSON integer within T's range,
// else fabscope::Error naming the key and the value.
template <typename T>
T int_value(const json& v, const std::string& key) {
  if (v.is_number_unsigned()) {
    auto u = v.get<std::uint64_t>();
    if (std::in_range<T>(u)) return static_cast<T>(u);
  } else if (v.is_number_integer()) {
    auto i = v.get<std::int64_t>();
    if (std::in_range<T>(i)) return static_cast<T>(i);
  }
  throw Error("'" + key + "': expected an integer from " + std::to_string(std::numeric_limits<T>::min()) + " to " +
              std::to_string(std::numeric_limits<T>::max()) + ", got " + v.dump().substr(0, 40));
}
template <typename T>
T int_at(const json& j, const std::string& key) {
  return int_value<T>(j.at(key), key);
}
// Absent or null: def.
template <typename T>
T int_or(const json& j, const std::string& key, T def) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? def : int_value<T>(*it, key);
}
// A JSON document read from a file or a peer: json::parse, except that an object with the same key
// twice is refused (nlohmann keeps the last one without a word, so two readers could see two
// different documents). Throws json::parse_error for bad syntax, fabscope::Error naming the key
// for a duplicate. Linear in the input: the keys are checked in nlohmann's own tree builder (its
// callback parser rescans the enclosing array at every object's end, which made an array of n
// objects cost n^2).
namespace json_detail {
class DuplicateRefusingSax : public nlohmann::detail::json_sax_dom_parser<json> {
 public:
  using Base = nlohmann::detail::json_sax_dom_parser<json>;
  explicit DuplicateRefusingSax(json& result) : Base(result, true) {}
  bool start_object(std::size_t n) {
    // One set of keys per open object, kept for reuse by the next object at the same depth.
    if (depth_ == keys_.size()) keys_.emplace_back();
    else keys_[depth_].clear();
    ++depth_;
    return Base::start_object(n);
  }
  bool end_object() {
    if (depth_ > 0) --depth_;
    return Base::end_object();
  }
  bool key(json::string_t& k) {
    if (depth_ > 0 && !keys_[depth_ - 1].insert(k).second)
      throw Error("the key \"" + k.substr(0, 60) + "\" appears twice in one object (which one counts is ambiguous)");
    return Base::key(k);
  }

 private:
  std::vector<std::unordered_set<std::string>> keys_;
  std::size_t depth_ = 0;
};
}  // namespace json_detail

inline json parse_input_json(std::string_view text) {
  json result;
  json_detail::DuplicateRefusingSax sax(result);
  json::sax_parse(text.begin(), text.end(), &sax);
  return result;
}

template <typename T>
std::optional<T> int_opt(const json& j, const std::string& key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return int_value<T>(*it, key);
}

}  // namespace fabscope
