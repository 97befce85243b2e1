// libFuzzer target for `fabscope bench`'s command line: sizes ("64K", "2GiB"), size lists, the
// sweep they expand to, and the whole flag set. The input is the argument vector, one argument
// per line. Options are checked before any GPU is touched, so bad ones must be usage errors.
// Build and run: scripts/fuzz.sh bench_options (or cmake --preset fuzz; see tests/fuzz/README).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "bench/options.hpp"
#include "bench/sizes.hpp"
#include "core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabscope::bench;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto b = parse_size(text)) (void)size_label(*b);
  try {
    for (std::uint64_t b : parse_size_list(text))
      if (!parse_size(std::to_string(b))) std::abort();  // a parsed size prints back parseable
  } catch (const fabscope::UsageError&) {
  }

  std::vector<std::string> args;
  std::size_t pos = 0;
  while (pos <= text.size() && args.size() < 32) {
    auto nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    args.emplace_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  try {
    Options o = parse_options(args);
    auto sizes = sweep_sizes(o.sweep);
    if (sizes.empty() || sizes.size() > kMaxSweepSizes) std::abort();
    for (std::size_t i = 1; i < sizes.size(); ++i)
      if (sizes[i] <= sizes[i - 1]) std::abort();
    (void)settings_fingerprint(o);
  } catch (const fabscope::UsageError&) {
  }
  return 0;
}
