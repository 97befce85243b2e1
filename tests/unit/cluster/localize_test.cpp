// Locating slow pairs on a hand-built two-tier fat tree whose forwarding tables route like
// OpenSM's: a leaf sends a destination on another leaf up to spine (LID mod spines), a spine
// sends it down to the destination's leaf.
#include <gtest/gtest.h>

#include <random>

#include "../fabric/fabric_builders.hpp"
#include "cluster/localize.hpp"
#include "cluster/result.hpp"
#include "fabric/routes.hpp"

namespace fabscope::cluster {
namespace {

using namespace fabscope::testing;

struct Tree {
  Subnet s;
  std::vector<int> leaf, spine, host;  // node indexes; host[i] is rank i
  int hosts_per_leaf = 0;
  int uplink(int /*leaf*/, int sp) const { return hosts_per_leaf + sp + 1; }  // leaf port to spine sp
};

Tree fat_tree(int leaves, int spines, int per_leaf) {
  Tree t;
  t.hosts_per_leaf = per_leaf;
  std::uint16_t lid = 1;
  for (int l = 0; l < leaves; ++l)
    for (int h = 0; h < per_leaf; ++h)
      t.host.push_back(add_node(t.s, NodeType::Hca, "h" + std::to_string(l) + "-" + std::to_string(h) + " mlx5_0",
                                0x1000 + static_cast<std::uint64_t>(t.host.size()) * 16, 1, lid++));
  for (int l = 0; l < leaves; ++l)
    t.leaf.push_back(add_node(t.s, NodeType::Switch, "leaf" + std::to_string(l), 0x2000 + l, per_leaf + spines, lid++));
  for (int sp = 0; sp < spines; ++sp)
    t.spine.push_back(add_node(t.s, NodeType::Switch, "spine" + std::to_string(sp), 0x3000 + sp, leaves, lid++));
  for (int l = 0; l < leaves; ++l) {
    for (int h = 0; h < per_leaf; ++h) connect(t.s, t.host[l * per_leaf + h], 1, t.leaf[l], h + 1);
    for (int sp = 0; sp < spines; ++sp) connect(t.s, t.leaf[l], t.uplink(l, sp), t.spine[sp], l + 1);
  }
  const std::size_t top = lid;
  for (int l = 0; l < leaves; ++l) {
    auto& lft = t.s.nodes[t.leaf[l]].lft;
    lft.assign(top, 0xff);
    for (std::size_t h = 0; h < t.host.size(); ++h) {
      const auto dst = t.s.nodes[t.host[h]].lid();
      const int dl = static_cast<int>(h) / per_leaf;
      lft[dst] = static_cast<std::uint8_t>(dl == l ? static_cast<int>(h) % per_leaf + 1 : t.uplink(l, dst % spines));
    }
    lft[t.s.nodes[t.leaf[l]].lid()] = 0;
  }
  for (int sp = 0; sp < spines; ++sp) {
    auto& lft = t.s.nodes[t.spine[sp]].lft;
    lft.assign(top, 0xff);
    for (std::size_t h = 0; h < t.host.size(); ++h)
      lft[t.s.nodes[t.host[h]].lid()] = static_cast<std::uint8_t>(static_cast<int>(h) / per_leaf + 1);
    lft[t.s.nodes[t.spine[sp]].lid()] = 0;
  }
  t.s.source = "test-tree";
  t.s.rebuild_links();
  return t;
}

std::vector<HostPort> hosts_of(const Tree& t) {
  std::vector<HostPort> out;
  for (int h : t.host) out.push_back({h, 1, t.s.nodes[h].lid()});
  return out;
}

// Every pair measured; a direction is slow (30 Gb/s instead of 100, with +-2% noise) when slow()
// says so for its route.
template <class SlowFn>
std::vector<PairResult> measure(const Tree& t, SlowFn slow, std::uint32_t seed = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> noise(0.98, 1.02);
  std::vector<PairResult> out;
  const int n = static_cast<int>(t.host.size());
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      PairResult p;
      p.a = a, p.b = b, p.engine = "rdma";
      auto dir = [&](int x, int y) {
        auto hops = route_from_lfts(t.s, t.host[x], 1, t.s.nodes[t.host[y]].lid());
        return (slow(hops, x, y) ? 30.0 : 100.0) * noise(rng);
      };
      p.a_to_b_gbps = dir(a, b);
      p.b_to_a_gbps = dir(b, a);
      out.push_back(p);
    }
  return out;
}

bool crosses(const std::vector<Hop>& hops, int node, int out_port) {
  for (const auto& h : hops)
    if (h.node == node && h.out_port == out_port) return true;
  return false;
}
bool visits(const std::vector<Hop>& hops, int node) {
  for (const auto& h : hops)
    if (h.node == node) return true;
  return false;
}

Localization run(const Tree& t, const std::vector<PairResult>& pairs) {
  return localize(t.s, hosts_of(t), pairs, direction_threshold(pairs));
}

TEST(Localize, NamesTheDegradedCableBetweenLeafAndSpineBothDirections) {
  Tree t = fat_tree(4, 4, 4);
  const int leaf = t.leaf[1], spine = t.spine[2], up = t.uplink(1, 2), down = 2;  // spine port to leaf1
  auto pairs = measure(t, [&](const std::vector<Hop>& h, int, int) {
    return crosses(h, leaf, up) || crosses(h, spine, down);
  });
  const Localization l = run(t, pairs);
  ASSERT_TRUE(l.attempted) << l.why_not;
  ASSERT_FALSE(l.suspects.empty());
  const Suspect& s = l.suspects.front();
  EXPECT_EQ(s.kind, SuspectKind::Cable);
  EXPECT_TRUE(s.both_directions);
  EXPECT_EQ(s.name, "leaf1:" + std::to_string(up) + " <-> spine2:2");
  EXPECT_EQ(s.fast_crossing, 0u);
  EXPECT_EQ(s.slow_crossing, l.slow);
  EXPECT_EQ(l.unexplained, 0u);
  EXPECT_EQ(l.suspects.size(), 1u);
  const auto f = localization_findings(l, {});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].id, "cluster.slow_fabric_link");
  EXPECT_NE(f[0].evidence.find(std::to_string(l.slow) + " of " + std::to_string(l.slow) + " slow"), std::string::npos)
      << f[0].evidence;
}

