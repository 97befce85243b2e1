// The cabling plan: both formats read (and refused with file:line), written from a sweep and read
// back, and judged against fabrics with a cable missing, moved to another port or another switch,
// not planned, and a node absent.
#include "fabric/plan.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "fabric_builders.hpp"
#include "fabric/judge.hpp"

using namespace fabscope;
using namespace fabscope::testing;

namespace {

std::string plan_error(const std::string& text) {
  try {
    parse_plan(text, "plan.csv");
  } catch (const Error& e) {
    return e.what();
  }
  return "accepted";
}

std::vector<std::string> plan_ids(const std::vector<Finding>& fs) {
  std::vector<std::string> ids;
  for (const auto& f : fs) ids.push_back(f.id);
  return ids;
}

// The healthy fabric's cabling, as ibnetdiscover writes it for nodes it has descriptions of, with a
// port GUID between a port and its peer as real ibnetdiscover output has.
const char* kHealthyTopology = R"(vendid=0x2c9
devid=0xd2f0
switchguid=0x3000(3000)
Switch	8 "S-leaf1"		# "S-leaf1" base port 0 lid 3 lmc 0
[1]	"hca1 mlx5_0"[1](a001) 		# lid 10 4xHDR
[2]	"hca2 mlx5_0"[1]		# lid 11 4xHDR
[7]	"S-spine1"[1]		# lid 1 4xHDR
[8]	"S-spine2"[1]		# lid 2 4xHDR

Switch	8 "S-leaf2"
[1]	"hca3 mlx5_0"[1]
[2]	"hca4 mlx5_0"[1]
[7]	"S-spine1"[2]
[8]	"S-spine2"[2]

Switch	8 "S-spine1"
[1]	"S-leaf1"[7]
[2]	"S-leaf2"[7]

Switch	8 "S-spine2"
[1]	"S-leaf1"[8]
[2]	"S-leaf2"[8]
)";

}  // namespace

TEST(CablingPlan, CsvLinesCommentsAndNamesWithColons) {
  auto p = parse_plan("# plan\n\nS-leaf1:1 , hca1 mlx5_0:1\nMF0;sw01:MQM8700/U1:31,S-leaf1:7   # uplink\n"
                      "hca1 mlx5_0:1,S-leaf1:1\n",
                      "plan.csv");
  ASSERT_EQ(p.cables.size(), 2u);  // the third line is the first cable from its other end
  EXPECT_EQ(p.cables[0].a.node, "S-leaf1");
  EXPECT_EQ(p.cables[0].b.node, "hca1 mlx5_0");
  EXPECT_EQ(p.cables[1].a.node, "MF0;sw01:MQM8700/U1");
  EXPECT_EQ(p.cables[1].a.port, 31);
  EXPECT_EQ(p.cables[1].line, 4);
}

TEST(CablingPlan, IbnetdiscoverTopologyIsAPlan) {
  auto p = parse_plan(kHealthyTopology, "fabric.topo");
  // 4 host cables and 4 uplinks; the spines' lines and the Ca block repeat them
  ASSERT_EQ(p.cables.size(), 8u);
  EXPECT_TRUE(judge_plan(healthy_fabric(), p).empty()) << plan_ids(judge_plan(healthy_fabric(), p)).size();
  // ibnetdiscover's name for a node without a description is its GUID: it finds hca1.
  auto fs = judge_plan(healthy_fabric(), parse_plan("Ca\t1 \"H-000000000000a000\"\n[1](a001) \t\"S-leaf1\"[1]\n", "t"));
  for (const auto& f : fs) EXPECT_EQ(f.id, "fabric.plan_cable_extra") << f.message;
  EXPECT_EQ(fs.size(), 7u);  // the other seven cables are not in this one-cable plan
}

TEST(CablingPlan, BadLinesNameFileAndLine) {
  EXPECT_NE(plan_error("S-leaf1:1,hca1:1\nS-leaf1:x,hca2:1\n").find("plan.csv:2: port 'x' is not a number"), std::string::npos);
  EXPECT_NE(plan_error("S-leaf1:0,hca1:1\n").find("plan.csv:1: port 0 is outside 1-254"), std::string::npos);
  EXPECT_NE(plan_error("S-leaf1:1\n").find("plan.csv:1: expected NODE:PORT,NODE:PORT"), std::string::npos);
  EXPECT_NE(plan_error("S-leaf1,hca1:1\n").find("plan.csv:1: 'S-leaf1' is not NODE:PORT"), std::string::npos);
  EXPECT_NE(plan_error("a:1,a:1\n").find("plan.csv:1: a cable from a:1 to itself"), std::string::npos);
  EXPECT_NE(plan_error("a:1,b:1\nc:2,a:1\n").find("plan.csv:2: a:1 is planned to b:1 on line 1 already"), std::string::npos)
      << plan_error("a:1,b:1\nc:2,a:1\n");
  EXPECT_NE(plan_error("# nothing\n").find("plan.csv: no cable in the plan"), std::string::npos);
  EXPECT_NE(plan_error("[1]\t\"x\"[1]\n").find("plan.csv:1: a port line before any Switch or Hca line"), std::string::npos);
  EXPECT_NE(plan_error("Switch 8 \"S-a\"\n[1]\t\"x\"\n").find("plan.csv:2: the remote port"), std::string::npos);
  EXPECT_NE(plan_error(std::string(5000, 'x')).find("longer than 4096"), std::string::npos);
}

