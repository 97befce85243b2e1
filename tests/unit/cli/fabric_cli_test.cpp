// `fabscope fabric` as a user runs it, offline: a saved sweep (tests/fixtures/fabric-leaf-spine,
// a test input in the schema) judged with --from, against --expect, with --thresholds; bad files
// named; --save and --json read back; the route's name resolution. No fabric is touched.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/json.hpp"
#include "support/cli_run.hpp"
#include "support/fixtures.hpp"

using fabscope::json;
using fabscope::testing::fixture;
using fabscope::testing::quote;
using fabscope::testing::run_fabscope;
using fabscope::testing::TempDir;
using fabscope::testing::write_file;

namespace {

std::string sweep() { return (fixture("fabric-leaf-spine") / "fabric.json").string(); }
// Saved by `fabric --routes --save` on the simulator: every switch's forwarding table.
std::string routed_sweep() { return (fixture("fabric-ibsim-routes") / "fabric.json").string(); }

json sweep_json() {
  std::ifstream in(sweep());
  return json::parse(in);
}

// Writes a variant of the saved sweep into dir and returns its path.
std::string variant(const TempDir& dir, const std::string& name, const json& j) {
  write_file(dir.path(), name, j.dump(1));
  return (dir.path() / name).string();
}

json& port(json& j, int node, int index) { return j["nodes"][node]["ports"][index]; }

using fabscope::testing::expect_fits_100_columns;

}  // namespace

TEST(FabricCli, HelpShowsExamplesExitCodesAndTheRoute) {
  auto r = run_fabscope("fabric --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("fabscope fabric --expect fabric-ok.json"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Exit codes: 0 nothing above info"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--thresholds FILE"), std::string::npos);
  expect_fits_100_columns(r.out);
  r = run_fabscope("fabric route --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Usage: fabscope fabric route"), std::string::npos) << r.out;
  expect_fits_100_columns(r.out);
}

