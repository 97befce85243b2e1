// The cluster and rdma inputs of the report: reading real `fabscope cluster --json` and
// `fabscope rdma --json` outputs, the heat map grid (one node per cell up to 64 nodes, blocks past
// that, outlier marks kept), and how a bad document is refused.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "report/heatmap.hpp"
#include "report/load.hpp"
#include "report/render.hpp"
#include "support/fixtures.hpp"

using namespace fabscope::report;
using fabscope::json;

namespace {

std::string fixture_text(const std::string& rel) {
  std::ifstream in(fabscope::testing::fixture(rel));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Input fixture_input(const std::string& rel) { return input_from_json_text(rel, fixture_text(rel)); }

std::string error_of(const std::string& file, const json& doc) {
  try {
    input_from_json(file, doc);
  } catch (const fabscope::Error& e) {
    return e.what();
  }
  return "";
}

std::size_t count(const std::string& html, const std::string& what) {
  std::size_t n = 0;
  for (auto p = html.find(what); p != std::string::npos; p = html.find(what, p + 1)) ++n;
  return n;
}

// A cluster of n nodes, every pair measured at 100 Gb/s except the ones given.
fabscope::cluster::SavedResult uniform_cluster(int n) {
  fabscope::cluster::SavedResult c;
  c.world = n;
  for (int r = 0; r < n; ++r) {
    c.nodes.push_back({r, "n" + std::to_string(r), "0.1.0", "", 0});
    c.names.push_back("n" + std::to_string(r));
  }
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) c.pairs.push_back({a, b, 100.0, 100.0, "", ""});
  return c;
}

}  // namespace

TEST(ReportCluster, VmSlowNodeFixture_GivesPairsAndTheSlowNode) {
  Input in = fixture_input("cluster-runs/vm5-slow-node.json");
  ASSERT_EQ(in.kind, InputKind::Cluster);
  const fabscope::cluster::SavedResult& c = in.cluster;
  EXPECT_EQ(c.launcher, "env");
  EXPECT_EQ(c.world, 5);
  ASSERT_EQ(c.names.size(), 5u);
  EXPECT_EQ(c.names[3], "vm3");
  EXPECT_EQ(c.pairs.size(), 10u);
  EXPECT_EQ(c.engine, "tcp");
  EXPECT_TRUE(c.judged);
  ASSERT_EQ(c.slow_nodes.size(), 1u);
  EXPECT_EQ(c.slow_nodes[0].rank, 3);
  EXPECT_EQ(c.slow_nodes[0].slow_pairs, 4u);
  EXPECT_TRUE(c.slow_links.empty());
  EXPECT_EQ(c.worst, "fail");
  EXPECT_FALSE(c.attributes.empty());
}

TEST(ReportCluster, HeatGrid_SmallClusterIsOneNodePerCellWithTheSlowNodeMarked) {
  Input in = fixture_input("cluster-runs/vm5-slow-node.json");
  HeatGrid g = build_heat_grid(in.cluster, 64);
  EXPECT_EQ(g.block, 1);
  ASSERT_EQ(g.blocks.size(), 5u);
  EXPECT_EQ(g.cells.size(), 20u);  // every direction of 10 pairs
  EXPECT_EQ(g.blocks[3].slow_nodes, std::vector<int>{3});
  for (const auto& cell : g.cells) {
    EXPECT_EQ(cell.directions, 1u);
    EXPECT_EQ(cell.slow_node, cell.row == 3 || cell.col == 3) << cell.row << "," << cell.col;
  }
  // Row 3 sends, column 4 receives: pair (3, 4)'s a_to_b_gbps.
  auto it = std::find_if(g.cells.begin(), g.cells.end(), [](const HeatCell& c) { return c.row == 3 && c.col == 4; });
  ASSERT_NE(it, g.cells.end());
  EXPECT_NEAR(it->min_gbps, 0.001707230941365425, 1e-12);
}

