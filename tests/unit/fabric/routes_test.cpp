// Routes computed from saved forwarding tables (src/fabric/routes.cpp) on hand-built subnets:
// the healthy leaf/spine fabric of fabric_builders.hpp with the LFTs an SM would program, and one
// change per test where the route must break with the node and the LID named.
#include <gtest/gtest.h>

#include <initializer_list>
#include <utility>

#include "core/error.hpp"
#include "fabric_builders.hpp"
#include "fabric/routes.hpp"

using namespace fabscope;
using namespace fabscope::testing;

namespace {

constexpr std::uint16_t kLidCount = 32;

void set_lft(Subnet& s, int node, std::initializer_list<std::pair<int, int>> entries) {
  auto& lft = s.nodes[node].lft;
  lft.assign(kLidCount, 0xff);
  for (auto [lid, port] : entries) lft[lid] = static_cast<std::uint8_t>(port);
}

// healthy_fabric() (spines LID 1-2, leaves 3-4, hca1-4 LIDs 10-13) and hca5, two ports: port 1
// (LID 20) on S-leaf1 port 3, port 2 (LID 21) on S-leaf2 port 3. Up through spine1 from leaf1,
// through spine2 from leaf2.
struct Routed {
  Subnet s;
  int hca5;
};

Routed routed_fabric() {
  Routed r{healthy_fabric(), 0};
  Subnet& s = r.s;
  r.hca5 = add_node(s, NodeType::Hca, "hca5 mlx5_0", 0xe000, 2, 20);
  connect(s, r.hca5, 1, kLeaf.leaf1, 3);
  connect(s, r.hca5, 2, kLeaf.leaf2, 3);
  set_lft(s, kLeaf.leaf1, {{3, 0}, {10, 1}, {11, 2}, {20, 3}, {12, 7}, {13, 7}, {21, 7}, {1, 7}, {2, 8}, {4, 7}});
  set_lft(s, kLeaf.leaf2, {{4, 0}, {12, 1}, {13, 2}, {21, 3}, {10, 8}, {11, 8}, {20, 8}, {1, 7}, {2, 8}, {3, 8}});
  set_lft(s, kLeaf.spine1, {{1, 0}, {3, 1}, {10, 1}, {11, 1}, {20, 1}, {4, 2}, {12, 2}, {13, 2}, {21, 2}, {2, 1}});
  set_lft(s, kLeaf.spine2, {{2, 0}, {3, 1}, {10, 1}, {11, 1}, {20, 1}, {4, 2}, {12, 2}, {13, 2}, {21, 2}, {1, 1}});
  s.rebuild_links();
  return r;
}

std::vector<Hop> hops(std::initializer_list<Hop> h) { return h; }

// The message of the Error that computing the route throws ("" when it computes).
std::string error_of(const Subnet& s, int src, int src_port, std::uint16_t lid) {
  try {
    (void)route_from_lfts(s, src, src_port, lid);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

namespace fabscope::fabric {
// For EXPECT_EQ on routes (found by argument-dependent lookup, so in Hop's namespace).
static bool operator==(const Hop& a, const Hop& b) {
  return a.node == b.node && a.in_port == b.in_port && a.out_port == b.out_port;
}
static void PrintTo(const Hop& h, std::ostream* os) {
  *os << "{" << h.node << "," << h.in_port << "," << h.out_port << "}";
}
}  // namespace fabscope::fabric

TEST(FabricRoutes, HcaToHcaAcrossTheSpinesFollowsEachSwitchsTable) {
  const Subnet s = routed_fabric().s;
  EXPECT_EQ(route_from_lfts(s, kLeaf.hca1, 0, 12),
            hops({{kLeaf.hca1, 0, 1}, {kLeaf.leaf1, 1, 7}, {kLeaf.spine1, 1, 2}, {kLeaf.leaf2, 7, 1}, {kLeaf.hca3, 1, 0}}));
  // The way back goes up through spine2: each switch's own table, not the reverse path.
  EXPECT_EQ(route_from_lfts(s, kLeaf.hca3, 0, 10),
            hops({{kLeaf.hca3, 0, 1}, {kLeaf.leaf2, 1, 8}, {kLeaf.spine2, 2, 1}, {kLeaf.leaf1, 8, 1}, {kLeaf.hca1, 1, 0}}));
}

TEST(FabricRoutes, HcaToHcaOnOneLeafAndToItself) {
  const Subnet s = routed_fabric().s;
  EXPECT_EQ(route_from_lfts(s, kLeaf.hca1, 0, 11), hops({{kLeaf.hca1, 0, 1}, {kLeaf.leaf1, 1, 2}, {kLeaf.hca2, 1, 0}}));
  EXPECT_EQ(route_from_lfts(s, kLeaf.hca1, 0, 10), hops({{kLeaf.hca1, 0, 0}}));
}

TEST(FabricRoutes, MultiPortHcaLeavesByTheGivenPort) {
  const Routed r = routed_fabric();
  EXPECT_EQ(route_from_lfts(r.s, r.hca5, 1, 12),
            hops({{r.hca5, 0, 1}, {kLeaf.leaf1, 3, 7}, {kLeaf.spine1, 1, 2}, {kLeaf.leaf2, 7, 1}, {kLeaf.hca3, 1, 0}}));
  EXPECT_EQ(route_from_lfts(r.s, r.hca5, 2, 12), hops({{r.hca5, 0, 2}, {kLeaf.leaf2, 3, 1}, {kLeaf.hca3, 1, 0}}));
  // 0: the first Active port with a link.
  EXPECT_EQ(route_from_lfts(r.s, r.hca5, 0, 12), route_from_lfts(r.s, r.hca5, 1, 12));
  // Into a multi-port HCA: the port that holds the LID.
  EXPECT_EQ(route_from_lfts(r.s, kLeaf.hca3, 0, 21), hops({{kLeaf.hca3, 0, 1}, {kLeaf.leaf2, 1, 3}, {r.hca5, 2, 0}}));
}

// Issue 45: the two ports of a dual-port HCA, each cabled to its own leaf, were one node to the
// walk, and a route from one to the other had no hop. ibtracert crosses both leaves and a spine.
TEST(FabricRoutes, OnePortOfADualPortHcaToTheOtherCrossesTheFabric) {
  const Routed r = routed_fabric();
  EXPECT_EQ(route_from_lfts(r.s, r.hca5, 1, 21),
            hops({{r.hca5, 0, 1}, {kLeaf.leaf1, 3, 7}, {kLeaf.spine1, 1, 2}, {kLeaf.leaf2, 7, 3}, {r.hca5, 2, 0}}));
  EXPECT_EQ(route_from_lfts(r.s, r.hca5, 2, 20),
            hops({{r.hca5, 0, 2}, {kLeaf.leaf2, 3, 8}, {kLeaf.spine2, 2, 1}, {kLeaf.leaf1, 8, 3}, {r.hca5, 1, 0}}));
  // From the node (port 0 = its first Active port, port 1) to its other port's LID: the same.
  EXPECT_EQ(route_from_lfts(r.s, r.hca5, 0, 21), route_from_lfts(r.s, r.hca5, 1, 21));
  // A port's own LID is the one route without a link, from the port or from the node.
  EXPECT_EQ(route_from_lfts(r.s, r.hca5, 1, 20), hops({{r.hca5, 0, 0}}));
  EXPECT_EQ(route_from_lfts(r.s, r.hca5, 2, 21), hops({{r.hca5, 0, 0}}));
  EXPECT_EQ(route_from_lfts(r.s, r.hca5, 0, 20), hops({{r.hca5, 0, 0}}));
  // The live walk (a lookup per switch) takes the same path.
  auto lookup = [&r](int node, std::uint16_t lid) -> int { return r.s.nodes[node].lft[lid]; };
  EXPECT_EQ(walk_route(r.s, r.hca5, 1, 21, lookup, "test"), route_from_lfts(r.s, r.hca5, 1, 21));
}

TEST(FabricRoutes, RouteEnteringAnHcaByThePortNotHoldingTheLidIsNamed) {
  Subnet s = routed_fabric().s;
  s.nodes[kLeaf.leaf1].lft[21] = 3;  // LID 21 is hca5's port 2, on leaf2; leaf1:3 is its port 1
  EXPECT_EQ(error_of(s, kLeaf.hca1, 0, 21),
            "route to LID 21 ends at hca5 mlx5_0 (0x000000000000e000) port 1, which does not own that LID "
            "(port 2 does)");
}

TEST(FabricRoutes, SourcePortThatIsDownOrAbsentIsNamed) {
  Routed r = routed_fabric();
  port_of(r.s, r.hca5, 2).info->state = PortState::Down;
  EXPECT_NE(error_of(r.s, r.hca5, 2, 12).find("hca5 mlx5_0 (0x000000000000e000) port 2 is not Active with a link "
                                              "(route to LID 12)"),
            std::string::npos)
      << error_of(r.s, r.hca5, 2, 12);
  EXPECT_NE(error_of(r.s, r.hca5, 3, 12).find("hca5 mlx5_0 (0x000000000000e000) has no port 3"), std::string::npos);
  port_of(r.s, r.hca5, 1).info->state = PortState::Down;
  EXPECT_NE(error_of(r.s, r.hca5, 0, 12).find("hca5 mlx5_0 (0x000000000000e000) has no Active port with a link"),
            std::string::npos)
      << error_of(r.s, r.hca5, 0, 12);
}

TEST(FabricRoutes, SwitchSourceStartsAtItself) {
  const Subnet s = routed_fabric().s;
  EXPECT_EQ(route_from_lfts(s, kLeaf.leaf2, 0, 10),
            hops({{kLeaf.leaf2, 0, 8}, {kLeaf.spine2, 2, 1}, {kLeaf.leaf1, 8, 1}, {kLeaf.hca1, 1, 0}}));
  EXPECT_EQ(route_from_lfts(s, kLeaf.leaf2, 0, 4), hops({{kLeaf.leaf2, 0, 0}}));
  EXPECT_EQ(route_from_lfts(s, kLeaf.leaf2, 5, 4), hops({{kLeaf.leaf2, 0, 0}}));  // a switch's src_port is not used
}

TEST(FabricRoutes, HcaToSwitchEndsAtTheSwitchsPortZero) {
  const Subnet s = routed_fabric().s;
  EXPECT_EQ(route_from_lfts(s, kLeaf.hca1, 0, 4),
            hops({{kLeaf.hca1, 0, 1}, {kLeaf.leaf1, 1, 7}, {kLeaf.spine1, 1, 2}, {kLeaf.leaf2, 7, 0}}));
  EXPECT_EQ(route_from_lfts(s, kLeaf.hca1, 0, 3), hops({{kLeaf.hca1, 0, 1}, {kLeaf.leaf1, 1, 0}}));
}

TEST(FabricRoutes, LoopIsNamedAtTheSwitchReachedTwice) {
  Subnet s = routed_fabric().s;
  s.nodes[kLeaf.spine1].lft[12] = 1;  // back down to leaf1, which sends it up again
  const std::string e = error_of(s, kLeaf.hca1, 0, 12);
  EXPECT_NE(e.find("route to LID 12 loops back to switch S-leaf1 (0x0000000000003000)"), std::string::npos) << e;
}

TEST(FabricRoutes, NoEntryIsNamedWithTheSwitchAndTheLid) {
  Subnet s = routed_fabric().s;
  s.nodes[kLeaf.spine1].lft[12] = 0xff;
  EXPECT_EQ(error_of(s, kLeaf.hca1, 0, 12),
            "route to LID 12 breaks at switch S-spine1 (0x0000000000001000): no forwarding entry for that LID");
  // A LID beyond the saved table (above LinearFDBTop) has no entry either.
  EXPECT_NE(error_of(s, kLeaf.hca1, 0, 40).find("route to LID 40 breaks at switch S-leaf1 (0x0000000000003000): no "
                                                "forwarding entry"),
            std::string::npos);
}

TEST(FabricRoutes, DownPortPortWithoutLinkAndAbsentPortAreNamed) {
  Subnet s = routed_fabric().s;
  port_of(s, kLeaf.leaf1, 7).info->state = PortState::Down;
  EXPECT_EQ(error_of(s, kLeaf.hca1, 0, 12),
            "route to LID 12 breaks at switch S-leaf1 (0x0000000000003000): it forwards to port 7, which is down");
  s = routed_fabric().s;
  s.nodes[kLeaf.leaf1].lft[12] = 5;  // Active in no test fabric: down, unlinked
  EXPECT_NE(error_of(s, kLeaf.hca1, 0, 12).find("it forwards to port 5, which is down"), std::string::npos);
  port_of(s, kLeaf.leaf1, 5).info = active_info();
  EXPECT_NE(error_of(s, kLeaf.hca1, 0, 12).find("it forwards to port 5, which has no link"), std::string::npos);
  s.nodes[kLeaf.leaf1].lft[12] = 40;
  EXPECT_NE(error_of(s, kLeaf.hca1, 0, 12).find("it forwards to port 40, which the switch does not have"),
            std::string::npos);
}

TEST(FabricRoutes, SwitchWithoutSavedTableIsNamed) {
  Subnet s = routed_fabric().s;
  s.nodes[kLeaf.spine1].lft.clear();
  EXPECT_EQ(error_of(s, kLeaf.hca1, 0, 12),
            "route to LID 12: switch S-spine1 (0x0000000000001000) has no saved forwarding table (sweep with --routes)");
  EXPECT_FALSE(has_routes(s));
  // A route that does not cross it still computes.
  EXPECT_EQ(route_from_lfts(s, kLeaf.hca1, 0, 11).size(), 3u);
}

TEST(FabricRoutes, RouteEndingAtANodeNotOwningTheLidIsNamed) {
  Subnet s = routed_fabric().s;
  s.nodes[kLeaf.leaf2].lft[12] = 2;  // to hca4, which holds LID 13
  EXPECT_EQ(error_of(s, kLeaf.hca1, 0, 12),
            "route to LID 12 ends at hca4 mlx5_0 (0x000000000000d000), which does not own that LID");
}

TEST(FabricRoutes, MoreThan64HopsIsAnErrorNotAHang) {
  // A chain of 70 switches, each forwarding LID 500 to the next: no loop, just too long.
  Subnet s;
  const int n = 70;
  for (int i = 0; i < n; ++i) add_node(s, NodeType::Switch, "S-" + std::to_string(i), 0x100 + i, 2, 100 + i);
  for (int i = 0; i + 1 < n; ++i) connect(s, i, 2, i + 1, 1);
  for (int i = 0; i < n; ++i) {
    s.nodes[i].lft.assign(501, 0xff);
    s.nodes[i].lft[500] = 2;
  }
  const std::string e = error_of(s, 0, 0, 500);
  EXPECT_NE(e.find("route to LID 500 is longer than 64 hops (the last switch reached: S-64"), std::string::npos) << e;
}

TEST(FabricRoutes, BadArgumentsAreErrors) {
  const Subnet s = routed_fabric().s;
  EXPECT_NE(error_of(s, 99, 0, 12).find("route_from_lfts: node index 99 is not in the subnet"), std::string::npos);
  EXPECT_NE(error_of(s, -1, 0, 12).find("node index -1"), std::string::npos);
  EXPECT_NE(error_of(s, kLeaf.hca1, 0, 0).find("destination LID 0 is not a unicast LID"), std::string::npos);
  EXPECT_NE(error_of(s, kLeaf.hca1, 0, 0xc000).find("destination LID 49152 is not a unicast LID"), std::string::npos);
  EXPECT_NE(error_of(s, kLeaf.hca1, 300, 12).find("source port 300"), std::string::npos);
}

TEST(FabricRoutes, HasRoutesWhenEverySwitchHasATable) {
  EXPECT_FALSE(has_routes(healthy_fabric()));
  EXPECT_TRUE(has_routes(routed_fabric().s));
  EXPECT_FALSE(has_routes(Subnet{}));
  Subnet back_to_back;  // two HCAs cabled together: nothing to forward, every route known
  add_node(back_to_back, NodeType::Hca, "a", 0x10, 1, 1);
  add_node(back_to_back, NodeType::Hca, "b", 0x20, 1, 2);
  connect(back_to_back, 0, 1, 1, 1);
  EXPECT_TRUE(has_routes(back_to_back));
  EXPECT_EQ(route_from_lfts(back_to_back, 0, 0, 2), hops({{0, 0, 1}, {1, 1, 0}}));
}

TEST(FabricRoutes, WalkAsksTheLookupForEachSwitchOnTheWay) {
  const Subnet s = routed_fabric().s;
  std::vector<int> asked;
  auto lookup = [&](int node, std::uint16_t lid) -> int {
    asked.push_back(node);
    return s.nodes[node].lft[lid];
  };
  EXPECT_EQ(walk_route(s, kLeaf.hca1, 0, 12, lookup, "test"), route_from_lfts(s, kLeaf.hca1, 0, 12));
  EXPECT_EQ(asked, (std::vector<int>{kLeaf.leaf1, kLeaf.spine1, kLeaf.leaf2}));
  auto broken = [](int, std::uint16_t) -> int { throw Error("table unreadable"); };
  EXPECT_THROW(walk_route(s, kLeaf.hca1, 0, 12, broken, "test"), Error);
}
