#include "core/json_stream.hpp"

#include <algorithm>
#include <ostream>

namespace fabscope {

namespace {

// A value as dump_json writes it at nesting depth `depth` (two spaces a level): nlohmann indents
// nested lines from column 0, so every line after the first moves right by the depth's indent.
// No JSON string holds a raw newline (it is escaped), so the newlines are the layout's.
void write_nested(std::ostream& out, const json& v, int depth) {
  const std::string text = dump_json(v);
  const std::string pad(static_cast<std::size_t>(2 * depth), ' ');
  std::size_t from = 0;
  for (std::size_t nl; (nl = text.find('\n', from)) != std::string::npos; from = nl + 1) {
    out.write(text.data() + from, static_cast<std::streamsize>(nl + 1 - from));
    out << pad;
  }
  out.write(text.data() + from, static_cast<std::streamsize>(text.size() - from));
}

}  // namespace

void write_json_streaming_array(std::ostream& out, const json& obj, const std::string& key, std::size_t count,
                                const std::function<json(std::size_t)>& element) {
  if (!obj.is_object() || obj.contains(key))
    throw Error("internal: write_json_streaming_array needs an object without \"" + key + "\"");
  // nlohmann's objects are ordered by key (std::less): the array goes where that order puts it.
  std::vector<std::string> keys;
  for (const auto& [k, v] : obj.items()) keys.push_back(k);
  keys.insert(std::upper_bound(keys.begin(), keys.end(), key), key);
  out << "{\n";
  for (std::size_t i = 0; i < keys.size(); ++i) {
    out << "  " << dump_json(json(keys[i])) << ": ";
    if (keys[i] != key) {
      write_nested(out, obj.at(keys[i]), 1);
    } else if (count == 0) {
      out << "[]";
    } else {
      out << "[\n";
      for (std::size_t e = 0; e < count; ++e) {
        out << "    ";
        write_nested(out, element(e), 2);
        out << (e + 1 < count ? ",\n" : "\n");
      }
      out << "  ]";
    }
    out << (i + 1 < keys.size() ? ",\n" : "\n");
  }
  out << "}";
}

}  // namespace fabscope
