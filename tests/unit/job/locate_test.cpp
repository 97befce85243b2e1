// A job's slow connections located in a real saved sweep: tests/fixtures/fabric-ibsim-routes (two
// leaves, two spines, six single-HCA hosts H-node1..6, OpenSM's forwarding tables). One rank per
// host, every rank sending to every other; the connections whose route crosses a chosen cable
// direction, or leave a chosen host, are slow.
#include "job/locate.hpp"

#include <gtest/gtest.h>

#include <functional>

#include "core/error.hpp"
#include "fabric/routes.hpp"

using namespace fabscope;
using namespace fabscope::job;

namespace {

const std::string kFabric = std::string(FABSCOPE_TEST_FIXTURES) + "/fabric-ibsim-routes/fabric.json";

int node_named(const fabric::Subnet& s, const std::string& desc) {
  for (std::size_t i = 0; i < s.nodes.size(); ++i)
    if (s.nodes[i].description == desc) return static_cast<int>(i);
  ADD_FAILURE() << "no node " << desc;
  return -1;
}

using SlowFn = std::function<bool(const std::vector<fabric::Hop>&, int from, int to)>;

// Ranks 0..5 on H-node1..6 (host names in lower case and with a domain: placing compares the
// first label, case-insensitively). Connections: every ordered pair, 100 Gb/s, slow ones 20.
Analysis job_over(const fabric::Subnet& s, const SlowFn& slow, int slow_from = -1, int slow_to = -1) {
  CommView v;
  v.job_id = "j1";
  v.comm = "00000000c0ffee00";
  v.nranks = 6;
  for (int r = 0; r < 6; ++r) {
    RankStat st;
    st.rank = r;
    st.host = "h-node" + std::to_string(r + 1) + ".cluster.example";
    st.gpu = 0;
    v.ranks.push_back(st);
  }
  for (int a = 0; a < 6; ++a)
    for (int b = 0; b < 6; ++b) {
      if (a == b) continue;
      const int src = node_named(s, "H-node" + std::to_string(a + 1));
      const int dst = node_named(s, "H-node" + std::to_string(b + 1));
      const auto hops = fabric::route_from_lfts(s, src, 1, s.nodes[static_cast<std::size_t>(dst)].lid());
      Connection c;
      c.from = a;
      c.to = b;
      c.steps = 1000;
      c.bytes = 1000ull << 20;
      const bool is_slow = slow(hops, a, b);
      c.gbps = is_slow ? 20 : 100;
      c.per_step_ns = 8.0 * static_cast<double>(c.bytes) / c.gbps / static_cast<double>(c.steps);
      v.connections.push_back(c);
      if (is_slow && slow_from < 0) slow_from = a, slow_to = b;
    }
  v.slow_from = slow_from;
  v.slow_to = slow_to;
  Analysis an;
  an.comms.push_back(v);
  return an;
}

bool crosses(const std::vector<fabric::Hop>& hops, int node, int out_port) {
  for (const auto& h : hops)
    if (h.node == node && h.out_port == out_port) return true;
  return false;
}

TEST(JobLocate, NamesTheFabricCableTheSlowConnectionsCross) {
  const auto s = fabric::load_subnet(kFabric);
  const int leaf1 = node_named(s, "S-leaf1");
  // leaf1's port 7 goes up to S-spine1: slow in that direction only.
  const auto an = job_over(s, [&](const auto& hops, int, int) { return crosses(hops, leaf1, 7); });
  std::size_t slow = 0;
  for (const auto& c : an.comms[0].connections) slow += c.gbps < 50;
  ASSERT_GE(slow, 2u) << "the fixture routes some connections through S-leaf1:7";
  const auto located = locate(s, an, {}, Options{});
  ASSERT_EQ(located.size(), 1u);
  const auto& l = located[0].localization;
  ASSERT_TRUE(l.attempted) << l.why_not;
  EXPECT_EQ(l.slow, slow);
  EXPECT_EQ(l.unrouted, 0u);
  ASSERT_FALSE(l.suspects.empty());
  EXPECT_EQ(l.suspects[0].name, "S-leaf1:7 -> S-spine1:1");
  EXPECT_EQ(l.suspects[0].explained, slow);
  const auto f = located_findings(located);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].id, "job.slow_path");
  EXPECT_NE(f[0].message.find("the cable S-leaf1:7 -> S-spine1:1 (this direction)"), std::string::npos) << f[0].message;
  EXPECT_NE(f[0].evidence.find("h-node"), std::string::npos) << f[0].evidence;
  const json j = located_json(located);
  EXPECT_EQ(j[0]["localization"]["suspects"][0]["kind"], "cable");
}

TEST(JobLocate, NamesAHostCableWhenOneHostsSendsAreSlow) {
  const auto s = fabric::load_subnet(kFabric);
  const auto an = job_over(s, [&](const auto&, int from, int) { return from == 2; });  // H-node3
  const auto located = locate(s, an, {}, Options{});
  ASSERT_EQ(located.size(), 1u);
  const auto& l = located[0].localization;
  ASSERT_FALSE(l.suspects.empty());
  EXPECT_EQ(l.suspects[0].kind, cluster::SuspectKind::HostCable);
  EXPECT_EQ(l.suspects[0].name, "H-node3:1 -> S-leaf1:3");
  const auto f = located_findings(located);
  ASSERT_FALSE(f.empty());
  EXPECT_NE(f[0].message.find("the host cable H-node3:1 -> S-leaf1:3"), std::string::npos) << f[0].message;
}

