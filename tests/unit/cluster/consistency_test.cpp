// Consistency over node summaries: the majority is the reference, the odd nodes are named.
#include <gtest/gtest.h>

#include "../checks/node_builders.hpp"
#include "cluster/consistency.hpp"
#include "cluster/render.hpp"
#include "cluster/result.hpp"
#include "cluster/summary.hpp"
#include "checks/checks.hpp"
#include "core/error.hpp"

using namespace fabscope;
using namespace fabscope::cluster;

namespace {

NodeSummary node(int rank, const std::string& name, NodeInfo info) {
  info.hostname = name;
  return summarize_node(rank, info, nullptr, checks::run(info));
}

std::vector<NodeSummary> four_ib_nodes() {
  std::vector<NodeSummary> v;
  for (int i = 0; i < 4; ++i) v.push_back(node(i, "gpu" + std::to_string(i), fabscope::testing::healthy_ib_node()));
  return v;
}

const Finding* find(const std::vector<Finding>& fs, const std::string& id) {
  for (const auto& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

}  // namespace

TEST(Attributes, HealthyIbNodeHasRatesFirmwareAndPortCount) {
  auto a = node_attributes(fabscope::testing::healthy_ib_node(), nullptr);
  EXPECT_EQ(a["rdma.active_ports"], "2");
  EXPECT_EQ(a["rdma.link_layer"], "InfiniBand");
  EXPECT_EQ(a["rdma.rate"], "400 Gb/s x2");
  EXPECT_EQ(a["rdma.firmware"], "MT4129 28.39.1002");
  EXPECT_EQ(a["gdr.module"], "nvidia_peermem");
}

TEST(Consistency, IdenticalNodesGiveNoFinding) {
  auto c = judge_consistency(four_ib_nodes());
  EXPECT_TRUE(c.findings.empty());
  for (const auto& a : c.attributes) EXPECT_TRUE(a.odd.empty()) << a.key;
}

TEST(Consistency, OnePortAtHalfRateNamesTheOddNodeAndTheMajority) {
  NodeInfo slow = fabscope::testing::healthy_ib_node();
  slow.rdma_devices[1].ports[0].rate_gbps = 200;
  auto nodes = four_ib_nodes();
  nodes[2] = node(2, "gpu2", slow);
  auto c = judge_consistency(nodes);
  const Finding* f = find(c.findings, "cluster.rate_differs");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, Severity::Warn);
  EXPECT_EQ(f->subject, "rdma.rate");
  EXPECT_NE(f->evidence.find("reference 400 Gb/s x2 on 3 node(s)"), std::string::npos) << f->evidence;
  EXPECT_NE(f->evidence.find("200 Gb/s x1,400 Gb/s x1 on gpu2"), std::string::npos) << f->evidence;
  EXPECT_NE(f->remedy.find("gpu2"), std::string::npos);
  EXPECT_EQ(f->docs, "docs/checks.md#cluster-rate_differs");
}

TEST(Consistency, MtuGidFirmwareVersionsAndGdrEachGetTheirId) {
  NodeInfo odd = fabscope::testing::healthy_ib_node();
  odd.rdma_devices[0].ports[0].active_mtu = 1024;
  odd.rdma_devices[0].ports[0].active_mtu = 1024;
  odd.rdma_devices[1].ports[0].active_mtu = 1024;
  odd.rdma_devices[0].fw_ver = "28.36.1010";
  odd.versions.nccl = "2.18.1";
  odd.kernel.modules.clear();
  auto nodes = four_ib_nodes();
  for (auto& n : nodes) n.attributes["rdma.active_mtu"] = "4096";
  nodes[3] = node(3, "gpu3", odd);
  auto c = judge_consistency(nodes);
  for (const char* id : {"cluster.mtu_differs", "cluster.firmware_differs", "cluster.version_differs",
                         "cluster.gdr_differs"}) {
    const Finding* f = find(c.findings, id);
    ASSERT_TRUE(f) << id;
    EXPECT_NE(f->remedy.find("gpu3"), std::string::npos) << id;
  }
}

TEST(Consistency, NodeWithoutActivePortsIsRdmaMissingNotACountDifference) {
  NodeInfo none = fabscope::testing::healthy_ib_node();
  none.rdma_devices.clear();
  auto nodes = four_ib_nodes();
  nodes[1] = node(1, "gpu1", none);
  auto c = judge_consistency(nodes);
  const Finding* f = find(c.findings, "cluster.rdma_missing");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, Severity::Fail);
  EXPECT_EQ(f->subject, "gpu1");
  EXPECT_FALSE(find(c.findings, "cluster.active_ports_differs"));
}

TEST(Consistency, EnvPlanDifferenceAndUnsetVariable) {
  auto nodes = four_ib_nodes();
  for (auto& n : nodes) n.attributes["env.NCCL_IB_HCA"] = "=mlx5_0:1,mlx5_1:1";
  nodes[0].attributes["env.NCCL_IB_HCA"] = "=mlx5_2:1,mlx5_3:1";
  nodes[1].attributes["env.NCCL_IB_GID_INDEX"] = "3";
  auto c = judge_consistency(nodes);
  int env = 0;
  for (const auto& f : c.findings)
    if (f.id == "cluster.env_plan_differs") {
      ++env;
      if (f.subject == "env.NCCL_IB_GID_INDEX") {
        EXPECT_NE(f.evidence.find("3 on gpu1"), std::string::npos) << f.evidence;
      }
      if (f.subject == "env.NCCL_IB_HCA") {
        EXPECT_NE(f.evidence.find("on gpu0"), std::string::npos) << f.evidence;
      }
    }
  EXPECT_EQ(env, 2);
}

