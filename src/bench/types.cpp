#include "bench/types.hpp"
#include "core/strings.hpp"

#include <cctype>

namespace fabscope::bench {

namespace {
struct TypeInfo {
  DataType type;
  std::size_t size;
  bool floating;
  std::string_view name;
  std::vector<std::string_view> aliases;
};

const std::vector<TypeInfo>& type_table() {
  static const std::vector<TypeInfo> table = {
      {DataType::Int8, 1, false, "int8", {"char", "i8"}},
      {DataType::Uint8, 1, false, "uint8", {"u8"}},
      {DataType::Int32, 4, false, "int32", {"int", "i32"}},
      {DataType::Uint32, 4, false, "uint32", {"u32"}},
      {DataType::Int64, 8, false, "int64", {"i64"}},
      {DataType::Uint64, 8, false, "uint64", {"u64"}},
      {DataType::Half, 2, true, "half", {"fp16", "float16"}},
      {DataType::Float, 4, true, "float", {"fp32", "float32"}},
      {DataType::Double, 8, true, "double", {"fp64", "float64"}},
      {DataType::Bfloat16, 2, true, "bfloat16", {"bf16"}},
  };
  return table;
}

const TypeInfo& info(DataType t) {
  for (const auto& i : type_table())
    if (i.type == t) return i;
  return type_table().front();
}

}  // namespace

std::size_t type_size(DataType t) { return info(t).size; }
bool is_floating(DataType t) { return info(t).floating; }
std::string_view type_name(DataType t) { return info(t).name; }

std::string_view op_name(RedOp op) {
  switch (op) {
    case RedOp::Sum: return "sum";
    case RedOp::Prod: return "prod";
    case RedOp::Max: return "max";
    case RedOp::Min: return "min";
    case RedOp::Avg: return "avg";
  }
  return "sum";
}

std::vector<std::string> type_names() {
  std::vector<std::string> names;
  for (const auto& i : type_table()) names.emplace_back(i.name);
  return names;
}

std::optional<DataType> parse_type(std::string_view text) {
  auto t = core::lower(text);
  for (const auto& i : type_table()) {
    if (t == i.name) return i.type;
    for (auto a : i.aliases)
      if (t == a) return i.type;
  }
  return std::nullopt;
}

std::optional<RedOp> parse_op(std::string_view text) {
  auto t = core::lower(text);
  for (auto op : all_ops())
    if (t == op_name(op)) return op;
  return std::nullopt;
}

std::vector<DataType> all_types() {
  std::vector<DataType> out;
  for (const auto& i : type_table()) out.push_back(i.type);
  return out;
}

std::vector<RedOp> all_ops() { return {RedOp::Sum, RedOp::Prod, RedOp::Max, RedOp::Min, RedOp::Avg}; }

}  // namespace fabscope::bench
