// libFuzzer target for what `fabscope cluster` reads from the network: the message header, the
// hello, a node summary, a Slurm node list, rank 0's pair plan and rank 0's pre-authentication
// framer of a new connection. The first byte picks the parser.
// Build: cmake -DFABSCOPE_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ ...; run:
//   build/tests/fuzz/fabscope_cluster_fuzz tests/fuzz/corpus/cluster
#include <cstddef>
#include <cstdint>
#include <string>

#include "cluster/launch.hpp"
#include "cluster/message.hpp"
#include "cluster/summary.hpp"
#include "core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabscope;
  using namespace fabscope::cluster;
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    switch (data[0] % 6) {
      case 0: (void)parse_header(data + 1, size - 1, "fuzz"); break;
      case 1: (void)parse_hello(text, "fuzz"); break;
      case 2: (void)summary_from_json(parse_payload(text, "fuzz")); break;
      case 3: (void)expand_hostlist(text.substr(0, 64)); break;
      case 4: (void)parse_plan(parse_payload(text, "fuzz")); break;
      case 5:
        // Rank 0's pre-authentication framer: a size within the hello bound, or a refusal.
        if (std::size_t n = hello_frame_size(text); n > kHeaderBytes + kMaxHelloBytes || (n && n < kHeaderBytes))
          __builtin_trap();
        break;
    }
  } catch (const Error&) {
    // Refusing bad input with a reason is the expected outcome.
  }
  return 0;
}
