#pragma once
// Element types and reduction operators of a benchmark run, named as nccl-tests prints them
// ("float", "bfloat16", "sum"), so the text table reads the same.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabscope::bench {

enum class DataType { Int8, Uint8, Int32, Uint32, Int64, Uint64, Half, Float, Double, Bfloat16 };
enum class RedOp { Sum, Prod, Max, Min, Avg };

std::size_t type_size(DataType t);
bool is_floating(DataType t);
std::string_view type_name(DataType t);  // "float", "half", "bfloat16", "int8", ...
std::string_view op_name(RedOp op);      // "sum", "prod", "max", "min", "avg"

// Accepts nccl-tests' names and the usual aliases ("fp16", "bf16", "int", "char", "fp32").
std::optional<DataType> parse_type(std::string_view text);
std::vector<std::string> type_names();  // the canonical names parse_type takes (aliases aside)
std::optional<RedOp> parse_op(std::string_view text);

std::vector<DataType> all_types();
std::vector<RedOp> all_ops();

}  // namespace fabscope::bench
