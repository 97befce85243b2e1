// A saved `fabscope cluster --json` result read back (`cluster --from`): results of every fabscope
// since 0.1.0 (tests/fixtures/cluster-runs), the keys added to version 1 since then defaulting to
// "not reported", never to a value.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cluster/saved.hpp"
#include "cluster/saved_result.hpp"
#include "core/error.hpp"
#include "support/fixtures.hpp"

namespace fabscope::cluster {
namespace {

json fixture_json(const std::string& name) {
  std::ifstream in(fabscope::testing::fixture(name));
  std::stringstream s;
  s << in.rdbuf();
  return json::parse(s.str());
}

// fabscope 0.1.0 wrote no rdma_address/rdma_note, tor_switch/tor_port, ib_ports, nor an engine per
// pair: its one engine (tcp) measured them all, as pairwise.engine says.
TEST(SavedRun, ResultOfFabscope010_ReadsWithEveryPairOfItsOneEngine) {
  const SavedRun run = saved_run_from_json(fixture_json("cluster-runs/vm5-slow-node.json"));
  EXPECT_EQ(run.world, 5);
  EXPECT_EQ(run.engine, "tcp");
  ASSERT_EQ(run.nodes.size(), 5u);
  EXPECT_EQ(run.pairs.size(), 10u);
  for (const auto& p : run.pairs) EXPECT_EQ(p.engine, "tcp");
  for (const auto& n : run.nodes) {
    EXPECT_EQ(n.rdma_address, "") << n.name;  // no RDMA endpoint offered
    EXPECT_EQ(n.tor_switch, "") << n.name;    // unknown
    EXPECT_TRUE(n.ib_ports.empty()) << n.name;
  }
  EXPECT_FALSE(run.tor_reported);
  EXPECT_EQ(run.written_by, "0.1.0");
}

TEST(SavedRun, EveryClusterFixture_Reads) {
  for (const char* f : {"cluster-runs/vm5-slow-node.json", "cluster-runs/mpirun4-port-down.json",
                        "cluster-runs/mpirun4-mtu.json"})
    EXPECT_NO_THROW(saved_run_from_json(fixture_json(f))) << f;
}

// Without switch ports in the file, --from alone does not guess why (lldpd was not running):
// it says the file predates them.
TEST(SavedRun, ResultWithoutSwitchPorts_SaysItPredatesThemNotThatLldpdIsDown) {
  const Localization l = localize_saved(saved_run_from_json(fixture_json("cluster-runs/vm5-slow-node.json")));
  EXPECT_FALSE(l.attempted);
  EXPECT_NE(l.why_not.find("written by an earlier fabscope (version 0.1.0), before nodes reported their LLDP neighbour"), std::string::npos)
      << l.why_not;
}

// A pair that names its engine keeps it: only the judged engine's pairs are located.
TEST(SavedRun, PairNamingAnotherEngine_IsLeftOutOfTheJudgedOnes) {
  json doc = fixture_json("cluster-runs/vm5-slow-node.json");
  doc["pairwise"]["pairs"][0]["engine"] = "rdma";
  doc["pairwise"]["pairs"][1]["engine"] = "tcp";
  const SavedRun run = saved_run_from_json(doc);
  EXPECT_EQ(run.pairs.size(), 9u);
}

// An added key that is present is still checked.
TEST(SavedRun, AddedKeyOfTheWrongType_IsRefusedNamingIt) {
  json doc = fixture_json("cluster-runs/vm5-slow-node.json");
  doc["nodes"][2]["rdma_address"] = 5;
  try {
    saved_run_from_json(doc);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nodes[2].rdma_address"), std::string::npos) << e.what();
  }
}

// A rank twice among the nodes ("6 nodes" in a world of 3) or a pair twice (either way round)
// is not a run fabscope wrote: refused, naming where.
TEST(SavedRun, DuplicateRankOrPair_IsRefusedNamingIt) {
  auto error_of = [](const json& doc) -> std::string {
    try {
      saved_run_from_json(doc);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  json doc = fixture_json("cluster-runs/vm5-slow-node.json");
  json dup_node = doc;
  dup_node["nodes"].push_back(dup_node["nodes"][1]);
  EXPECT_NE(error_of(dup_node).find("field 'nodes[5].rank': 1 appears twice"), std::string::npos) << error_of(dup_node);
  json dup_pair = doc;
  json swapped = dup_pair["pairwise"]["pairs"][0];
  std::swap(swapped["a"], swapped["b"]);
  dup_pair["pairwise"]["pairs"][3] = swapped;
  EXPECT_NE(error_of(dup_pair).find("pairwise.pairs[3].a/b"), std::string::npos) << error_of(dup_pair);
  EXPECT_NE(error_of(dup_pair).find("appears twice"), std::string::npos) << error_of(dup_pair);
  json too_many = doc;
  for (int i = 0; i < 11; ++i) too_many["pairwise"]["pairs"].push_back(doc["pairwise"]["pairs"][0]);
  EXPECT_NE(error_of(too_many).find("more than a world of 5 has"), std::string::npos) << error_of(too_many);
  EXPECT_EQ(error_of(doc), "");
}

// A RoCE run locates by LLDP neighbours: its suspects (a switch's uplinks, the switch, a host's
// cable) carry no node index into a fabric file, and read back without one.
TEST(SavedResult, SuspectsPlacedByLldp_ReadWithoutNodeIndexes) {
  json doc = fixture_json("cluster-runs/vm5-slow-node.json");
  doc["localization"] = json::parse(R"({"attempted": true, "why_not": "", "fabric_source": "LLDP neighbours",
      "threshold_gbps": 5.0, "observations": 20, "slow": 8, "fast": 12, "unrouted": 0, "unexplained": 0,
      "suspects": [{"kind": "uplinks", "name": "tor1 uplinks", "both_directions": true, "explained": 8,
                    "slow_crossing": 8, "fast_crossing": 0, "alternatives": [], "examples": []},
                   {"kind": "switch", "name": "tor1", "explained": 0, "slow_crossing": 8, "fast_crossing": 0,
                    "alternatives": [], "examples": []},
                   {"kind": "host_cable", "name": "tor1:7 - node2", "both_directions": false, "host_rank": 2,
                    "explained": 0, "slow_crossing": 4, "fast_crossing": 0, "alternatives": [], "examples": []}],
      "notes": []})");
  const SavedResult r = saved_result_from_json("r.json", doc);
  ASSERT_EQ(r.localization.suspects.size(), 3u);
  EXPECT_EQ(r.localization.suspects[0].kind, "uplinks");
  EXPECT_EQ(r.localization.suspects[0].a_node, -1);
  EXPECT_EQ(r.localization.suspects[1].a_node, -1);
  EXPECT_EQ(r.localization.suspects[2].host_rank, 2);
  EXPECT_NO_THROW(saved_run_from_json(doc));
  doc["localization"]["suspects"][0]["kind"] = "router";
  try {
    (void)saved_result_from_json("r.json", doc);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "r.json: field 'localization.suspects[0].kind': expected cable, host_cable, switch or uplinks, got \"router\"");
  }
}

}  // namespace
}  // namespace fabscope::cluster