TEST(Localize, OneFibreOfACableIsNamedAsThatDirectionOnly) {
  Tree t = fat_tree(4, 4, 4);
  const int leaf = t.leaf[0], up = t.uplink(0, 3);
  auto pairs = measure(t, [&](const std::vector<Hop>& h, int, int) { return crosses(h, leaf, up); });
  const Localization l = run(t, pairs);
  ASSERT_FALSE(l.suspects.empty());
  EXPECT_EQ(l.suspects[0].name, "leaf0:" + std::to_string(up) + " -> spine3:1");
  EXPECT_FALSE(l.suspects[0].both_directions);
}

TEST(Localize, ASwitchSlowOnEveryCableIsNamedRatherThanItsCables) {
  Tree t = fat_tree(4, 4, 4);
  const int spine = t.spine[1];
  auto pairs = measure(t, [&](const std::vector<Hop>& h, int, int) { return visits(h, spine); });
  const Localization l = run(t, pairs);
  ASSERT_FALSE(l.suspects.empty());
  EXPECT_EQ(l.suspects[0].kind, SuspectKind::Switch);
  EXPECT_EQ(l.suspects[0].name, "spine1");
  EXPECT_EQ(l.suspects.size(), 1u);
  const auto f = localization_findings(l, {});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].id, "cluster.slow_switch");
}

TEST(Localize, ASlowHostIsItsOwnCableNotTheLeaf) {
  Tree t = fat_tree(4, 4, 4);
  const int slow_rank = 5;
  auto pairs = measure(t, [&](const std::vector<Hop>&, int a, int b) { return a == slow_rank || b == slow_rank; });
  const Localization l = run(t, pairs);
  ASSERT_FALSE(l.suspects.empty());
  EXPECT_EQ(l.suspects[0].kind, SuspectKind::HostCable);
  EXPECT_EQ(l.suspects[0].host_rank, slow_rank);
  EXPECT_TRUE(l.suspects[0].both_directions);
  EXPECT_TRUE(localization_findings(l, {}).empty());  // cluster.slow_node says it
}

