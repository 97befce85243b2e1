#pragma once
// The size sweep: nccl-tests' -b/-e with -f (geometric) or -i (arithmetic) steps, or an
// explicit list. Sizes are bytes; suffixes K, M, G, T are powers of 1024 as in nccl-tests.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabscope::bench {

// "8", "64K", "4G", "1M", "512B", "2GiB". nullopt on anything else (or overflow).
std::optional<std::uint64_t> parse_size(std::string_view text);
// "1 MiB"-style label for progress lines; "1048576" stays in the table.
std::string size_label(std::uint64_t bytes);

struct SweepSpec {
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = 128ull << 20;
  double step_factor = 2;         // geometric step when > 1 and step_bytes == 0
  std::uint64_t step_bytes = 0;   // arithmetic step when > 0
  std::vector<std::uint64_t> list;  // explicit sizes: used as given when not empty
};

// The sizes to run, ascending, without duplicates. Throws fabscope::UsageError when the spec
// is empty or runaway (more than kMaxSweepSizes sizes).
// command names the command in the messages ("bench", "tune").
std::vector<std::uint64_t> sweep_sizes(const SweepSpec& spec, std::string_view command = "bench");
constexpr std::size_t kMaxSweepSizes = 10000;

// A comma-separated list of sizes; throws UsageError naming the command and the bad element.
std::vector<std::uint64_t> parse_size_list(std::string_view text, std::string_view command = "bench");

}  // namespace fabscope::bench