TEST(FabricCli, SavedHealthySweepExitsZeroWithOneInfoPerTier) {
  auto r = run_fabscope("fabric --from " + quote(sweep()));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("4 switches, 4 HCAs, 0 routers; 8 links (8 active)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("SM H-node1 mlx5_0 lid 1 MASTER priority 15"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 finding(s): 0 fail, 0 warn, 2 info"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Problem links"), std::string::npos) << r.out;
  expect_fits_100_columns(r.out);
}

TEST(FabricCli, DegradedLinkIsAProblemLinkAndExitsOne) {
  TempDir dir;
  json j = sweep_json();
  // S-leaf1 (node 1) port 7 <-> S-spine1 (node 3) port 1, trained at 1X.
  port(j, 1, 7)["info"]["width_active"] = 1;
  port(j, 3, 1)["info"]["width_active"] = 1;
  auto r = run_fabscope("fabric --from " + quote(variant(dir, "narrow.json", j)));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("Problem links (1):"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("S-leaf1:7 <-> S-spine1:1"), std::string::npos) << r.out;  // the finding's subject
  EXPECT_NE(r.out.find("S-leaf1:7 (LID "), std::string::npos) << r.out;        // the problem link's ends
  EXPECT_EQ(r.out.find("ibportstate <lid>"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fabric.link_degraded"), std::string::npos) << r.out;
  expect_fits_100_columns(r.out);
}

TEST(FabricCli, JsonHasTheSchemaLinkFactsAndFindingsAndReadsBack) {
  TempDir dir;
  auto r = run_fabscope("fabric --json --from " + quote(sweep()), "", false);
  EXPECT_EQ(r.exit_code, 0);
  const json j = json::parse(r.out);
  EXPECT_EQ(j["schema"], "fabscope.fabric");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["link_facts"].size(), 8u);
  for (const auto& f : j["link_facts"]) EXPECT_TRUE(f["below_capability"].get<bool>()) << f.dump();
  EXPECT_EQ(j["findings"].size(), 2u);
  EXPECT_EQ(j["exit_code"], 0);
  // The --json document is itself a saved sweep.
  const std::string again = variant(dir, "again.json", j);
  EXPECT_EQ(run_fabscope("fabric --from " + quote(again)).exit_code, 0);
}

TEST(FabricCli, SaveWritesASweepThatReadsBackAsTheSameTopology) {
  TempDir dir;
  const auto saved = (dir.path() / "saved.json").string();
  auto r = run_fabscope("fabric --from " + quote(sweep()) + " --save " + quote(saved));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  r = run_fabscope("fabric --from " + quote(sweep()) + " --expect " + quote(saved) + " --json", "", false);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const json out = json::parse(r.out);  // named: a range over a temporary's member dangles
  for (const auto& f : out["findings"])
    EXPECT_EQ(f["id"].get<std::string>().find("fabric.link_"), std::string::npos) << f.dump();
}

TEST(FabricCli, ExpectNamesTheMissingCableByBothEnds) {
  TempDir dir;
  json j = sweep_json();
  for (auto [n, i] : {std::pair{2, 8}, std::pair{4, 2}}) {  // S-leaf2:8 <-> S-spine2:2 unplugged
    port(j, n, i)["remote_node"] = -1;
    port(j, n, i)["remote_port"] = 0;
    port(j, n, i)["info"]["state"] = "Down";
  }
  j["links"].erase(7);
  auto r = run_fabscope("fabric --from " + quote(variant(dir, "now.json", j)) + " --expect " + quote(sweep()));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("fabric.link_missing"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("S-leaf2:8 <-> S-spine2:2"), std::string::npos) << r.out;
}

TEST(FabricCli, ThresholdsFileRaisesTheBarForErrorCounters) {
  TempDir dir;
  json j = sweep_json();
  port(j, 1, 7)["counters"]["SymbolErrorCounter"] = 5;
  const auto now = variant(dir, "errors.json", j);
  auto r = run_fabscope("fabric --from " + quote(now));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("SymbolErrorCounter=5"), std::string::npos) << r.out;
  write_file(dir.path(), "error_thresholds", "# operators' file\nSymbolErrorCounter=10\n");
  r = run_fabscope("fabric --from " + quote(now) + " --thresholds " + quote((dir.path() / "error_thresholds").string()));
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

TEST(FabricCli, BadThresholdsLineExitsThreeNamingFileAndLine) {
  TempDir dir;
  write_file(dir.path(), "t", "SymbolErrorCounter=10\nSymbolErrors=3\n");
  const auto t = (dir.path() / "t").string();
  auto r = run_fabscope("fabric --from " + quote(sweep()) + " --thresholds " + quote(t));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find(t + ":2: 'SymbolErrors' is not an error counter"), std::string::npos) << r.out;
}

TEST(FabricCli, MalformedSweepExitsThreeNamingFileAndField) {
  TempDir dir;
  json j = sweep_json();
  port(j, 0, 0)["info"]["lid"] = 70000;
  const auto bad = variant(dir, "bad.json", j);
  auto r = run_fabscope("fabric --from " + quote(bad));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find(bad + ": field 'nodes[0].ports[0].info.lid' is 70000"), std::string::npos) << r.out;
  write_file(dir.path(), "half.json", "{\"schema\": \"fabscope.fabric\", \"nodes\": [");
  r = run_fabscope("fabric --expect " + quote((dir.path() / "half.json").string()) + " --from " + quote(sweep()));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("half.json: not JSON"), std::string::npos) << r.out;
  r = run_fabscope("fabric --from /nonexistent/fabric.json");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("/nonexistent/fabric.json"), std::string::npos) << r.out;
}

TEST(FabricCli, FlagsThatCannotGoTogetherAreUsageErrors) {
  auto r = run_fabscope("fabric --from " + quote(sweep()) + " --interval 5");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("--interval"), std::string::npos) << r.out;
  r = run_fabscope("fabric --from " + quote(sweep()) + " --ca mlx5_0");
  EXPECT_EQ(r.exit_code, 3);
  r = run_fabscope("fabric --from " + quote(sweep()) + " --max-smps 0");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("max-smps"), std::string::npos) << r.out;
}