TEST(Localize, AQuietFabricHasNoSuspect) {
  Tree t = fat_tree(3, 2, 3);
  auto pairs = measure(t, [](const std::vector<Hop>&, int, int) { return false; });
  const Localization l = run(t, pairs);
  EXPECT_TRUE(l.attempted);
  EXPECT_EQ(l.slow, 0u);
  EXPECT_TRUE(l.suspects.empty());
  EXPECT_EQ(l.observations, pairs.size() * 2);
}

TEST(Localize, TwoFaultsAreBothNamed) {
  Tree t = fat_tree(6, 4, 4);
  const int up0 = t.uplink(0, 1), up4 = t.uplink(4, 3);
  auto pairs = measure(t, [&](const std::vector<Hop>& h, int, int) {
    return crosses(h, t.leaf[0], up0) || crosses(h, t.leaf[4], up4);
  });
  const Localization l = run(t, pairs);
  ASSERT_EQ(l.suspects.size(), 2u);
  std::set<std::string> names{l.suspects[0].name, l.suspects[1].name};
  EXPECT_TRUE(names.count("leaf0:" + std::to_string(up0) + " -> spine1:1"));
  EXPECT_TRUE(names.count("leaf4:" + std::to_string(up4) + " -> spine3:5"));
}

TEST(Localize, ComponentsCrossedByTheSamePairsAreAlternatives) {
  // Two hosts on two leaves, one spine: every route crosses the same cables and the spine.
  Tree t = fat_tree(2, 1, 1);
  PairResult p;
  p.a = 0, p.b = 1, p.engine = "rdma", p.a_to_b_gbps = 30, p.b_to_a_gbps = 100;
  PairResult q = p;
  const Localization l = localize(t.s, hosts_of(t), {p, q}, 50);
  ASSERT_FALSE(l.suspects.empty());
  EXPECT_FALSE(l.suspects[0].alternatives.empty());
}

TEST(Localize, WithoutForwardingTablesItSaysHowToSaveThem) {
  Tree t = fat_tree(2, 1, 1);
  t.s.nodes[t.leaf[0]].lft.clear();
  const Localization l = localize(t.s, hosts_of(t), {}, 50);
  EXPECT_FALSE(l.attempted);
  EXPECT_NE(l.why_not.find("--routes"), std::string::npos);
}

TEST(Localize, UnplacedRanksAreNotedNotRouted) {
  Tree t = fat_tree(2, 2, 2);
  auto pairs = measure(t, [](const std::vector<Hop>&, int, int) { return false; });
  auto hosts = hosts_of(t);
  hosts[3] = HostPort{};
  const Localization l = localize(t.s, hosts, pairs, 50);
  EXPECT_EQ(l.unrouted, 6u);  // rank 3's three pairs, both directions
  ASSERT_FALSE(l.notes.empty());
  EXPECT_NE(l.notes.back().find("rank 3"), std::string::npos);
}

TEST(FindHost, PlacesByLidAndChecksTheNodeGuid) {
  Tree t = fat_tree(2, 1, 2);
  const auto& n = t.s.nodes[t.host[2]];
  std::string why;
  HostPort h = find_host(t.s, {{"mlx5_0:1", n.lid(), "", "ACTIVE"}}, "", &why);
  EXPECT_EQ(h.node, t.host[2]);
  EXPECT_EQ(h.port, 1);
  // The kernel's GUID format.
  char g[32];
  std::snprintf(g, sizeof g, "%04llx:%04llx:%04llx:%04llx", (unsigned long long)(n.guid >> 48) & 0xffff,
                (unsigned long long)(n.guid >> 32) & 0xffff, (unsigned long long)(n.guid >> 16) & 0xffff,
                (unsigned long long)n.guid & 0xffff);
  EXPECT_EQ(find_host(t.s, {{"mlx5_0:1", n.lid(), g, "ACTIVE"}}, "", &why).node, t.host[2]);
  h = find_host(t.s, {{"mlx5_0:1", n.lid(), "0x00000000deadbeef", "ACTIVE"}}, "", &why);
  EXPECT_EQ(h.node, -1);
  EXPECT_NE(why.find("0x00000000deadbeef"), std::string::npos) << why;
  h = find_host(t.s, {{"mlx5_0:1", t.s.nodes[t.leaf[0]].lid(), "", "ACTIVE"}}, "", &why);
  EXPECT_EQ(h.node, -1);
  EXPECT_NE(why.find("switch"), std::string::npos) << why;
  h = find_host(t.s, {{"mlx5_0:1", 999, "", "ACTIVE"}}, "", &why);
  EXPECT_EQ(h.node, -1);
  EXPECT_NE(why.find("not in the fabric"), std::string::npos) << why;
  h = find_host(t.s, {{"mlx5_0:1", n.lid(), "", "DOWN"}}, "", &why);
  EXPECT_EQ(h.node, -1);
  // The pair engine's port wins over the first ACTIVE one.
  const auto& m = t.s.nodes[t.host[3]];
  h = find_host(t.s, {{"mlx5_0:1", n.lid(), "", "ACTIVE"}, {"mlx5_1:1", m.lid(), "", "ACTIVE"}}, "mlx5_1:1", &why);
  EXPECT_EQ(h.node, t.host[3]);
}