TEST(Consistency, TwoAgainstTwoIsATieAndSaysSo) {
  auto nodes = four_ib_nodes();
  nodes[0].attributes["kernel.release"] = nodes[1].attributes["kernel.release"] = "6.1.0-18";
  nodes[2].attributes["kernel.release"] = nodes[3].attributes["kernel.release"] = "6.1.0-21";
  auto c = judge_consistency(nodes);
  const Finding* f = find(c.findings, "cluster.version_differs");
  ASSERT_TRUE(f);
  EXPECT_NE(f->message.find("no majority"), std::string::npos);
}

TEST(Consistency, UnknownValuesAreNotOdd) {
  auto nodes = four_ib_nodes();
  nodes[1].attributes["versions.nccl"] = "";
  EXPECT_TRUE(judge_consistency(nodes).findings.empty());
}

TEST(JudgeNodes, MissingNodeFailingNodeAndVersionMismatchAreNamed) {
  auto nodes = four_ib_nodes();
  nodes[1].findings.push_back({"link.port_down", Severity::Fail, "mlx5_0:1", "down", "state=DOWN", "fix", ""});
  nodes[2].fabscope_version = "0.0.9";
  ClusterInput in;
  in.launcher = "env";
  in.world = 5;
  in.nodes = nodes;
  in.missing = {{"gpu4", "never joined"}};
  auto r = judge(in);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings.front().severity, Severity::Fail);
  EXPECT_TRUE(find(r.findings, "cluster.node_missing"));
  EXPECT_EQ(find(r.findings, "cluster.node_fails_check")->subject, "gpu1");
  EXPECT_EQ(find(r.findings, "cluster.version_mismatch")->subject, "gpu2");
  auto cmds = drain_commands(r);
  ASSERT_EQ(cmds.size(), 3u);  // gpu1 (port down), gpu2 (version), gpu4 (missing)
  EXPECT_EQ(cmds[2], "scontrol update NodeName=gpu4 State=DRAIN Reason=\"fabscope: cluster.node_missing\"");
  EXPECT_EQ(cmds[0], "scontrol update NodeName=gpu1 State=DRAIN Reason=\"fabscope: link.port_down@mlx5_0:1\"");
  EXPECT_EQ(exit_code(r), 2);
}

TEST(Summary, RoundTripsThroughJson) {
  auto s = four_ib_nodes()[0];
  s.pair_address = "10.0.0.1:4000";
  auto back = summary_from_json(json(s));
  EXPECT_EQ(back.name, s.name);
  EXPECT_EQ(back.attributes, s.attributes);
  EXPECT_EQ(back.pair_address, s.pair_address);
}

TEST(Summary, ARankBeyondAnIntIsRefusedNotTruncated) {
  // 2^32 + 1 truncated to 32 bits is rank 1: a peer could have taken rank 1's place.
  for (json rank : {json(4294967297ull), json(-1), json(1'000'001)}) {
    json j = four_ib_nodes()[0];
    j["rank"] = rank;
    try {
      summary_from_json(j);
      ADD_FAILURE() << "accepted rank " << rank.dump();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("'rank' out of range: " + rank.dump()), std::string::npos) << e.what();
    }
  }
  json j = four_ib_nodes()[0];
  j["schema_version"] = 4294967297ull;
  EXPECT_THROW(summary_from_json(j), Error);
}

TEST(Summary, MalformedFieldsAreNamed) {
  json j = four_ib_nodes()[0];
  j["attributes"]["rdma.rate"] = 5;
  EXPECT_THROW(summary_from_json(j), Error);
  j = four_ib_nodes()[0];
  j.erase("rank");
  try {
    summary_from_json(j);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'rank'"), std::string::npos);
  }
  j = four_ib_nodes()[0];
  j["schema_version"] = 2;
  EXPECT_THROW(summary_from_json(j), Error);
}

TEST(Render, TextFitsOneHundredColumnsAndDrainLinesPasteBack) {
  auto nodes = four_ib_nodes();
  for (int i = 0; i < 12; ++i)
    nodes[1].findings.push_back({"link.port_down", Severity::Fail, "mlx5_" + std::to_string(i) + ":1", "down",
                                 "state=DOWN", "fix", ""});
  nodes[3].attributes["rdma.rate"] = "200 Gb/s x2";
  ClusterInput in;
  in.launcher = "mpi";
  in.world = 4;
  in.nodes = nodes;
  auto r = judge(in);
  const std::string text = render_text(r, false);
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    EXPECT_LE(end - start, 100u) << text.substr(start, end - start);
    start = end + 1;
  }
  // The shell's view of the drain block: backslash-newline removed.
  auto block = text.substr(text.find("to drain"));
  block = block.substr(block.find('\n') + 1);
  block = block.substr(0, block.find("\n\n"));
  std::string joined;
  for (std::size_t i = 0; i < block.size(); ++i) {
    if (block[i] == '\\' && i + 1 < block.size() && block[i + 1] == '\n') ++i;
    else joined += block[i];
  }
  EXPECT_EQ(joined, "  " + drain_commands(r)[0]);
}
