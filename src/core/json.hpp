#pragma once
// nlohmann::json plus std::optional support: nullopt <-> null. Every --json output carries
// "schema" (a name) and "schema_version" (an integer bumped on incompatible change).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

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

}  // namespace fabscope