TEST(Localize, JudgeRoutesThePairsThroughTheFabricAndReportsIt) {
  Tree t = fat_tree(4, 4, 4);
  const int spine = t.spine[0];
  ClusterInput in;
  in.launcher = "env";
  in.world = static_cast<int>(t.host.size());
  in.pairs.mode = PairsMode::All;
  in.pair_results = measure(t, [&](const std::vector<Hop>& h, int, int) { return visits(h, spine); });
  for (int r = 0; r < in.world; ++r) {
    NodeSummary n;
    n.rank = r;
    n.name = "node" + std::to_string(r);
    n.fabscope_version = FABSCOPE_VERSION;
    n.ib_ports.push_back({"mlx5_0:1", t.s.nodes[t.host[r]].lid(), "", "ACTIVE"});
    in.nodes.push_back(n);
  }
  in.fabric = std::make_shared<const Subnet>(t.s);
  const ClusterResult r = judge(in);
  ASSERT_TRUE(r.localization.attempted) << r.localization.why_not;
  bool found = false;
  for (const auto& f : r.findings) found |= f.id == "cluster.slow_switch" && f.subject == "spine0";
  EXPECT_TRUE(found);
  const json j = cluster_json(r);
  EXPECT_EQ(j["localization"]["suspects"][0]["name"], "spine0");
  EXPECT_EQ(j["nodes"][0]["ib_ports"][0]["port"], "mlx5_0:1");
}

// RoCE: 4 racks of 4 hosts, placed by their LLDP neighbour; every pair measured.
std::vector<TorPlace> racks() {
  std::vector<TorPlace> out;
  for (int t = 0; t < 4; ++t)
    for (int h = 0; h < 4; ++h) out.push_back({"tor" + std::to_string(t), "Ethernet" + std::to_string(h + 1)});
  return out;
}
template <class SlowFn>
std::vector<PairResult> measure_racks(SlowFn slow) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> noise(0.98, 1.02);
  std::vector<PairResult> out;
  for (int a = 0; a < 16; ++a)
    for (int b = a + 1; b < 16; ++b) {
      PairResult p;
      p.a = a, p.b = b, p.engine = "rdma";
      p.a_to_b_gbps = (slow(a, b) ? 30.0 : 100.0) * noise(rng);
      p.b_to_a_gbps = (slow(b, a) ? 30.0 : 100.0) * noise(rng);
      out.push_back(p);
    }
  return out;
}
Localization run_racks(const std::vector<PairResult>& pairs) {
  return localize_by_switch(racks(), pairs, direction_threshold(pairs));
}

TEST(LocalizeBySwitch, ARacksUplinksAreNamedWhenOnlyPairsLeavingOrEnteringItAreSlow) {
  auto l = run_racks(measure_racks([](int a, int b) { return (a / 4 == 2) != (b / 4 == 2); }));
  ASSERT_TRUE(l.attempted) << l.why_not;
  ASSERT_FALSE(l.suspects.empty());
  EXPECT_EQ(l.suspects[0].kind, SuspectKind::Uplinks);
  EXPECT_EQ(l.suspects[0].name, "tor2 uplinks");
  EXPECT_TRUE(l.suspects[0].both_directions);
  const auto f = localization_findings(l, {});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].id, "cluster.slow_fabric_link");
  EXPECT_NE(f[0].evidence.find("ECMP"), std::string::npos);
}