// Issue 45: 1-1024 was accepted and the engine silently kept 256 in flight; the range the flag
// accepts is now the one it honours.
TEST(FabricCli, MaxInflightAboveTheEnginesLimitIsRefusedNotCapped) {
  auto r = run_fabscope("fabric --from " + quote(sweep()) + " --max-inflight 1024");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("--max-inflight '1024' is not a whole number from 1 to 256"), std::string::npos) << r.out;
  r = run_fabscope("fabric --from " + quote(sweep()) + " --max-inflight 256");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  r = run_fabscope("fabric --help");
  EXPECT_NE(r.out.find("counter MADs in flight (1-256)"), std::string::npos) << r.out;
}

TEST(FabricCli, RouteNamesAnUnknownOrAmbiguousNode) {
  TempDir dir;
  auto r = run_fabscope("fabric route --from " + quote(sweep()) + " H-node1 nosuchhost");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("DST 'nosuchhost' names no node of the sweep"), std::string::npos) << r.out;
  json j = sweep_json();
  j["nodes"][7]["description"] = "H-node3 mlx5_1";  // two nodes whose first word is H-node3
  r = run_fabscope("fabric route --from " + quote(variant(dir, "twins.json", j)) + " H-node1 H-node3");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("DST 'H-node3' is ambiguous: H-node3 mlx5_0 (0x0000000000120000), H-node3 mlx5_1"),
            std::string::npos)
      << r.out;
  r = run_fabscope("fabric route --from " + quote(sweep()) + " 0x999 1");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("SRC '0x999': no node or port has this GUID"), std::string::npos) << r.out;
  r = run_fabscope("fabric route --from " + quote(sweep()) + " H-node1 60000");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("not a unicast LID"), std::string::npos) << r.out;
}

TEST(FabricCli, NoFabricAccessExitsThreeSayingWhatToDo) {
  // Names resolve in the saved sweep; the forwarding tables need the fabric, which this build or
  // machine cannot reach: a clear message and exit 3, never a crash.
  auto r = run_fabscope("fabric route --from " + quote(sweep()) + " H-node1 H-node4");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("fabscope fabric route: "), std::string::npos) << r.out;
}

TEST(FabricCli, RouteFromSavedForwardingTablesNeedsNoFabric) {
  // The path ibtracert printed on the fabric the file was saved from (fabric_ibsim_lfts).
  auto r = run_fabscope("fabric route --json --from " + quote(routed_sweep()) + " H-node1 H-node5", "", false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::vector<std::pair<std::string, int>> hops;
  const json route = json::parse(r.out);
  for (const auto& h : route["hops"]) hops.emplace_back(h["name"], h["out_port"]);
  EXPECT_EQ(hops, (std::vector<std::pair<std::string, int>>{
                      {"H-node1", 1}, {"S-leaf1", 8}, {"S-spine2", 2}, {"S-leaf2", 2}, {"H-node5", 0}}));
  r = run_fabscope("fabric route --from " + quote(routed_sweep()) + " S-leaf2 1");  // from a switch, to a LID
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("S-spine1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("H-node1"), std::string::npos) << r.out;
  expect_fits_100_columns(r.out);
}

TEST(FabricCli, RouteBrokenInTheSavedTablesNamesTheSwitchAndTheLid) {
  TempDir dir;
  json j;
  {
    std::ifstream in(routed_sweep());
    j = json::parse(in);
  }
  std::string lft = j["nodes"][0]["lft"];
  lft.replace(2 * 9, 2, "ff");  // S-leaf1 forgets LID 9 (H-node5)
  j["nodes"][0]["lft"] = lft;
  auto r = run_fabscope("fabric route --from " + quote(variant(dir, "hole.json", j)) + " H-node1 H-node5");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("route to LID 9 breaks at switch S-leaf1 (0x0000000000200000): no forwarding entry"),
            std::string::npos)
      << r.out;
  // Without every switch's table the file only names the nodes: the tables are read live, and
  // this machine has no fabric.
  j["nodes"][2].erase("lft");
  r = run_fabscope("fabric route --from " + quote(variant(dir, "partial.json", j)) + " H-node1 H-node5");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("fabscope fabric route: "), std::string::npos) << r.out;
}

