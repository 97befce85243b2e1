// libFuzzer target for the probe's parsers of sysfs/procfs text and PCI config space.
// The first byte picks the parser, the rest is the file content.
// Build: cmake -DFABSCOPE_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ ...; run:
//   build/tests/fuzz/fabscope_probe_fuzz tests/fuzz/corpus/probe
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "probe/gpu.hpp"
#include "probe/kernel.hpp"
#include "probe/pci.hpp"
#include "probe/rdma.hpp"
#include "probe/read_util.hpp"
#include "probe/versions.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabscope::probe;
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 10) {
    case 0:
      if (auto s = parse_coded_state(text)) {
        (void)state_name_matches_code(*s);
        (void)phys_state_name_matches_code(*s);
      }
      break;
    case 1: (void)parse_rate_gbps(text); break;
    case 2: (void)parse_link_speed_gts(text); break;
    case 3: (void)find_acs_ctrl(std::vector<std::uint8_t>(data + 1, data + size)); break;
    case 4: (void)parse_memlock(text); break;
    case 5: (void)parse_modules(text); break;
    case 6: (void)parse_nvrm_version(text); break;
    case 7: (void)parse_driver_gpu_information(text); break;
    case 8: (void)parse_pci_path(text, text.substr(0, 12)); break;
    case 9:
      (void)is_valid_utf8(text);
      (void)last_pci_component(text);
      (void)quote(text);
      (void)is_ipv4_mapped_gid(text);
      (void)is_zero_gid(text);
      break;
  }
  return 0;
}