TEST(LocalizeBySwitch, ASwitchSlowForItsOwnRackTooIsTheSwitch) {
  auto l = run_racks(measure_racks([](int a, int b) { return a / 4 == 1 || b / 4 == 1; }));
  ASSERT_FALSE(l.suspects.empty());
  EXPECT_EQ(l.suspects[0].kind, SuspectKind::Switch);
  EXPECT_EQ(l.suspects[0].name, "tor1");
}

TEST(LocalizeBySwitch, ASlowHostIsItsCable) {
  auto l = run_racks(measure_racks([](int a, int b) { return a == 9 || b == 9; }));
  ASSERT_FALSE(l.suspects.empty());
  EXPECT_EQ(l.suspects[0].kind, SuspectKind::HostCable);
  EXPECT_EQ(l.suspects[0].host_rank, 9);
  EXPECT_EQ(l.suspects[0].name, "rank9 <-> tor2:Ethernet2");
}

TEST(LocalizeBySwitch, WithoutNeighboursItSaysWhy) {
  std::vector<TorPlace> none(16);
  auto l = localize_by_switch(none, measure_racks([](int, int) { return false; }), 50);
  EXPECT_FALSE(l.attempted);
  EXPECT_NE(l.why_not.find("LLDP"), std::string::npos);
  auto places = racks();
  places[5] = {};
  l = localize_by_switch(places, measure_racks([](int, int) { return false; }), 50);
  EXPECT_TRUE(l.attempted);
  EXPECT_EQ(l.unrouted, 30u);  // rank 5's 15 pairs, both directions
}

TEST(LocalizeBySwitch, JudgeGroupsRoceNodesByTheSwitchTheyReported) {
  ClusterInput in;
  in.launcher = "env";
  in.world = 16;
  in.pairs.mode = PairsMode::All;
  in.pair_results = measure_racks([](int a, int b) { return (a / 4 == 3) != (b / 4 == 3); });
  const auto places = racks();
  for (int r = 0; r < 16; ++r) {
    NodeSummary n;
    n.rank = r;
    n.name = "node" + std::to_string(r);
    n.fabscope_version = FABSCOPE_VERSION;
    n.tor_switch = places[static_cast<std::size_t>(r)].sw;
    n.tor_port = places[static_cast<std::size_t>(r)].port;
    in.nodes.push_back(n);
  }
  const ClusterResult r = judge(in);
  ASSERT_TRUE(r.localization.attempted) << r.localization.why_not;
  bool found = false;
  for (const auto& f : r.findings) found |= f.id == "cluster.slow_fabric_link" && f.subject == "tor3 uplinks";
  EXPECT_TRUE(found);
  const json j = cluster_json(r);
  EXPECT_EQ(j["nodes"][5]["tor_switch"], "tor1");
  EXPECT_EQ(j["localization"]["suspects"][0]["kind"], "uplinks");
}

TEST(LocalizeBySwitch, SummaryTakesTheSwitchOfTheRocePortsNetdevOrItsBondSlave) {
  NodeInfo node;
  RdmaDevice dev;
  dev.name = "mlx5_0";
  RdmaPort port;
  port.port = 1;
  port.state = "ACTIVE";
  port.link_layer = "Ethernet";
  port.netdev = "bond0";
  dev.ports.push_back(port);
  node.rdma_devices.push_back(dev);
  Bond b;
  b.name = "bond0";
  b.slaves.push_back(BondSlave{"ens1f0", "up", {}, "", {}, ""});
  node.bonds.push_back(b);
  Netdev slave;
  slave.name = "ens1f0";
  LldpNeighbor nb;
  nb.chassis_id = "e6:f0:a1:88:78:d5";  // no system name: the chassis id names the switch
  nb.port_id = "swp7";
  slave.lldp_neighbors.push_back(nb);
  node.netdevs.push_back(slave);
  const NodeSummary s = summarize_node(0, node, nullptr, {});
  EXPECT_EQ(s.tor_switch, "e6:f0:a1:88:78:d5");
  EXPECT_EQ(s.tor_port, "swp7");
  json j = s;
  EXPECT_EQ(summary_from_json(j).tor_port, "swp7");
}

}  // namespace
}  // namespace fabscope::cluster
