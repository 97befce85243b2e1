// The text of `fabscope fabric` and of a route: what a person reads, within 100 columns.
#include <gtest/gtest.h>

#include <sstream>

#include "fabric_builders.hpp"
#include "fabric/render.hpp"

using namespace fabscope;
using namespace fabscope::testing;

namespace {
void expect_fits(const std::string& text, std::size_t width) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) EXPECT_LE(line.size(), width) << line;
}
}  // namespace

TEST(FabricRender, SummaryCountsNodesLinksAndSms) {
  const Subnet s = healthy_fabric();
  const auto text = fabric::render_text(s, fabric::link_facts(s), {});
  EXPECT_NE(text.find("Subnet seen from mlx5_0:1, swept 2026-01-01T00:00:00Z in 0.25 s"), std::string::npos) << text;
  EXPECT_NE(text.find("4 switches, 4 HCAs, 0 routers; 8 links (8 active)"), std::string::npos) << text;
  EXPECT_NE(text.find("SM hca1 mlx5_0 lid 10 MASTER priority 15"), std::string::npos) << text;
  EXPECT_NE(text.find("no findings"), std::string::npos);
  EXPECT_EQ(text.find("Problem links"), std::string::npos);
}

TEST(FabricRender, ProblemLinksTableNamesTheLinkAndFitsTheWidth) {
  Subnet s = healthy_fabric();
  s.nodes[kLeaf.leaf1].description = "MF0;very-long-switch-name-in-row-12-rack-7:MQM8790-HS2F/U1";
  connect(s, kLeaf.leaf1, 7, kLeaf.spine1, 1, 1, Speed::HDR);
  const auto facts = fabric::link_facts(s);
  const auto findings = fabric::judge(s, {});
  for (std::size_t width : {100u, 80u}) {
    const auto text = fabric::render_text(s, facts, findings, width);
    EXPECT_NE(text.find("Problem links (1):"), std::string::npos) << text;
    EXPECT_NE(text.find("link_degraded"), std::string::npos) << text;
    EXPECT_NE(text.find("1 finding(s): 0 fail, 1 warn, 0 info; exit code 1"), std::string::npos) << text;
    // Both ends in full, never cut: the name, the port, the LID and the GUID.
    EXPECT_EQ(text.find('~'), std::string::npos) << text;
    EXPECT_NE(text.find("MF0;very-long-switch-name-in-row-12-rack-7:MQM8790-HS2F/U1:7 (LID "), std::string::npos) << text;
    EXPECT_NE(text.find(guid_hex(s.nodes[kLeaf.leaf1].guid)), std::string::npos) << text;
    EXPECT_NE(text.find("S-spine1:1 (LID "), std::string::npos) << text;
    // The remedy's ibportstate commands carry real LIDs.
    EXPECT_EQ(text.find("ibportstate <lid>"), std::string::npos) << text;
    EXPECT_NE(text.find("'ibportstate " + std::to_string(s.nodes[kLeaf.leaf1].lid()) + " 7"), std::string::npos)
        << text;
    expect_fits(text, width);
  }
  // Without --expect the summary says how missing cables are found; with it, not.
  EXPECT_NE(fabric::render_text(s, facts, findings).find("--expect FILE"), std::string::npos);
  EXPECT_EQ(fabric::render_text(s, facts, findings, 100, true).find("--expect FILE"), std::string::npos);
}

TEST(FabricRender, RouteIsOneLinePerHopWithPortsInAndOut) {
  const Subnet s = healthy_fabric();
  const std::vector<fabric::Hop> hops = {
      {kLeaf.hca1, 0, 1}, {kLeaf.leaf1, 1, 7}, {kLeaf.spine1, 1, 2}, {kLeaf.leaf2, 7, 1}, {kLeaf.hca3, 1, 0}};
  const auto text = fabric::render_route(s, hops);
  // Five nodes, four links: hops are links, as ibtracert counts them.
  EXPECT_NE(text.find("Route from hca1 mlx5_0 to hca3 mlx5_0: 4 hop(s)"), std::string::npos) << text;
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  ASSERT_EQ(lines.size(), 7u) << text;  // title, header, 5 hops
  EXPECT_NE(lines[3].find("S-leaf1"), std::string::npos) << lines[3];
  EXPECT_NE(lines[3].find("4X HDR Active"), std::string::npos) << lines[3];
  EXPECT_NE(lines[6].find("hca3 mlx5_0"), std::string::npos) << lines[6];
  expect_fits(text, 100);
  const json j = fabric::route_json(s, hops);
  EXPECT_EQ(j["schema"], "fabscope.fabric.route");
  ASSERT_EQ(j["hops"].size(), 5u);
  EXPECT_EQ(j["hops"][1]["name"], "S-leaf1");
  EXPECT_EQ(j["hops"][1]["lid"], 3);
  EXPECT_EQ(j["hops"][1]["out_port"], 7);
}

