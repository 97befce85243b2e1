// Memory of a fuzz target's code without libFuzzer: replays the inputs under the given
// directories through LLVMFuzzerTestOneInput for N executions, each input mutated a little (a few
// random bytes, sometimes truncated), and prints VmRSS at every power of two. Built without
// sanitizers it shows whether fabscope's code keeps anything per input; built with ASan+UBSan,
// what the sanitizers add. bench/RESULTS.md (fuzzing) has the numbers. Build, e.g. for probe:
//   g++ -std=c++20 -O2 -Isrc bench/fuzz-replay-rss.cpp tests/fuzz/probe_fuzz.cpp
//       build-nogpu/src/probe/libfabscope_probe.a build-nogpu/src/core/libfabscope_core.a -ldl
// (one command line; for ASan+UBSan: clang++ -fsanitize=address,undefined,fuzzer-no-link with
// the libraries of build-fuzz and libclang_rt.fuzzer_no_main)
//   ./a.out 2000000 tests/fuzz/corpus/probe [more input directories]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {
long rss_kib() {
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s EXECUTIONS DIR...\n", argv[0]);
    return 3;
  }
  std::vector<std::vector<std::uint8_t>> inputs;
  for (int i = 2; i < argc; ++i)
    for (const auto& e : std::filesystem::recursive_directory_iterator(argv[i]))
      if (e.is_regular_file()) {
        std::ifstream f(e.path(), std::ios::binary);
        inputs.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
      }
  if (inputs.empty()) return 3;
  const long total = std::atol(argv[1]);
  std::mt19937 rng(1);  // fixed: runs are comparable
  std::printf("inputs %zu, VmRSS at start %ld KiB\n", inputs.size(), rss_kib());
  for (long n = 1; n <= total; ++n) {
    auto u = inputs[rng() % inputs.size()];
    if (!u.empty())
      for (int k = static_cast<int>(rng() % 4); k >= 0; --k) u[rng() % u.size()] = static_cast<std::uint8_t>(rng());
    if (!u.empty() && rng() % 2) u.resize(rng() % u.size());
    LLVMFuzzerTestOneInput(u.data(), u.size());
    if ((n & (n - 1)) == 0 && n >= 1024) std::printf("executions %ld VmRSS %ld KiB\n", n, rss_kib());
  }
  std::printf("executions %ld VmRSS %ld KiB\n", total, rss_kib());
  return 0;
}
