// The routing checks on forwarding tables written by hand: an up/down fat tree (quiet), a ring
// routed one way round (a credit loop), a line (none), tables with holes, loops and down ports
// (unreachable LIDs), and routes crowded on one uplink (unbalanced).
#include "fabric/route_checks.hpp"

#include <gtest/gtest.h>

#include "fabric_builders.hpp"
#include "fabric/judge.hpp"

using namespace fabscope;
using namespace fabscope::testing;

namespace {

void rc_set(Subnet& s, int sw, std::initializer_list<std::pair<int, int>> entries) {
  auto& lft = s.nodes[sw].lft;
  lft.assign(64, 0xff);
  for (auto [lid, port] : entries) lft[static_cast<std::size_t>(lid)] = static_cast<std::uint8_t>(port);
}

// The healthy leaf/spine fabric routed up/down: LIDs spine1 1, spine2 2, leaf1 3, leaf2 4, hca1-4 10-13.
Subnet updown_fabric() {
  Subnet s = healthy_fabric();
  rc_set(s, kLeaf.leaf1, {{1, 7}, {2, 8}, {3, 0}, {4, 7}, {10, 1}, {11, 2}, {12, 7}, {13, 8}});
  rc_set(s, kLeaf.leaf2, {{1, 7}, {2, 8}, {3, 7}, {4, 0}, {10, 7}, {11, 8}, {12, 1}, {13, 2}});
  rc_set(s, kLeaf.spine1, {{1, 0}, {2, 1}, {3, 1}, {4, 2}, {10, 1}, {11, 1}, {12, 2}, {13, 2}});
  rc_set(s, kLeaf.spine2, {{1, 1}, {2, 0}, {3, 1}, {4, 2}, {10, 1}, {11, 1}, {12, 2}, {13, 2}});
  return s;
}

// Four switches in a ring (port 2 to the next one's port 3), one HCA on port 1 of each; LIDs:
// switches 1-4, HCAs 11-14. clockwise: every route goes by port 2; otherwise the ring is cut
// between switch 3 and switch 0 and routes go along the line.
Subnet rc_ring(bool clockwise) {
  Subnet s;
  s.source = "test";
  for (int i = 0; i < 4; i++) add_node(s, NodeType::Switch, "ring" + std::to_string(i), 0x100 + i, 3, static_cast<std::uint16_t>(1 + i));
  for (int i = 0; i < 4; i++) add_node(s, NodeType::Hca, "h" + std::to_string(i) + " mlx5_0", 0x900 + 16 * i, 1, static_cast<std::uint16_t>(11 + i));
  for (int i = 0; i < 4; i++) connect(s, i, 1, 4 + i, 1);
  for (int i = 0; i < 4; i++)
    if (clockwise || i != 3) connect(s, i, 2, (i + 1) % 4, 3);
  for (int i = 0; i < 4; i++) {
    auto& lft = s.nodes[i].lft;
    lft.assign(32, 0xff);
    for (int j = 0; j < 4; j++) {
      std::uint8_t to = j == i ? 0 : clockwise ? 2 : (j > i ? 2 : 3);
      lft[static_cast<std::size_t>(1 + j)] = to;
      lft[static_cast<std::size_t>(11 + j)] = j == i ? 1 : to;
    }
  }
  s.rebuild_links();
  return s;
}

const Finding* rc_find(const std::vector<Finding>& fs, const std::string& id) {
  for (const auto& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

}  // namespace

TEST(RouteChecks, UpDownFatTreeIsQuiet) {
  auto s = updown_fabric();
  auto r = check_routes(s);
  ASSERT_TRUE(r.judged);
  EXPECT_EQ(r.switches, 4u);
  EXPECT_EQ(r.destinations, 8u);
  EXPECT_EQ(r.sources, 4u);
  EXPECT_EQ(r.loops_found, 0u);
  EXPECT_TRUE(r.unreachable.empty());
  EXPECT_GT(r.dependencies, 0u);
  RouteCheckOptions o;
  o.min_mean = 1;
  EXPECT_TRUE(check_routes(s, o).unbalanced.empty());
  EXPECT_TRUE(route_findings(s, r).empty());
  // Routes between HCA ports: leaf1's uplinks carry 2 routes each (2 sources x 1 destination).
  ASSERT_FALSE(r.busiest.empty());
  EXPECT_EQ(r.busiest.front().routes, 2u);
  // judge() runs the checks where the tables are there, and nothing is said of this fabric.
  auto all = judge(s, {});
  EXPECT_EQ(rc_find(all, "fabric.credit_loop"), nullptr);
  EXPECT_EQ(rc_find(all, "fabric.lid_unreachable"), nullptr);
  EXPECT_EQ(rc_find(all, "fabric.routes_unbalanced"), nullptr);
}

TEST(RouteChecks, NoTablesNoJudgement) {
  auto s = healthy_fabric();
  EXPECT_FALSE(check_routes(s).judged);
  EXPECT_TRUE(route_findings(s, check_routes(s)).empty());
}

TEST(RouteChecks, ARingRoutedOneWayIsACreditLoop) {
  auto s = rc_ring(true);
  auto r = check_routes(s);
  ASSERT_EQ(r.loops_found, 1u);
  ASSERT_EQ(r.loops.size(), 1u);
  EXPECT_EQ(r.loops[0].cycle.size(), 4u);
  EXPECT_EQ(r.loops[0].channels, 4u);
  for (const auto& c : r.loops[0].cycle) EXPECT_EQ(c.port, 2);
  EXPECT_TRUE(r.unreachable.empty());
  auto fs = route_findings(s, r);
  const auto* f = rc_find(fs, "fabric.credit_loop");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::Fail);
  EXPECT_NE(f->message.find("credit loop over 4 link(s): ring"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("ring0:2 -> ring1:3"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("ring3:2 -> ring0:3"), std::string::npos) << f->message;
  EXPECT_NE(f->evidence.find("routes to LID(s)"), std::string::npos);
  EXPECT_NE(f->docs.find("fabric-credit_loop"), std::string::npos) << f->docs;
  auto j = to_json(s, r);
  EXPECT_EQ(j["credit_loops"], 1);
  EXPECT_EQ(j["loops"][0]["cycle"].size(), 4u);
  // judge() says it too, first (a failure)
  auto all = judge(s, {});
  ASSERT_NE(rc_find(all, "fabric.credit_loop"), nullptr);
}

TEST(RouteChecks, TheSameRingCutIntoALineHasNoLoop) {
  auto s = rc_ring(false);
  auto r = check_routes(s);
  EXPECT_EQ(r.loops_found, 0u);
  EXPECT_TRUE(r.unreachable.empty()) << r.unreachable.front().why;
}

TEST(RouteChecks, UnreachableLidsNameTheSwitchesAndWhy) {
  auto s = updown_fabric();
  s.nodes[kLeaf.leaf2].lft[10] = 0xff;  // no entry
  auto r = check_routes(s);
  ASSERT_EQ(r.unreachable.size(), 1u);
  EXPECT_EQ(r.unreachable[0].lid, 10);
  EXPECT_EQ(r.unreachable[0].from_count, 1u);
  EXPECT_EQ(r.unreachable[0].why, "S-leaf2 has no entry for LID 10");
  auto fs = route_findings(s, r);
  const auto* f = rc_find(fs, "fabric.lid_unreachable");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("LID 10 (hca1 mlx5_0:1) cannot be reached from 1 of 4 switch(es)"), std::string::npos)
      << f->message;
  EXPECT_NE(f->evidence.find("unreachable from S-leaf2"), std::string::npos) << f->evidence;

  // A loop between leaf1 and spine1 for LID 12: every switch whose walk enters it.
  s = updown_fabric();
  s.nodes[kLeaf.spine1].lft[12] = 1;  // back down to leaf1, which sends it up to spine1
  r = check_routes(s);
  ASSERT_EQ(r.unreachable.size(), 1u);
  EXPECT_EQ(r.unreachable[0].lid, 12);
  EXPECT_EQ(r.unreachable[0].from_count, 2u);  // leaf1 and spine1; spine2 and leaf2 go their own way
  EXPECT_NE(r.unreachable[0].why.find("loop for LID 12"), std::string::npos) << r.unreachable[0].why;

  // Out of a port whose link is down.
  s = updown_fabric();
  s.nodes[kLeaf.leaf1].port(8)->info->state = PortState::Down;
  r = check_routes(s);
  ASSERT_FALSE(r.unreachable.empty());
  bool said = false;
  for (const auto& u : r.unreachable) said = said || u.why.find("to port 8, which is Down") != std::string::npos;
  EXPECT_TRUE(said);

  // Ends at the wrong HCA.
  s = updown_fabric();
  s.nodes[kLeaf.leaf2].lft[12] = 2;  // to hca4
  r = check_routes(s);
  ASSERT_FALSE(r.unreachable.empty());
  EXPECT_NE(r.unreachable[0].why.find("which does not own it"), std::string::npos) << r.unreachable[0].why;
}

TEST(RouteChecks, RoutesCrowdedOnOneUplinkAreUnbalanced) {
  auto s = updown_fabric();
  s.nodes[kLeaf.leaf1].lft[13] = 7;  // both remote HCAs by spine1
  RouteCheckOptions o;
  o.min_mean = 1;
  auto r = check_routes(s, o);
  // leaf1 sends both remote HCAs' routes up port 7; spine2, left with leaf2's routes to hca2
  // only, sends all it carries down one port too.
  ASSERT_EQ(r.unbalanced.size(), 2u);
  const SwitchLoad* leaf = nullptr;
  for (const auto& u : r.unbalanced)
    if (s.name(u.node) == "S-leaf1") leaf = &u;
  ASSERT_NE(leaf, nullptr);
  EXPECT_EQ(leaf->max_port, 7);
  EXPECT_EQ(leaf->max_routes, 4u);
  EXPECT_DOUBLE_EQ(leaf->ratio(), 2.0);
  auto fs = route_findings(s, r, o);
  bool named = false;
  for (const auto& f : fs)
    named = named || (f.id == "fabric.routes_unbalanced" &&
                      f.message.find("S-leaf1 sends 4 routes out of port 7, 2.0x the mean of its 2") != std::string::npos);
  EXPECT_TRUE(named);
  ASSERT_GE(r.busiest.size(), 2u);  // leaf1:7 and spine1:2 carry 4 each
  EXPECT_EQ(r.busiest[0].routes, 4u);
  EXPECT_EQ(r.busiest[1].routes, 4u);
  EXPECT_TRUE((r.busiest[0].channel.node == kLeaf.leaf1 && r.busiest[0].channel.port == 7) ||
              (r.busiest[1].channel.node == kLeaf.leaf1 && r.busiest[1].channel.port == 7));
  // Under the default minimum mean (4 routes a port) this small fabric is not judged.
  EXPECT_TRUE(check_routes(s).unbalanced.empty());
}

TEST(RouteChecks, TheHumanLinesFitAndNameWholePorts) {
  auto s = updown_fabric();
  s.nodes[kLeaf.leaf1].description = std::string(70, 'L');  // a long name: the pair goes on two lines
  auto text = render_route_check(s, check_routes(s));
  EXPECT_NE(text.find("Routing: 8 LIDs, 4 switches, 4 HCA ports sending"), std::string::npos) << text;
  EXPECT_NE(text.find("credit loops 0, LIDs unreachable from some switch 0, unbalanced switches 0"), std::string::npos);
  EXPECT_NE(text.find(std::string(70, 'L') + ":7"), std::string::npos) << text;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    EXPECT_LE(end - start, 100u) << text.substr(start, end - start);
    start = end + 1;
  }
  EXPECT_EQ(render_route_check(healthy_fabric(), check_routes(healthy_fabric())), "");
}
