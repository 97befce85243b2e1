// The fabric input of the report: a saved sweep (fabscope.fabric) read by the fabric library's
// reader, its tiers counted from the hosts up, link states, the picture drawn whole up to 64
// switches and per tier beyond, the suspects of a cluster run marked only on the fabric they were
// found in, and the cluster heat map ordered by leaf switch.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "../fabric/fabric_builders.hpp"
#include "core/error.hpp"
#include "report/html.hpp"
#include "report/load.hpp"
#include "report/render.hpp"
#include "report/topology.hpp"
#include "fabric/judge.hpp"
#include "support/fixtures.hpp"

using namespace fabscope::report;
using fabscope::json;
namespace t = fabscope::testing;
namespace sn = fabscope::fabric;

namespace {

std::string fixture_text(const std::string& rel) {
  std::ifstream in(t::fixture(rel));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

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

// A two-tier fat tree: leaf l holds per_leaf HCAs ("h<l>-<i> mlx5_0", LIDs from 1) on ports
// 1..per_leaf and one cable to each spine on the ports after them; spine port l+1 is leaf l's,
// and the spines have two ports more, not cabled.
struct Tree {
  sn::Subnet s;
  std::vector<int> leaf, spine, host;
};

Tree fat_tree(int leaves, int spines, int per_leaf) {
  Tree x;
  std::uint16_t lid = 1;
  for (int l = 0; l < leaves; ++l)
    for (int h = 0; h < per_leaf; ++h)
      x.host.push_back(t::add_node(x.s, sn::NodeType::Hca, "h" + std::to_string(l) + "-" + std::to_string(h) + " mlx5_0",
                                   0x10000 + x.host.size() * 16, 1, lid++));
  for (int l = 0; l < leaves; ++l)
    x.leaf.push_back(t::add_node(x.s, sn::NodeType::Switch, "S-leaf" + std::to_string(l), 0x20000 + l, per_leaf + spines, lid++));
  for (int p = 0; p < spines; ++p)
    x.spine.push_back(t::add_node(x.s, sn::NodeType::Switch, "S-spine" + std::to_string(p), 0x30000 + p, leaves + 2, lid++));
  for (int l = 0; l < leaves; ++l) {
    for (int h = 0; h < per_leaf; ++h) t::connect(x.s, x.host[l * per_leaf + h], 1, x.leaf[l], h + 1);
    for (int p = 0; p < spines; ++p) t::connect(x.s, x.leaf[l], per_leaf + p + 1, x.spine[p], l + 1);
  }
  x.s.source = "mlx5_0:1";
  x.s.rebuild_links();
  return x;
}

Input fabric_input(const sn::Subnet& s, const std::string& file = "runs/fabric.json") {
  return input_from_json_text(file, sn::to_json(s).dump());
}

// A fabscope.cluster document of the tree's hosts (rank r on host r), every pair at 100 Gb/s,
// with its ib_ports and, given suspects, a localization made on the tree.
json cluster_doc(const Tree& x, const json& suspects = nullptr) {
  json nodes = json::array(), pairs = json::array();
  const int n = static_cast<int>(x.host.size());
  for (int r = 0; r < n; ++r) {
    const auto& h = x.s.nodes[static_cast<std::size_t>(x.host[static_cast<std::size_t>(r)])];
    nodes.push_back({{"rank", r}, {"name", "node" + std::to_string(r)}, {"fabscope_version", "0.1.0"}, {"error", ""},
                     {"ib_ports", {{{"port", "mlx5_0:1"}, {"lid", h.lid()}, {"node_guid", sn::guid_hex(h.guid)},
                                    {"state", "ACTIVE"}}}}});
    for (int b = r + 1; b < n; ++b) pairs.push_back({{"a", r}, {"b", b}, {"a_to_b_gbps", 100.0}, {"b_to_a_gbps", 100.0}});
  }
  json doc = {{"schema", "fabscope.cluster"}, {"schema_version", 1}, {"launcher", "env"}, {"world", n},
              {"nodes", nodes}, {"attributes", json::array()},
              {"pairwise", {{"mode", "all"}, {"rounds", 1}, {"pairs", pairs}, {"measured", pairs.size()},
                            {"judged", true}, {"slow_nodes", json::array()}, {"slow_links", json::array()}}},
              {"findings", json::array()}, {"summary", {{"fail", 0}, {"warn", 0}, {"info", 0}, {"worst", "ok"}}}};
  if (!suspects.is_null())
    doc["localization"] = {{"attempted", true}, {"why_not", ""}, {"fabric_source", x.s.source},
                           {"threshold_gbps", 80.0}, {"observations", 10}, {"slow", 4}, {"fast", 6},
                           {"unrouted", 0}, {"unexplained", 0}, {"suspects", suspects}, {"notes", json::array()}};
  return doc;
}

json switch_suspect(const sn::Subnet& s, int node) {
  return {{"kind", "switch"}, {"name", s.name(node)}, {"node_index", node}, {"explained", 4},
          {"slow_crossing", 4}, {"fast_crossing", 0}, {"alternatives", json::array()},
          {"examples", {{{"from", 0}, {"to", 1}, {"from_name", "node0"}, {"to_name", "node1"}}}}};
}

json cable_suspect(const sn::Subnet& s, int a, int ap, int b, int bp) {
  return {{"kind", "cable"}, {"name", s.name(a) + ":" + std::to_string(ap) + " -> " + s.name(b) + ":" + std::to_string(bp)},
          {"a", {{"node_index", a}, {"port", ap}}}, {"b", {{"node_index", b}, {"port", bp}}},
          {"both_directions", false}, {"explained", 3}, {"slow_crossing", 3}, {"fast_crossing", 1},
          {"alternatives", {"S-x"}}, {"examples", json::array()}};
}

Report report_of(std::vector<Input> inputs) {
  Report r;
  r.inputs = std::move(inputs);
  return r;
}

}  // namespace

TEST(ReportFabric, LeafSpineFixture_IsAFabricInput) {
  auto ins = inputs_from_json_text("fabric-leaf-spine/fabric.json", fixture_text("fabric-leaf-spine/fabric.json"));
  ASSERT_EQ(ins.size(), 1u);
  const Input& in = ins[0];
  EXPECT_EQ(in.kind, InputKind::Fabric);
  EXPECT_EQ(in.schema, "fabscope.fabric");
  EXPECT_EQ(in.schema_version, 1);
  EXPECT_FALSE(in.fabric.judged);  // a --save file
  EXPECT_EQ(in.fabric.subnet.nodes.size(), 8u);
  const Topology topo = build_topology(in.fabric.subnet, {});
  ASSERT_EQ(topo.tiers.size(), 2u);
  EXPECT_EQ(topo.tiers[0].size(), 2u);  // S-leaf1, S-leaf2
  EXPECT_EQ(topo.switches[static_cast<std::size_t>(topo.tiers[0][0])].name, "S-leaf1");
  EXPECT_EQ(topo.switches[static_cast<std::size_t>(topo.tiers[0][0])].hosts, 2u);
  EXPECT_EQ(topo.hosts, 4u);
  // ibsim reports every rate as supported: a whole tier below capability is not degraded.
  for (const auto& l : topo.links) EXPECT_EQ(l.look, LinkLook::Active) << l.name;
  const std::string html = render(report_of(ins)).html;
  EXPECT_NE(html.find("<section id=\"fabric\">"), std::string::npos);
  EXPECT_NE(html.find("data-view=\"whole\""), std::string::npos);
  EXPECT_EQ(html.find("id=\"findings\""), std::string::npos);  // not judged: no findings section
}

TEST(ReportFabric, FabricJson_FindingsAreListedAndNameTheirLink) {
  Tree x = fat_tree(2, 2, 2);
  json doc = sn::to_json(x.s);
  const std::string link = sn::port_name(x.s, x.leaf[0], 3) + " <-> " + sn::port_name(x.s, x.spine[0], 1);
  doc["findings"] = {{{"id", "fabric.errors_growing"}, {"severity", "warn"}, {"subject", link},
                      {"message", "grew"}, {"evidence", "SymbolErrorCounter +12/s"}, {"remedy", "reseat"}}};
  doc["summary"] = {{"fail", 0}, {"warn", 1}, {"info", 0}, {"worst", "warn"}};
  Input in = input_from_json("f.json", doc);
  ASSERT_TRUE(in.fabric.judged);
  const Topology topo = build_topology(in.fabric.subnet, in.fabric.findings);
  std::size_t erroring = 0;
  for (const auto& l : topo.links)
    if (l.erroring()) {
      ++erroring;
      EXPECT_EQ(l.name, link);
    }
  EXPECT_EQ(erroring, 1u);
  const std::string html = render(report_of({in})).html;
  EXPECT_NE(html.find("data-check=\"fabric.errors_growing\""), std::string::npos);
  EXPECT_NE(html.find("fabric f"), std::string::npos);  // the findings' node column
}

TEST(ReportFabric, BadFabric_IsRefusedNamingFileAndField) {
  Tree x = fat_tree(2, 2, 2);
  json doc = sn::to_json(x.s);
  doc["nodes"][0]["ports"][0]["remote_node"] = 999;
  std::string e = error_of("runs/bad-fabric.json", doc);
  EXPECT_EQ(e.rfind("runs/bad-fabric.json: ", 0), 0u) << e;
  EXPECT_NE(e.find("nodes[0].ports[0].remote_node"), std::string::npos) << e;
  doc = sn::to_json(x.s);
  doc["schema_version"] = 2;
  e = error_of("runs/new.json", doc);
  EXPECT_NE(e.find("runs/new.json"), std::string::npos) << e;
  EXPECT_NE(e.find("newer"), std::string::npos) << e;
  doc = sn::to_json(x.s);
  doc["findings"] = json::array();  // --json without its summary
  e = error_of("runs/f.json", doc);
  EXPECT_NE(e.find("summary"), std::string::npos) << e;
}

TEST(ReportFabric, Tiers_AreCountedFromTheHostsUp) {
  Tree x = fat_tree(2, 2, 2);
  // A core switch above both spines, and a switch no HCA reaches (cabled to nothing).
  const int core = t::add_node(x.s, sn::NodeType::Switch, "S-core", 0x40000, 4, 200);
  const int lone = t::add_node(x.s, sn::NodeType::Switch, "S-lone", 0x50000, 4, 201);
  t::connect(x.s, x.spine[0], 4, core, 1);
  t::connect(x.s, x.spine[1], 4, core, 2);
  x.s.rebuild_links();
  const Topology topo = build_topology(x.s, {});
  ASSERT_EQ(topo.tiers.size(), 4u);
  EXPECT_EQ(topo.tier_of_node[static_cast<std::size_t>(x.host[0])], 0);
  EXPECT_EQ(topo.tier_of_node[static_cast<std::size_t>(x.leaf[0])], 1);
  EXPECT_EQ(topo.tier_of_node[static_cast<std::size_t>(x.spine[1])], 2);
  EXPECT_EQ(topo.tier_of_node[static_cast<std::size_t>(core)], 3);
  EXPECT_EQ(topo.tier_of_node[static_cast<std::size_t>(lone)], 4);
  EXPECT_TRUE(topo.top_unreached);
  for (const auto& l : topo.links) EXPECT_LT(topo.tier_of_node[static_cast<std::size_t>(l.lo_node)],
                                             topo.tier_of_node[static_cast<std::size_t>(l.hi_node)]);
}

TEST(ReportFabric, NaturalOrder_PutsLeaf9BeforeLeaf10) {
  EXPECT_TRUE(natural_less("S-leaf9", "S-leaf10"));
  EXPECT_FALSE(natural_less("S-leaf10", "S-leaf9"));
  EXPECT_TRUE(natural_less("S-leaf01", "S-leaf2"));
  EXPECT_TRUE(natural_less("a", "b"));
}

TEST(ReportFabric, LinkStates_DegradedNotActiveAndErrorsWithBothEndsOnHover) {
  Tree x = fat_tree(2, 2, 2);
  t::connect(x.s, x.leaf[1], 3, x.spine[0], 2, 1, sn::Speed::HDR);  // 1X where the tier runs 4X
  t::port_of(x.s, x.leaf[0], 4).info->state = sn::PortState::Init;    // leaf0 - spine1 not active
  (*t::port_of(x.s, x.spine[1], 2).counters)[sn::Counter::SymbolErrorCounter] = 7;
  x.s.rebuild_links();
  const Topology topo = build_topology(x.s, {});
  std::map<std::string, const TopoLink*> by;
  for (const auto& l : topo.links) by[l.name] = &l;
  const std::string degraded = "S-leaf1:3 <-> S-spine0:2", init = "S-leaf0:4 <-> S-spine1:1",
                    errors = "S-leaf1:4 <-> S-spine1:2";
  ASSERT_TRUE(by.count(degraded) && by.count(init) && by.count(errors));
  EXPECT_EQ(by[degraded]->look, LinkLook::Degraded);
  EXPECT_EQ(by[init]->look, LinkLook::NotActive);
  EXPECT_EQ(by[errors]->look, LinkLook::Active);
  EXPECT_EQ(by[errors]->error_total, 7u);
  ASSERT_EQ(by[errors]->errors.size(), 1u);
  EXPECT_EQ(by[errors]->errors[0], "S-spine1:2 SymbolErrorCounter=7");
  const std::string html = render(report_of({fabric_input(x.s)})).html;
  // The degraded cable's hover text names both ends, its rate and the tier's.
  auto escaped = [](const std::string& n) { return esc(n); };
  const auto at = html.find("data-link=\"" + escaped(degraded) + "\" data-look=\"degraded\"");
  ASSERT_NE(at, std::string::npos);
  const auto title = html.substr(html.find("<title>", at), 200);
  EXPECT_NE(title.find(escaped(degraded)), std::string::npos) << title;
  EXPECT_NE(title.find("1X HDR"), std::string::npos) << title;
  EXPECT_NE(title.find("4X HDR"), std::string::npos) << title;
  EXPECT_NE(html.find("data-link=\"" + escaped(init) + "\" data-look=\"not-active\""), std::string::npos);
  EXPECT_EQ(count(html, "class=\"mark-errors\""), 1u);
  EXPECT_EQ(count(html, "<tr class=\"fabric-link\""), 3u);  // the problem table
}

TEST(ReportFabric, HostCount_IsPerLeafWithAMarkForABadHostCable) {
  Tree x = fat_tree(2, 2, 3);
  t::connect(x.s, x.host[4], 1, x.leaf[1], 2, 1, sn::Speed::HDR);  // one HCA of leaf1 at 1X
  x.s.rebuild_links();
  const Topology topo = build_topology(x.s, {});
  const auto& l0 = topo.switches[static_cast<std::size_t>(topo.switch_of_node[static_cast<std::size_t>(x.leaf[0])])];
  const auto& l1 = topo.switches[static_cast<std::size_t>(topo.switch_of_node[static_cast<std::size_t>(x.leaf[1])])];
  EXPECT_EQ(l0.hosts, 3u);
  EXPECT_EQ(l0.host_problems, 0u);
  EXPECT_EQ(l1.host_problems, 1u);
  const std::string html = render(report_of({fabric_input(x.s)})).html;
  EXPECT_NE(html.find("data-leaf=\"S-leaf1\" data-hosts=\"3\" data-problems=\"1\""), std::string::npos);
  EXPECT_NE(html.find("data-leaf=\"S-leaf0\" data-hosts=\"3\">"), std::string::npos);
  EXPECT_EQ(count(html, "class=\"link hosts-link\""), 2u);  // one line per leaf, not one per HCA
}

TEST(ReportFabric, AggregationThreshold_64SwitchesWhole65ByTier) {
  Tree whole = fat_tree(48, 16, 1);  // 64 switches
  Tree many = fat_tree(49, 16, 1);   // 65
  EXPECT_FALSE(build_topology(whole.s, {}).aggregated());
  const Topology topo = build_topology(many.s, {});
  EXPECT_TRUE(topo.aggregated());
  const auto groups = tier_links(topo);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].lo_tier, 0);
  EXPECT_EQ(groups[0].links, 49u);
  EXPECT_EQ(groups[1].lo_tier, 1);
  EXPECT_EQ(groups[1].links, 49u * 16u);
  const std::string a = render(report_of({fabric_input(whole.s)})).html;
  const std::string b = render(report_of({fabric_input(many.s)})).html;
  EXPECT_NE(a.find("data-view=\"whole\""), std::string::npos);
  EXPECT_EQ(count(a, "<g class=\"switch\""), 64u);
  EXPECT_NE(b.find("data-view=\"tiers\""), std::string::npos);
  EXPECT_EQ(count(b, "<g class=\"switch\""), 0u);
  EXPECT_EQ(count(b, "<g class=\"tier\""), 3u);  // HCAs, leaves, spines
  EXPECT_NE(b.find("784 cables"), std::string::npos);
}