TEST(ReportCluster, HeatGrid_LargeClusterIsAggregatedAndKeepsOutliers) {
  fabscope::cluster::SavedResult c = uniform_cluster(200);
  for (auto& p : c.pairs)
    if (p.a == 7 && p.b == 150) p.a_to_b_gbps = 40, p.b_to_a_gbps = 42;
  c.slow_links.push_back({7, 150, 40.0, 100.0, 100.0});
  c.slow_nodes.push_back({90, 199, 199, 30.0});
  for (auto& p : c.pairs)
    if (p.a == 10 && p.b == 11) p.a_to_b_gbps.reset(), p.b_to_a_gbps.reset(), p.error = "refused";
  HeatGrid g = build_heat_grid(c, 64);
  EXPECT_EQ(g.block, 4);              // ceil(200 / 64)
  EXPECT_EQ(g.blocks.size(), 50u);    // ceil(200 / 4)
  EXPECT_LE(g.cells.size(), 64u * 64u);
  EXPECT_EQ(g.blocks[22].slow_nodes, std::vector<int>{90});
  std::size_t link_cells = 0, directions = 0;
  for (const auto& cell : g.cells) {
    directions += cell.directions + cell.failed;
    if (!cell.slow_links.empty()) {
      ++link_cells;
      EXPECT_TRUE((cell.row == 1 && cell.col == 37) || (cell.row == 37 && cell.col == 1));
    }
    if (cell.row == 1 && cell.col == 37) {
      EXPECT_DOUBLE_EQ(cell.min_gbps, 40);   // the block shows its lowest direction
      EXPECT_DOUBLE_EQ(cell.max_gbps, 100);
      EXPECT_DOUBLE_EQ(cell.median_gbps, 100);
      EXPECT_EQ(cell.directions, 16u);
    }
    if (cell.row == 2 && cell.col == 2) {
      EXPECT_EQ(cell.failed, 2u);  // both directions of (10, 11)
      EXPECT_EQ(cell.error, "refused");
      EXPECT_EQ(cell.directions, 10u);  // 4 x 4 minus the diagonal (4) and the failed pair (2)
    }
    EXPECT_EQ(cell.slow_node, cell.row == 22 || cell.col == 22);
  }
  EXPECT_EQ(link_cells, 2u);
  EXPECT_EQ(directions, 200u * 199u);
}

TEST(ReportCluster, HeatGrid_1024NodesStayWithin64x64) {
  fabscope::cluster::SavedResult c = uniform_cluster(1024);
  HeatGrid g = build_heat_grid(c, 64);
  EXPECT_EQ(g.block, 16);
  EXPECT_EQ(g.blocks.size(), 64u);
  EXPECT_EQ(g.cells.size(), 64u * 64u);
}

TEST(ReportCluster, HeatScale_StepsAreRoundAndCoverTheMaximum) {
  HeatScale s = heat_scale(98.9);
  EXPECT_DOUBLE_EQ(s.top_gbps, 100);
  EXPECT_EQ(s.bin(0.5), 0);
  EXPECT_EQ(s.bin(98.9), 7);
  EXPECT_EQ(s.bin(100), 7);
  EXPECT_DOUBLE_EQ(heat_scale(0.176).top_gbps, 0.2);
  EXPECT_STRNE(viridis(0, 8), viridis(7, 8));
}

TEST(ReportCluster, Render_MarksSlowNodeAndSlowLinkDifferently) {
  Report r;
  Input in;
  in.label = "c";
  in.kind = InputKind::Cluster;
  in.schema = "fabscope.cluster";
  in.cluster = uniform_cluster(6);
  for (auto& p : in.cluster.pairs)
    if (p.a == 0 && p.b == 1) p.a_to_b_gbps = 40;
  in.cluster.slow_links.push_back({0, 1, 40.0, 100.0, 100.0});
  in.cluster.slow_nodes.push_back({4, 5, 5, 20.0});
  in.cluster.judged = true;
  r.inputs.push_back(in);
  std::string html = render(r).html;
  EXPECT_EQ(count(html, R"(<rect class="cell")"), 30u);
  EXPECT_EQ(count(html, R"(data-from="0" data-to="1" data-gbps="40.0" data-outlier="slow-link")"), 1u);
  EXPECT_EQ(count(html, R"(data-from="1" data-to="0" data-gbps="100" data-outlier="slow-link")"), 1u);
  EXPECT_EQ(count(html, R"(<path class="mark-link")"), 2u);
  EXPECT_EQ(count(html, R"(<rect class="mark-node" data-ranks="4")"), 2u);  // its row and its column
  EXPECT_EQ(count(html, R"(data-outlier="slow-node"><title>)"), 10u);  // cells; table rows have more attributes  // 5 cells in its row, 5 in its column
  EXPECT_NE(html.find("SLOW LINK n0 \xE2\x80\x93 n1: 40.0 Gb/s"), std::string::npos);
  EXPECT_NE(html.find("SLOW NODE n4: 5 of 5 pairs slow"), std::string::npos);
  EXPECT_NE(html.find("<tr class=\"outlier\" data-outlier=\"slow-link\" data-a=\"0\" data-b=\"1\">"), std::string::npos);
}

