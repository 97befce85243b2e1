// libFuzzer target for the parsers of the node-fabric collectors: DCB netlink replies, nft JSON,
// /proc/net/bonding, CPU lists, /proc/interrupts and lldpcli JSON. The first byte picks the parser, the rest
// is the input. Build: cmake -DFABSCOPE_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ ...; run:
//   build/tests/fuzz/fabscope_node_network_fuzz tests/fuzz/corpus/node_network
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "core/error.hpp"
#include "probe/bonding.hpp"
#include "probe/dcbnl.hpp"
#include "probe/firewall.hpp"
#include "probe/irq.hpp"
#include "probe/lldp.hpp"
#include "probe/lossless.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabscope::probe;
  if (size == 0) return 0;
  std::span<const std::uint8_t> bytes(data + 1, size - 1);
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 6) {
    case 0: {
      auto r = parse_dcb_reply(bytes);
      fabscope::LosslessState s;
      apply_dcb_reply(r, s);
      (void)describe_failure(r);
      break;
    }
    case 1:
      try {
        (void)parse_nft_json(text);
      } catch (const fabscope::Error&) {
      }
      break;
    case 2: (void)parse_bonding("bond0", text); break;
    case 3: (void)parse_cpulist(text); break;
    case 4: (void)parse_interrupts(text); break;
    case 5:
      try {
        (void)parse_lldpcli_json(text);
      } catch (const fabscope::Error&) {
      }
      break;
  }
  return 0;
}