TEST(ReportFabric, Suspects_AreMarkedOnTheFabricTheyWereFoundIn) {
  Tree x = fat_tree(4, 4, 2);
  json sus = json::array({switch_suspect(x.s, x.spine[2]), cable_suspect(x.s, x.leaf[1], 2 + 1, x.spine[0], 2)});
  Input fabric = fabric_input(x.s);
  Input cluster = input_from_json("runs/cluster.json", cluster_doc(x, sus));
  EXPECT_EQ(localization_mismatch(fabric.fabric.subnet, cluster.cluster.localization), "");
  const std::string html = render(report_of({fabric, cluster})).html;
  EXPECT_NE(html.find("data-name=\"S-spine2\" data-tier=\"2\" data-suspect=\"#1\""), std::string::npos);
  EXPECT_NE(html.find("data-link=\"S-leaf1:3 &lt;-&gt; S-spine0:2\" data-look=\"active\" data-suspect=\"#2\""),
            std::string::npos);
  EXPECT_EQ(count(html, "<tr class=\"suspect\""), 2u);
  EXPECT_EQ(count(html, "class=\"badge mark-suspect\""), 2u);
}

TEST(ReportFabric, Suspects_OfAnotherFabricAreNotDrawnAndSayWhy) {
  Tree x = fat_tree(4, 4, 2);
  json sus = json::array({switch_suspect(x.s, x.spine[2])});
  Input cluster = input_from_json("runs/cluster.json", cluster_doc(x, sus));
  // The same node index is another switch in this sweep.
  Tree other = fat_tree(4, 4, 2);
  std::swap(other.s.nodes[static_cast<std::size_t>(other.spine[2])].description,
            other.s.nodes[static_cast<std::size_t>(other.spine[3])].description);
  std::string why = localization_mismatch(other.s, cluster.cluster.localization);
  EXPECT_NE(why.find("suspect #1 \"S-spine2\""), std::string::npos) << why;
  EXPECT_NE(why.find("S-spine3"), std::string::npos) << why;
  // Another source.
  Tree moved = fat_tree(4, 4, 2);
  moved.s.source = "mlx5_1:1";
  why = localization_mismatch(moved.s, cluster.cluster.localization);
  EXPECT_NE(why.find("mlx5_1:1"), std::string::npos) << why;
  // A cable that is not one.
  json bad = json::array({cable_suspect(x.s, x.leaf[0], 3, x.spine[1], 1)});
  Input c2 = input_from_json("runs/c2.json", cluster_doc(x, bad));
  why = localization_mismatch(x.s, c2.cluster.localization);
  EXPECT_NE(why.find("no cable"), std::string::npos) << why;
  const std::string html = render(report_of({fabric_input(other.s), cluster})).html;
  EXPECT_EQ(count(html, "class=\"badge mark-suspect\""), 0u);
  EXPECT_NE(html.find("not drawn here"), std::string::npos);
  EXPECT_EQ(count(html, "<tr class=\"suspect\""), 1u);  // listed in the cluster block instead
}

