#pragma once
// Helpers for the ncclenv tests: NodeInfo from the real fixture captures, and small values
// built in code for the rules the captures do not exercise (each test says what it changed).
#include <string>

#include "core/node_info.hpp"
#include "core/root.hpp"
#include "probe/probe.hpp"
#include "support/fixtures.hpp"

namespace fabscope::testing {

inline NodeInfo probe_fixture(const std::string& name) {
  if (name == "procfs-infiniband") {
    TempDir t;
    unpack_ttar(fixture("procfs-infiniband/sys-class-infiniband-and-net.ttar"), t.path());
    NodeInfo n = probe::collect(core::Root(t.path()), probe::Options{false});
    n.root.clear();
    return n;
  }
  NodeInfo n = probe::collect(core::Root(fixture(name)), probe::Options{false});
  n.root.clear();
  return n;
}

inline RdmaPort roce_port(int port, const std::string& netdev, int ipv4_gid_index, double rate = 100) {
  RdmaPort p;
  p.port = port;
  p.state = "ACTIVE";
  p.phys_state = "LinkUp";
  p.rate_gbps = rate;
  p.link_layer = "Ethernet";
  p.netdev = netdev;
  p.gids.push_back({0, "fe80:0000:0000:0000:0000:0000:0000:0001", "IB/RoCE v1", netdev, false});
  p.gids.push_back({1, "fe80:0000:0000:0000:0000:0000:0000:0001", "RoCE v2", netdev, false});
  if (ipv4_gid_index >= 2) {
    p.gids.push_back({ipv4_gid_index, "0000:0000:0000:0000:0000:ffff:0a00:0001", "IB/RoCE v1", netdev, true});
    p.gids.push_back({ipv4_gid_index + 1, "0000:0000:0000:0000:0000:ffff:0a00:0001", "RoCE v2", netdev, true});
  }
  return p;
}

inline RdmaPort ib_port(int port, double rate, const std::string& state = "ACTIVE",
                        const std::string& phys = "LinkUp") {
  RdmaPort p;
  p.port = port;
  p.state = state;
  p.phys_state = phys;
  p.rate_gbps = rate;
  p.link_layer = "InfiniBand";
  return p;
}

inline RdmaDevice device(const std::string& name, std::vector<RdmaPort> ports, const std::string& pci = "0000:17:00.0") {
  RdmaDevice d;
  d.name = name;
  d.pci_address = pci;
  d.ports = std::move(ports);
  return d;
}

inline Netdev netdev(const std::string& name, const std::string& state = "up", std::vector<std::string> ipv4 = {},
                     const std::string& pci = "0000:01:00.0") {
  Netdev n;
  n.name = name;
  n.operstate = state;
  n.type = name == "lo" ? 772 : 1;
  n.pci_address = pci;
  n.is_virtual = pci.empty();
  n.ipv4 = std::move(ipv4);
  return n;
}

}  // namespace fabscope::testing
