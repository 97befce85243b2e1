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
// for a duplicate.
inline json parse_input_json(std::string_view text) {
  // One set of keys per open object; arrays between them open none.
  std::vector<std::set<std::string>> open_objects;
  json::parser_callback_t refuse_duplicates = [&](int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start: open_objects.emplace_back(); break;
      case json::parse_event_t::object_end:
        if (!open_objects.empty()) open_objects.pop_back();
        break;
      case json::parse_event_t::key:
        if (!open_objects.empty() && !open_objects.back().insert(parsed.get<std::string>()).second)
          throw Error("the key \"" + parsed.get<std::string>().substr(0, 60) +
                      "\" appears twice in one object (which one counts is ambiguous)");
        break;
      default: break;
    }
    return true;
  };
  return json::parse(text.begin(), text.end(), refuse_duplicates);
}

template <typename T>
std::optional<T> int_opt(const json& j, const std::string& key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return int_value<T>(*it, key);
}

}  // namespace fabscope