TEST(ReportFabric, BadLocalization_IsRefusedNamingTheField) {
  Tree x = fat_tree(2, 2, 2);
  json doc = cluster_doc(x, json::array({switch_suspect(x.s, x.spine[0])}));
  doc["localization"]["suspects"][0]["kind"] = "router";
  std::string e = error_of("runs/c.json", doc);
  EXPECT_NE(e.find("runs/c.json"), std::string::npos) << e;
  EXPECT_NE(e.find("localization.suspects[0].kind"), std::string::npos) << e;
  doc = cluster_doc(x, json::array({switch_suspect(x.s, x.spine[0])}));
  doc["localization"]["suspects"][0]["node_index"] = -3;
  e = error_of("runs/c.json", doc);
  EXPECT_NE(e.find("localization.suspects[0].node_index"), std::string::npos) << e;
  doc = cluster_doc(x);
  doc["nodes"][1]["ib_ports"][0]["lid"] = 70000;
  e = error_of("runs/c.json", doc);
  EXPECT_NE(e.find("nodes[1].ib_ports[0].lid"), std::string::npos) << e;
}

TEST(ReportFabric, HeatMap_IsOrderedByLeafWithItsBounds) {
  Tree x = fat_tree(3, 2, 2);
  // Ranks interleaved over the leaves: rank r on host (r % 3) * 2 + r / 3.
  json doc = cluster_doc(x);
  for (int r = 0; r < 6; ++r) {
    const auto& h = x.s.nodes[static_cast<std::size_t>(x.host[static_cast<std::size_t>((r % 3) * 2 + r / 3)])];
    doc["nodes"][static_cast<std::size_t>(r)]["ib_ports"][0]["lid"] = h.lid();
    doc["nodes"][static_cast<std::size_t>(r)]["ib_ports"][0]["node_guid"] = sn::guid_hex(h.guid);
  }
  Input cluster = input_from_json("runs/cluster.json", doc);
  const Topology topo = build_topology(x.s, {});
  std::string why;
  const auto groups = leaf_groups(cluster.cluster, x.s, topo, &why);
  ASSERT_EQ(groups.size(), 3u) << why;
  EXPECT_EQ(groups[0].name, "S-leaf0");
  EXPECT_EQ(groups[0].ranks, (std::vector<int>{0, 3}));
  EXPECT_EQ(groups[2].ranks, (std::vector<int>{2, 5}));
  const HeatGrid g = build_heat_grid(cluster.cluster, 64, groups);
  ASSERT_EQ(g.blocks.size(), 6u);
  std::vector<int> order;
  for (const auto& b : g.blocks) order.push_back(b.first);
  EXPECT_EQ(order, (std::vector<int>{0, 3, 1, 4, 2, 5}));
  const std::string html = render(report_of({fabric_input(x.s), cluster})).html;
  EXPECT_NE(html.find("data-order=\"leaf\""), std::string::npos);
  EXPECT_EQ(count(html, "class=\"leaf-bound\""), 2u);
  EXPECT_EQ(count(html, "class=\"leaf-label\""), 3u);
  EXPECT_NE(html.find("Ordered by leaf switch"), std::string::npos);
  // Without the fabric: rank order, as before.
  const std::string alone = render(report_of({cluster})).html;
  EXPECT_EQ(alone.find("data-order=\"leaf\""), std::string::npos);
  EXPECT_EQ(count(alone, "class=\"leaf-bound\""), 0u);
}

