#include "probe/saved.hpp"

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json.hpp"

namespace fabscope::probe {

NodeInfo load_saved_node(const std::string& path) {
  constexpr std::size_t kMaxBytes = 64u << 20;
  const std::string text = core::read_input(path, kMaxBytes);
  json j;
  try {
    j = parse_input_json(text);
  } catch (const json::exception&) {
    j = json();
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
  if (!j.is_object()) throw Error(path + ": not a JSON object (expected the output of fabscope probe --json)");
  try {
    return j.get<NodeInfo>();
  } catch (const std::exception& e) {
    throw Error(path + ": " + e.what());
  }
}

}  // namespace fabscope::probe
