#pragma once
// Writing a large JSON document without holding all of it as a tree.
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>

#include "core/json.hpp"

namespace fabscope {

// Writes what dump_json(obj + {key: [element(0), ..., element(count - 1)]}, 2) writes, byte for
// byte, without holding the array: each element is built, written and dropped in turn. For
// documents whose one large array (every port of a fabric) would otherwise be a tree in memory
// several times the size of its text. obj must be an object without key.
void write_json_streaming_array(std::ostream& out, const json& obj, const std::string& key, std::size_t count,
                                const std::function<json(std::size_t)>& element);

}  // namespace fabscope