TEST(ReportFabric, HeatMap_RoceNodesAreOrderedByTheirTopOfRackSwitch) {
  Tree x = fat_tree(3, 2, 2);
  json doc = cluster_doc(x);
  // No fabric input: the nodes' LLDP neighbours place them, "tor10" after "tor9".
  const char* tors[] = {"tor10", "tor9", "tor10", "tor9", "tor10", "tor9"};
  for (int r = 0; r < 6; ++r) {
    doc["nodes"][static_cast<std::size_t>(r)].erase("ib_ports");
    doc["nodes"][static_cast<std::size_t>(r)]["tor_switch"] = tors[r];
  }
  Input cluster = input_from_json("runs/cluster.json", doc);
  const auto groups = tor_groups(cluster.cluster);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].name, "tor9");
  EXPECT_EQ(groups[0].ranks, (std::vector<int>{1, 3, 5}));
  const std::string html = render(report_of({cluster})).html;
  EXPECT_NE(html.find("Ordered by top-of-rack switch"), std::string::npos);
  EXPECT_EQ(count(html, "class=\"leaf-bound\""), 1u);
}

TEST(ReportFabric, HeatMap_PastSixtyFourNodesIsOneBlockPerLeaf) {
  Tree x = fat_tree(4, 2, 20);  // 80 nodes
  Input cluster = input_from_json("runs/cluster.json", cluster_doc(x));
  const Topology topo = build_topology(x.s, {});
  const auto groups = leaf_groups(cluster.cluster, x.s, topo, nullptr);
  ASSERT_EQ(groups.size(), 4u);
  const HeatGrid g = build_heat_grid(cluster.cluster, 64, groups);
  EXPECT_TRUE(g.by_group);
  ASSERT_EQ(g.blocks.size(), 4u);
  EXPECT_EQ(g.blocks[1].ranks.size(), 20u);
  EXPECT_EQ(g.cells.size(), 16u);
}

TEST(ReportFabric, LeafGroups_RefuseANodeOfAnotherGuid) {
  Tree x = fat_tree(2, 2, 2);
  json doc = cluster_doc(x);
  doc["nodes"][1]["ib_ports"][0]["node_guid"] = "0002:c903:00a1:b2c3";
  Input cluster = input_from_json("runs/cluster.json", doc);
  const Topology topo = build_topology(x.s, {});
  std::string why;
  EXPECT_TRUE(leaf_groups(cluster.cluster, x.s, topo, &why).empty());
  EXPECT_NE(why.find("node1"), std::string::npos) << why;
  EXPECT_NE(why.find("another node GUID"), std::string::npos) << why;
  const std::string html = render(report_of({fabric_input(x.s), cluster})).html;
  EXPECT_EQ(html.find("data-order=\"leaf\""), std::string::npos);
  EXPECT_NE(html.find("In rank order"), std::string::npos);
}