TEST(JobLocate, OnlyCommunicatorsWithASlowConnectionAreLocated) {
  const auto s = fabric::load_subnet(kFabric);
  auto an = job_over(s, [](const auto&, int, int) { return false; });
  EXPECT_TRUE(locate(s, an, {}, Options{}).empty());
}

TEST(JobLocate, ConnectionsInsideOneHostAreLeftOut) {
  const auto s = fabric::load_subnet(kFabric);
  const int leaf1 = node_named(s, "S-leaf1");
  auto an = job_over(s, [&](const auto& hops, int, int) { return crosses(hops, leaf1, 7); });
  // Rank 6 shares rank 0's host; its connection to rank 0 is fast, the one crossing nothing.
  auto& v = an.comms[0];
  v.nranks = 7;
  RankStat st;
  st.rank = 6;
  st.host = "H-NODE1";
  st.gpu = 1;
  v.ranks.push_back(st);
  Connection c;
  c.from = 6, c.to = 0, c.steps = 1000, c.bytes = 1, c.gbps = 0.001, c.per_step_ns = 1e9;
  v.connections.push_back(c);  // a "slow" loopback connection: never the fabric's
  const auto located = locate(s, an, {}, Options{});
  ASSERT_EQ(located.size(), 1u);
  const auto& l = located[0].localization;
  ASSERT_FALSE(l.suspects.empty());
  EXPECT_EQ(l.suspects[0].name, "S-leaf1:7 -> S-spine1:1");
  EXPECT_EQ(l.observations, 30u);
}

TEST(JobLocate, AHostWithSeveralHcasNeedsRails) {
  const auto original = fabric::load_subnet(kFabric);
  const int leaf1 = node_named(original, "S-leaf1");
  auto an = job_over(original, [&](const auto& hops, int, int) { return crosses(hops, leaf1, 7); });
  // H-node1 and H-node2 become one host with two HCAs.
  auto s = original;
  s.nodes[static_cast<std::size_t>(node_named(s, "H-node1"))].description = "H-node1 mlx5_0";
  s.nodes[static_cast<std::size_t>(node_named(s, "H-node2"))].description = "H-node1 mlx5_1";
  auto& v = an.comms[0];
  v.ranks[1].host = "H-node1";  // rank 1 (was H-node2) on GPU 1 of H-node1
  v.ranks[1].gpu = 1;
  {
    const auto located = locate(s, an, {}, Options{});
    ASSERT_EQ(located.size(), 1u);
    const auto& l = located[0].localization;
    EXPECT_GT(l.unrouted, 0u);
    ASSERT_FALSE(l.notes.empty());
    EXPECT_NE(l.notes[0].find("host H-node1 has 2 HCAs in the fabric (mlx5_0,mlx5_1)"), std::string::npos) << l.notes[0];
    EXPECT_NE(l.notes[0].find("--rails"), std::string::npos);
  }
  const auto located = locate(s, an, parse_rails("0=mlx5_0,1=mlx5_1"), Options{});
  const auto& l = located[0].localization;
  EXPECT_EQ(l.unrouted, 0u);
  ASSERT_FALSE(l.suspects.empty());
  EXPECT_EQ(l.suspects[0].name, "S-leaf1:7 -> S-spine1:1");
}

TEST(JobLocate, AHostNotInTheFabricIsANote) {
  const auto s = fabric::load_subnet(kFabric);
  const int leaf1 = node_named(s, "S-leaf1");
  auto an = job_over(s, [&](const auto& hops, int, int) { return crosses(hops, leaf1, 7); });
  an.comms[0].ranks[5].host = "elsewhere";
  const auto located = locate(s, an, {}, Options{});
  const auto& l = located[0].localization;
  ASSERT_FALSE(l.notes.empty());
  EXPECT_NE(l.notes[0].find("host elsewhere has no HCA in the fabric"), std::string::npos) << l.notes[0];
  EXPECT_EQ(l.unrouted, 10u);  // rank 5's five connections each way
}

TEST(JobLocate, TooFewConnectionsSaySo) {
  const auto s = fabric::load_subnet(kFabric);
  const int leaf1 = node_named(s, "S-leaf1");
  auto an = job_over(s, [&](const auto& hops, int, int) { return crosses(hops, leaf1, 7); });
  an.comms[0].connections.resize(2);
  an.comms[0].slow_from = an.comms[0].connections[0].from;
  const auto located = locate(s, an, {}, Options{});
  ASSERT_EQ(located.size(), 1u);
  EXPECT_FALSE(located[0].localization.attempted);
  EXPECT_NE(located[0].localization.why_not.find("fewer than 3"), std::string::npos);
  EXPECT_TRUE(located_findings(located).empty());
}

TEST(JobLocate, RailsAreCheckedAndErrorsNameTheEntry) {
  EXPECT_EQ(parse_rails("0=mlx5_0, 1=mlx5_1").at(1), "mlx5_1");
  auto fails = [](const std::string& text, const std::string& want) {
    try {
      parse_rails(text);
      ADD_FAILURE() << text << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  };
  fails("", "empty");
  fails("0", "'0' is not GPU=HCA");
  fails("x=mlx5_0", "'x' in 'x=mlx5_0' is not a GPU index");
  fails("1234=mlx5_0", "not a GPU index");
  fails("0=mlx5 0", "not an HCA name");
  fails("0=a,0=b", "GPU 0 is named twice");
}

}  // namespace