TEST(FabricCli, RoutesFlagReadsTheFabricSoNotWithFrom) {
  auto r = run_fabscope("fabric --routes --from " + quote(routed_sweep()));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("--routes reads the forwarding tables from the fabric"), std::string::npos) << r.out;
  r = run_fabscope("fabric --json --from " + quote(routed_sweep()), "", false);  // judged as any saved sweep
  EXPECT_LE(r.exit_code, 2) << r.out;
  EXPECT_EQ(json::parse(r.out)["nodes"][0]["lft"], "ff01070008070208030807");
}

TEST(FabricCli, FromStdinReadsTheSavedSweep) {
  auto r = run_fabscope("fabric --json --from - < " + quote(sweep()), "", false);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(json::parse(r.out)["nodes"].size(), 8u);
}

// `fabscope exporter --fabric` where the fabric cannot be reached (no InfiniBand management
// access here): the node's metrics are still served, the failed discovery is counted, and no
// fabric series is invented.
TEST(ExporterFabricCli, WithoutFabricAccessServesTheNodeAndCountsTheFailedDiscovery) {
  auto r = run_fabscope("exporter --once --checks-interval 0 --fabric --root " + quote(fixture("rxe-vm").string()),
                        "", false);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("fabscope_port_state{"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fabscope_fabric_collection_errors_total{kind=\"discovery\"} 1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fabscope_fabric_last_success_timestamp_seconds{kind=\"discovery\"} 0\n"), std::string::npos);
  EXPECT_NE(r.out.find("fabscope_fabric_collection_interval_seconds{kind=\"counters\"} 30\n"), std::string::npos);
  EXPECT_EQ(r.out.find("fabscope_fabric_link_up"), std::string::npos);
  EXPECT_EQ(r.out.find("check=\"fabric."), std::string::npos) << "no verdict on a fabric never read";
}

TEST(ExporterFabricCli, FabricFlagsWithoutFabricAreUsageErrors) {
  auto r = run_fabscope("exporter --once --checks-interval 0 --fabric-interval 5");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("--fabric-interval needs --fabric"), std::string::npos) << r.out;
  r = run_fabscope("exporter --once --checks-interval 0 --fabric --fabric-interval 0");
  EXPECT_EQ(r.exit_code, 3) << r.out;
}

// `fabscope exporter --jobs`: flags, an empty or missing directory, a segment of the real capture's
// layout that is garbage (counted, the scrape still served).
TEST(ExporterJobsCli, JobFlagsWithoutJobsAreUsageErrors) {
  for (const char* f : {"--jobs-dir /tmp", "--jobs-grace 5", "--jobs-max-series 10"}) {
    auto r = run_fabscope(std::string("exporter --once --checks-interval 0 ") + f);
    EXPECT_EQ(r.exit_code, 3) << f << r.out;
    EXPECT_NE(r.out.find("needs --jobs"), std::string::npos) << r.out;
  }
  auto r = run_fabscope("exporter --once --checks-interval 0 --jobs --jobs-max-series 0");
  EXPECT_EQ(r.exit_code, 3) << r.out;
}

TEST(ExporterJobsCli, NoJobOrAMissingDirectoryServesTheNodeAndZeroProcesses) {
  TempDir t;
  for (const std::string& dir : {t.path().string(), (t.path() / "absent").string()}) {
    auto r = run_fabscope("exporter --once --checks-interval 0 --root " + quote(fixture("rxe-vm").string()) +
                          " --jobs --jobs-dir " + quote(dir), "", false);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("fabscope_port_state{"), std::string::npos);
    EXPECT_NE(r.out.find("fabscope_job_processes{state=\"running\"} 0\n"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("fabscope_job_operations_total"), std::string::npos);
  }
}

TEST(ExporterJobsCli, AGarbledSegmentIsSkippedAndCounted) {
  TempDir t;
  write_file(t.path(), "fabscope-job.4242", std::string(339800, '\x7f'));
  auto r = run_fabscope("exporter --once --checks-interval 0 --root " + quote(fixture("rxe-vm").string()) +
                        " --jobs --jobs-dir " + quote(t.path().string()), "", false);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("fabscope_job_segments_skipped_total{reason=\"format\"} 1\n"), std::string::npos) << r.out;
}
