#pragma once
// Subnets built in code for the judgement and JSON tests: a small healthy leaf/spine fabric in
// which every judgement stays quiet, and helpers to change one thing of it.
#include <string>

#include "fabric/model.hpp"

namespace fabscope::testing {

using namespace fabscope::fabric;

inline PortInfo active_info(int width = 4, Speed speed = Speed::HDR) {
  PortInfo i;
  i.state = PortState::Active;
  i.phys_state = PhysState::LinkUp;
  i.width_active = width;
  i.width_enabled = i.width_supported = width_bit(1) | width_bit(4);
  i.speed_active = speed;
  i.speed_enabled = i.speed_supported = speed_bit(Speed::SDR) | speed_bit(Speed::EDR) | speed_bit(Speed::HDR);
  i.mtu_active = 4096;
  i.mtu_max = 4096;
  return i;
}

inline PortInfo down_info() {
  PortInfo i;
  i.state = PortState::Down;
  i.phys_state = PhysState::Polling;
  i.width_enabled = i.width_supported = width_bit(1) | width_bit(4);
  i.speed_enabled = i.speed_supported = speed_bit(Speed::SDR) | speed_bit(Speed::EDR) | speed_bit(Speed::HDR);
  i.mtu_max = 4096;
  return i;
}

inline Counters zero_counters() {
  Counters c;
  for (auto& v : c.value) v = 0;
  c.extended = true;
  return c;
}

inline int add_node(Subnet& s, NodeType type, const std::string& desc, std::uint64_t guid, int num_ports,
                    std::uint16_t lid) {
  Node n;
  n.type = type;
  n.guid = guid;
  n.system_guid = guid;
  n.description = desc;
  n.vendor_id = 0x02c9;
  n.device_id = type == NodeType::Switch ? 0xd2f0 : 0x101b;
  n.num_ports = num_ports;
  n.dr_path = "0";
  const bool sw = type == NodeType::Switch;
  for (int p = sw ? 0 : 1; p <= num_ports; ++p) {
    Port port;
    port.number = p;
    port.guid = sw ? guid : guid + static_cast<std::uint64_t>(p);
    port.info = down_info();
    if (p == 0 || !sw) port.info->lid = static_cast<std::uint16_t>(lid + (sw ? 0 : p - 1));
    port.counters = zero_counters();
    n.ports.push_back(port);
  }
  if (sw) {
    n.ports[0].info = active_info();
    n.ports[0].info->lid = lid;
  }
  s.nodes.push_back(n);
  return static_cast<int>(s.nodes.size()) - 1;
}

inline Port& port_of(Subnet& s, int node, int port) { return *s.nodes[node].port(port); }

inline void connect(Subnet& s, int a, int pa, int b, int pb, int width = 4, Speed speed = Speed::HDR) {
  for (auto [n, p, rn, rp] : {std::tuple{a, pa, b, pb}, std::tuple{b, pb, a, pa}}) {
    Port& port = port_of(s, n, p);
    const std::uint16_t lid = port.info ? port.info->lid : 0;
    port.info = active_info(width, speed);
    port.info->lid = lid;
    port.remote_node = rn;
    port.remote_port = rp;
  }
}

// Two spines, two leaves (8 ports: 1-2 to HCAs, 7-8 up), four HCAs; an SM master on hca1, a
// standby on hca2.
struct Leaf {
  int spine1, spine2, leaf1, leaf2, hca1, hca2, hca3, hca4;
};
inline Leaf kLeaf{0, 1, 2, 3, 4, 5, 6, 7};

inline Subnet healthy_fabric() {
  Subnet s;
  s.source = "mlx5_0:1";
  s.swept_at = "2026-01-01T00:00:00Z";
  s.sweep_s = 0.25;
  add_node(s, NodeType::Switch, "S-spine1", 0x1000, 8, 1);
  add_node(s, NodeType::Switch, "S-spine2", 0x2000, 8, 2);
  add_node(s, NodeType::Switch, "S-leaf1", 0x3000, 8, 3);
  add_node(s, NodeType::Switch, "S-leaf2", 0x4000, 8, 4);
  add_node(s, NodeType::Hca, "hca1 mlx5_0", 0xa000, 1, 10);
  add_node(s, NodeType::Hca, "hca2 mlx5_0", 0xb000, 1, 11);
  add_node(s, NodeType::Hca, "hca3 mlx5_0", 0xc000, 1, 12);
  add_node(s, NodeType::Hca, "hca4 mlx5_0", 0xd000, 1, 13);
  connect(s, kLeaf.hca1, 1, kLeaf.leaf1, 1);
  connect(s, kLeaf.hca2, 1, kLeaf.leaf1, 2);
  connect(s, kLeaf.hca3, 1, kLeaf.leaf2, 1);
  connect(s, kLeaf.hca4, 1, kLeaf.leaf2, 2);
  connect(s, kLeaf.leaf1, 7, kLeaf.spine1, 1);
  connect(s, kLeaf.leaf1, 8, kLeaf.spine2, 1);
  connect(s, kLeaf.leaf2, 7, kLeaf.spine1, 2);
  connect(s, kLeaf.leaf2, 8, kLeaf.spine2, 2);
  s.sms.push_back({0xa001, 10, 15, SmState::Master, 42, kLeaf.hca1});
  s.sms.push_back({0xb001, 11, 14, SmState::Standby, 40, kLeaf.hca2});
  s.rebuild_links();
  return s;
}

}  // namespace fabscope::testing