TEST(ReportCluster, Render_EnginePerPairIsShownWhenGiven) {
  Input in = fixture_input("cluster-runs/mpirun4-port-down.json");
  for (auto& p : in.cluster.pairs) {
    p.engine = p.a == 0 ? "rdma" : "tcp";
    p.engine_reason = p.a == 0 ? "rxe1:1 on both" : "node3 has no active RDMA port";
  }
  Report r;
  r.inputs.push_back(in);
  std::string html = render(r).html;
  EXPECT_NE(html.find("engine per pair: rdma 3, tcp 3, outliers judged on the tcp pairs"), std::string::npos);
  EXPECT_EQ(count(html, R"(data-engine="rdma")"), 6u);
  EXPECT_NE(html.find("node0 \xE2\x86\x92 node1: 3.90 Gb/s; engine rdma (rxe1:1 on both)"), std::string::npos);
}

TEST(ReportCluster, Render_ConsistencyMarksTheOddValueAndShowsTheMajority) {
  Report r;
  r.inputs.push_back(fixture_input("cluster-runs/mpirun4-mtu.json"));
  std::string html = render(r).html;
  EXPECT_NE(html.find("<section id=\"cluster\">"), std::string::npos);
  EXPECT_EQ(html.find("class=\"heatmap\""), std::string::npos);  // --pairs none: no matrix
  // node2's netdevs at 1500 and 9000 against the majority 9000.
  EXPECT_NE(html.find("<td class=\"odd\" data-key=\"net.rdma_mtu\"><span title=\"differs from the majority value 9000\">"
                      "\xE2\x89\xA0 1500,9000</span></td>"),
            std::string::npos);
  EXPECT_NE(html.find("<tr class=\"attribute\" data-key=\"net.rdma_mtu\"><th title=\"net.rdma_mtu\">netdev MTU</th>"
                      "<td>9000 <span class=\"muted\">(3)</span></td>"),
            std::string::npos);
}

TEST(ReportCluster, Render_ManyNodesListOnlyTheOddOnes) {
  fabscope::cluster::SavedResult c = uniform_cluster(100);
  fabscope::cluster::SavedAttribute a;
  a.key = "net.rdma_mtu";
  a.title = "netdev MTU";
  a.reference = "4096";
  a.reference_count = 99;
  a.values.assign(100, "4096");
  a.values[42] = "1500";
  a.odd = {"n42"};
  c.attributes.push_back(a);
  Input in;
  in.label = "big";
  in.kind = InputKind::Cluster;
  in.cluster = c;
  Report r;
  r.inputs.push_back(in);
  std::string html = render(r).html;
  EXPECT_NE(html.find("99 nodes that agree with the majority on every attribute are not listed"), std::string::npos);
  EXPECT_EQ(count(html, R"(<tr class="attribute")"), 1u);
  EXPECT_NE(html.find("<th data-node=\"n42\">n42</th>"), std::string::npos);
}

TEST(ReportCluster, BadDocuments_AreRefusedNamingFileAndField) {
  json good = json::parse(fixture_text("cluster-runs/vm5-slow-node.json"));
  json j = good;
  j["pairwise"]["pairs"][2]["b"] = 9;
  EXPECT_EQ(error_of("c.json", j), "c.json: field 'pairwise.pairs[2].b': rank 9 outside the job's 5 ranks");
  j = good;
  j["pairwise"]["slow_nodes"][0]["rank"] = -1;
  EXPECT_EQ(error_of("c.json", j), "c.json: field 'pairwise.slow_nodes[0].rank': rank -1 outside the job's 5 ranks");
  j = good;
  j["attributes"][0]["values"].erase(0);
  EXPECT_EQ(error_of("c.json", j), "c.json: field 'attributes[0].values': holds 4 values for 5 nodes");
  j = good;
  j["pairwise"]["pairs"][0]["a_to_b_gbps"] = -3;
  EXPECT_EQ(error_of("c.json", j), "c.json: field 'pairwise.pairs[0].a_to_b_gbps': negative bandwidth -3.000000");
  j = good;
  j.erase("pairwise");
  EXPECT_EQ(error_of("c.json", j), "c.json: field 'pairwise': missing");
  j = good;
  j["schema_version"] = 2;
  EXPECT_NE(error_of("c.json", j).find("c.json: fabscope.cluster schema_version 2 is newer"), std::string::npos);
  std::string text = fixture_text("cluster-runs/vm5-slow-node.json");
  try {
    input_from_json_text("cut.json", text.substr(0, text.size() / 2));
    FAIL() << "a truncated document was read";
  } catch (const fabscope::Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cut.json: not valid JSON (truncated?)", 0), 0u) << e.what();
  }
}

