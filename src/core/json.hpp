#pragma once
// nlohmann::json plus std::optional support: nullopt <-> null. Every --json output carries
// "schema" (a name) and "schema_version" (an integer bumped on incompatible change).
#include <nlohmann/json.hpp>
#include <optional>

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
}