TEST(FabricRender, RouteHeaderCountsLinksNotNodes) {
  const Subnet s = healthy_fabric();
  // Issue 45: 6 links were "7 hop(s)". A node to itself crosses no link.
  EXPECT_NE(fabric::render_route(s, {{kLeaf.hca1, 0, 0}}).find("Route from hca1 mlx5_0 to hca1 mlx5_0: 0 hop(s)"),
            std::string::npos);
  EXPECT_NE(fabric::render_route(s, {{kLeaf.hca1, 0, 1}, {kLeaf.leaf1, 1, 2}, {kLeaf.hca2, 1, 0}})
                .find("Route from hca1 mlx5_0 to hca2 mlx5_0: 2 hop(s)"),
            std::string::npos);
}

TEST(FabricRender, RouteBetweenTwoPortsOfOneHcaShowsEachPortsLid) {
  Subnet s = healthy_fabric();
  const int dual = add_node(s, NodeType::Hca, "dual mlx5_0", 0xe000, 2, 20);  // ports 1 and 2: LIDs 20, 21
  connect(s, dual, 1, kLeaf.leaf1, 3);
  connect(s, dual, 2, kLeaf.leaf2, 3);
  const std::vector<fabric::Hop> hops = {
      {dual, 0, 1}, {kLeaf.leaf1, 3, 7}, {kLeaf.spine1, 1, 2}, {kLeaf.leaf2, 7, 3}, {dual, 2, 0}};
  const auto text = fabric::render_route(s, hops);
  EXPECT_NE(text.find("Route from dual mlx5_0 to dual mlx5_0: 4 hop(s)"), std::string::npos) << text;
  const json j = fabric::route_json(s, hops);
  EXPECT_EQ(j["hops"][0]["lid"], 20);  // leaves by port 1
  EXPECT_EQ(j["hops"][4]["lid"], 21);  // enters by port 2
  EXPECT_EQ(j["hops"][1]["lid"], 3);   // a switch: its own
}

TEST(FabricRender, JsonAddsLinkFactsChecksFindingsAndExitCode) {
  Subnet s = healthy_fabric();
  s.sms.pop_back();
  const auto findings = fabric::judge(s, {});
  const json j = fabric::fabric_json(s, fabric::link_facts(s), findings);
  EXPECT_EQ(j["link_facts"].size(), 8u);
  EXPECT_EQ(j["checks"].size(), fabric::fabric_checks().size());
  EXPECT_EQ(j["findings"][0]["id"], "fabric.sm_no_standby");
  EXPECT_EQ(j["summary"]["worst"], "warn");
  EXPECT_EQ(j["exit_code"], 1);
  // Still a saved sweep.
  EXPECT_EQ(subnet_from_json(j).nodes.size(), 8u);
}

TEST(FabricRender, StreamedJsonIsTheDocumentByteForByte) {
  Subnet s = healthy_fabric();
  connect(s, kLeaf.leaf1, 7, kLeaf.spine1, 1, 1, Speed::HDR);  // a finding and a degraded link fact
  s.nodes[kLeaf.leaf2].description = "name with \"quotes\" and \\ backslash";
  const auto facts = fabric::link_facts(s);
  const auto findings = fabric::judge(s, {});
  std::ostringstream fabric;
  fabric::write_fabric_json(fabric, s, facts, findings);
  EXPECT_EQ(fabric.str(), dump_json(fabric::fabric_json(s, facts, findings)));
  std::ostringstream saved;
  fabric::write_json(saved, s, fabric::to_json_without_nodes(s));
  EXPECT_EQ(saved.str(), dump_json(fabric::to_json(s)));
  EXPECT_EQ(fabric::subnet_from_json(json::parse(saved.str())).nodes.size(), s.nodes.size());
}