TEST(ReportRdma, BwFixture_GivesSizesEndpointsAndVerdict) {
  Input in = fixture_input("rdma-vm/write-bw-64k.client.json");
  ASSERT_EQ(in.kind, InputKind::Rdma);
  const fabscope::rdma::Result& d = in.rdma;
  EXPECT_EQ(d.role, "client");
  EXPECT_EQ(std::string(fabscope::rdma::to_string(d.options.test)), "bw");
  EXPECT_EQ(std::string(fabscope::rdma::to_string(d.options.op)), "write");
  EXPECT_EQ(d.local.device, "rxe1");
  EXPECT_EQ(d.remote.device, "rxe0");
  EXPECT_TRUE(d.local.software);
  EXPECT_EQ(d.path_mtu, 4096);
  ASSERT_EQ(d.sizes.size(), 1u);
  EXPECT_EQ(d.sizes[0].bytes, 65536u);
  EXPECT_NEAR(d.sizes[0].gbps, 0.13436, 1e-5);
  EXPECT_EQ(d.sizes[0].data_verified, true);
  EXPECT_FALSE(d.sizes[0].latency);
  EXPECT_TRUE(d.completed);
}

TEST(ReportRdma, LatFixture_GivesPercentilesAndPlotsOnePointEach) {
  Report r;
  r.inputs.push_back(fixture_input("rdma-vm/write-lat-8.client.json"));
  const auto& z = r.inputs[0].rdma.sizes.at(0);
  ASSERT_TRUE(z.latency);
  EXPECT_DOUBLE_EQ(z.latency->min_us, 314.505);
  EXPECT_DOUBLE_EQ(z.latency->p99_us, 23808.37);
  std::string html = render(r).html;
  EXPECT_NE(html.find("<section id=\"rdma\">"), std::string::npos);
  for (const char* q : {"min", "median", "p99", "max"})
    EXPECT_NE(html.find(std::string("data-series=\"write-lat-8.client ") + q + "\" data-points=\"1\""),
              std::string::npos)
        << q;
}

TEST(ReportRdma, FailedRun_IsListedWithItsFindings) {
  Report r;
  r.inputs.push_back(fixture_input("rdma-vm/link-down.client.json"));
  std::string html = render(r).html;
  EXPECT_NE(html.find("not completed"), std::string::npos);
  EXPECT_NE(html.find("data-check=\"rdma.timeout\""), std::string::npos);
  EXPECT_EQ(html.find("plot-rdma-bw"), std::string::npos);  // no size: nothing to plot
}

TEST(ReportRdma, BadDocuments_AreRefusedNamingFileAndField) {
  json good = json::parse(fixture_text("rdma-vm/write-lat-8.client.json"));
  json j = good;
  j["sizes"][0]["latency"]["p99_us"] = 1.0;
  EXPECT_NE(error_of("l.json", j).find("l.json: field 'sizes[0].latency.min_us': percentiles out of order"),
            std::string::npos);
  j = good;
  j["options"]["test"] = "pingpong";
  EXPECT_EQ(error_of("l.json", j), "l.json: field 'options.test': expected \"bw\" or \"lat\", got \"pingpong\"");
  j = good;
  j["sizes"][0]["gbps"] = "fast";
  EXPECT_EQ(error_of("l.json", j), "l.json: field 'sizes[0].gbps': expected a number, got string \"fast\"");
}

TEST(ReportRdma, ServerSessionsAsJsonLines_AreOneInputEach) {
  // `fabscope rdma --server --sessions 2 --json`: one compact object per line.
  json a = json::parse(fixture_text("rdma-vm/write-bw-64k.client.json"));
  json b = json::parse(fixture_text("rdma-vm/read-bw-4k-64k-2qp.client.json"));
  a["role"] = b["role"] = "server";
  auto ins = inputs_from_json_text("srv/sessions.json", a.dump() + "\n" + b.dump() + "\n\n");
  ASSERT_EQ(ins.size(), 2u);
  EXPECT_EQ(ins[0].label, "sessions #1");
  EXPECT_EQ(ins[1].label, "sessions #2");
  EXPECT_EQ(ins[1].file, "srv/sessions.json");
  EXPECT_EQ(ins[1].rdma.sizes.size(), 2u);
  // A pretty-printed document is one input, whatever its line count.
  EXPECT_EQ(inputs_from_json_text("one.json", fixture_text("rdma-vm/write-bw-64k.client.json")).size(), 1u);
  b["sizes"][1]["gbps"] = nullptr;
  try {
    inputs_from_json_text("s.json", a.dump() + "\n" + b.dump() + "\n");
    FAIL() << "a bad second line was read";
  } catch (const fabscope::Error& e) {
    EXPECT_EQ(std::string(e.what()), "s.json:2: field 'sizes[1].gbps': expected a number, got null");
  }
}
