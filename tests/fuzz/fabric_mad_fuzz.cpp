// libFuzzer target for the subnet's MAD decoders (src/fabric/mad.cpp): what a fabric answers,
// whole MADs and attribute data of any length. The first byte picks the decoder, the rest is the
// input. Every input either decodes or throws fabscope::Error; anything else is a bug. Run:
//   build-fuzz/tests/fuzz/fabscope_fabric_mad_fuzz tests/fuzz/corpus/fabric_mad
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "core/error.hpp"
#include "fabric/mad.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabscope::fabric;
  if (size == 0) return 0;
  std::span<const std::uint8_t> b(data + 1, size - 1);
  try {
    switch (data[0] % 9) {
      case 0: {  // a whole SMP: header, then PortInfo (with and without a switch's port 0 mask)
        (void)mad::decode_header(b);
        auto d = mad::smp_data(b);
        (void)mad::decode_port_info(d);
        (void)mad::decode_port_info(d, mad::kCapExtendedSpeeds);
        break;
      }
      case 1: (void)mad::decode_port_info(b); break;
      case 2: (void)mad::decode_node_info(b); (void)mad::decode_node_desc(b); break;
      case 3:
        (void)mad::decode_sm_info(b);
        (void)mad::decode_lft_block(b);
        (void)mad::decode_switch_info(b);
        break;
      case 4: {  // a whole PerfMgt answer
        (void)mad::decode_header(b);
        auto d = mad::pma_data(b);
        (void)mad::decode_pma_capability(d);
        Counters c;
        mad::decode_port_counters(d, true, c);
        mad::decode_port_counters_ext(d, c);
        (void)mad::decode_port_select(d);
        break;
      }
      case 5: {
        Counters c;
        mad::decode_port_counters(b, (b.size() & 1) != 0, c);
        break;
      }
      case 6: {
        Counters c;
        mad::decode_port_counters_ext(b, c);
        (void)mad::decode_pma_capability(b);
        break;
      }
      case 7: (void)mad::parse_dr_path(std::string(b.begin(), b.end())); break;
      case 8: {  // a directed route to a request and back through the header decoder
        auto path = mad::parse_dr_path(std::string(b.begin(), b.end()));
        auto m = mad::smp_dr_get(mad::PortInfo, 1, 7, path);
        auto h = mad::decode_header(m);
        if (h.attr_id != mad::PortInfo || h.tid != 7 || m[7] != path.size()) std::abort();
        break;
      }
    }
  } catch (const fabscope::Error&) {
  }
  return 0;
}