TEST(CablingPlan, WrittenFromASweepAndReadBackItIsQuiet) {
  auto s = healthy_fabric();
  auto text = plan_csv(s);
  EXPECT_NE(text.find("S-leaf1:1,hca1 mlx5_0:1\n"), std::string::npos) << text;
  auto p = parse_plan(text, "saved.csv");
  EXPECT_EQ(p.cables.size(), 8u);
  EXPECT_TRUE(judge_plan(s, p).empty());
  // A description two nodes share is written as the GUID, which reads back to the same node.
  s.nodes[kLeaf.hca2].description = "hca1 mlx5_0";
  text = plan_csv(s);
  EXPECT_NE(text.find("0x000000000000a000:1"), std::string::npos) << text;
  EXPECT_NE(text.find("0x000000000000b000:1"), std::string::npos) << text;
  EXPECT_TRUE(judge_plan(s, parse_plan(text, "saved.csv")).empty());
}

TEST(CablingPlan, MissingMiswiredExtraAndAbsentAreNamed) {
  const auto plan = parse_plan(plan_csv(healthy_fabric()), "plan.csv");
  // A cable never put in: hca4's.
  auto s = healthy_fabric();
  port_of(s, kLeaf.hca4, 1).remote_node = -1;
  port_of(s, kLeaf.leaf2, 2).remote_node = -1;
  auto fs = judge_plan(s, plan);
  ASSERT_EQ(fs.size(), 1u) << plan_ids(fs)[0];
  EXPECT_EQ(fs[0].id, "fabric.plan_cable_missing");
  EXPECT_EQ(fs[0].subject, "S-leaf2:2 <-> hca4 mlx5_0:1");
  EXPECT_NE(fs[0].evidence.find("plan.csv:"), std::string::npos);

  // hca1 moved from leaf1 port 1 to leaf1 port 3: the right switch, the wrong port.
  s = healthy_fabric();
  port_of(s, kLeaf.leaf1, 1).remote_node = -1;
  connect(s, kLeaf.hca1, 1, kLeaf.leaf1, 3);
  fs = judge_plan(s, plan);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "fabric.plan_miswired");
  EXPECT_NE(fs[0].message.find("hca1 mlx5_0:1 goes to S-leaf1:3 (the right node, the wrong port)"), std::string::npos)
      << fs[0].message;

  // hca1 moved to leaf2 port 5: another switch.
  s = healthy_fabric();
  port_of(s, kLeaf.leaf1, 1).remote_node = -1;
  connect(s, kLeaf.hca1, 1, kLeaf.leaf2, 5);
  fs = judge_plan(s, plan);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_NE(fs[0].message.find("hca1 mlx5_0:1 goes to S-leaf2:5 (another node)"), std::string::npos) << fs[0].message;

  // A third uplink nobody planned: extra, information.
  s = healthy_fabric();
  connect(s, kLeaf.leaf1, 6, kLeaf.spine1, 6);
  fs = judge_plan(s, plan);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "fabric.plan_cable_extra");
  EXPECT_EQ(fs[0].severity, Severity::Info);
  EXPECT_EQ(fs[0].subject, "S-spine1:6 <-> S-leaf1:6");

  // A planned node the fabric does not have: said once, its cables not judged further.
  auto with_ghost = parse_plan(plan_csv(healthy_fabric()) + "ghost-host mlx5_0:1,S-leaf2:4\n", "plan.csv");
  fs = judge_plan(healthy_fabric(), with_ghost);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "fabric.plan_node_missing");
  EXPECT_EQ(fs[0].severity, Severity::Fail);
  EXPECT_NE(fs[0].message.find("\"ghost-host mlx5_0\" is not in the fabric"), std::string::npos);

  // judge() takes the plan from its options.
  JudgeOptions o;
  o.plan = with_ghost;
  bool said = false;
  for (const auto& f : judge(healthy_fabric(), o)) said = said || f.id == "fabric.plan_node_missing";
  EXPECT_TRUE(said);
}
