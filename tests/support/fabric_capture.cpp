// Captures answers of a (simulated) fabric as test fixtures: each MAD the subnet decoders read,
// 256 bytes as hex, one file per attribute. Used once to write tests/fixtures/fabric-mads/ (see its
// SOURCE); not part of fabscope.
//   fabric_capture OUTDIR SWITCH_DR_PATH PMA_LID PMA_PORT
// e.g. fabric_capture out 0,1 3 3: NodeInfo, NodeDescription, PortInfo (port 0, 1 and 3),
// SwitchInfo, LinearForwardingTable block 0 of the switch at 0,1; NodeInfo, PortInfo, SMInfo of the local
// HCA; ClassPortInfo, PortCounters and PortCountersExtended of PMA_LID port PMA_PORT.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "fabric/mad.hpp"
#include "fabric/umad.hpp"

using namespace fabscope::fabric;

int main(int argc, char** argv) {
#ifdef FABSCOPE_UMAD_HEADERS
  if (argc != 5) {
    std::fprintf(stderr, "usage: fabric_capture OUTDIR SWITCH_DR_PATH PMA_LID PMA_PORT\n");
    return 3;
  }
  std::string out = argv[1];
  auto sw = mad::parse_dr_path(argv[2]);
  auto lid = static_cast<std::uint16_t>(std::atoi(argv[3]));
  int pma_port = std::atoi(argv[4]);
  try {
    const auto& l = umad_lib();
    MadEngine e(l, choose_port(l, "", 0), 200, 3);
    auto save = [&](const std::string& name, std::array<std::uint8_t, 256> m, std::uint16_t dlid) {
      MadRequest r;
      r.mad = m;
      r.dlid = dlid;
      r.on_reply = [out, name](std::span<const std::uint8_t> mad) {
        std::ofstream f(out + "/" + name + ".hex");
        for (std::size_t i = 0; i < mad.size(); ++i) f << (i % 16 ? " " : i ? "\n" : "") << std::hex
                                                       << (mad[i] >> 4) << (mad[i] & 15);
        f << "\n";
      };
      r.on_fail = [name](const std::string& why) { std::fprintf(stderr, "%s: %s\n", name.c_str(), why.c_str()); };
      e.submit(std::move(r));
    };
    save("switch-nodeinfo", mad::smp_dr_get(mad::NodeInfo, 0, 0, sw), 0);
    save("switch-nodedesc", mad::smp_dr_get(mad::NodeDesc, 0, 0, sw), 0);
    save("switch-portinfo-0", mad::smp_dr_get(mad::PortInfo, 0, 0, sw), 0);
    save("switch-portinfo-1", mad::smp_dr_get(mad::PortInfo, 1, 0, sw), 0);
    save("switch-portinfo-3", mad::smp_dr_get(mad::PortInfo, 3, 0, sw), 0);
    save("switch-portinfo-5", mad::smp_dr_get(mad::PortInfo, 5, 0, sw), 0);
    save("switch-switchinfo", mad::smp_dr_get(mad::SwitchInfo, 0, 0, sw), 0);
    save("switch-lft-0", mad::smp_dr_get(mad::LinearForwardingTable, 0, 0, sw), 0);
    save("hca-nodeinfo", mad::smp_dr_get(mad::NodeInfo, 0, 0, {}), 0);
    save("hca-portinfo-1", mad::smp_dr_get(mad::PortInfo, 1, 0, {}), 0);
    save("hca-sminfo", mad::smp_dr_get(mad::SMInfo, 0, 0, {}), 0);
    save("pma-classportinfo", mad::pma_get(mad::ClassPortInfo, 0, 0), lid);
    save("pma-portcounters", mad::pma_get(mad::PortCounters, pma_port, 0), lid);
    save("pma-portcounters-ext", mad::pma_get(mad::PortCountersExtended, pma_port, 0), lid);
    e.run(4);
  } catch (const fabscope::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
#else
  (void)argc, (void)argv;
  std::fprintf(stderr, "built without the rdma-core management headers\n");
  return 1;
#endif
}
