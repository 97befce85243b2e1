// Rendering of findings (check) and the doctor's description, verdict and next steps.
#include <gtest/gtest.h>

#include <sstream>

#include "checks/checks.hpp"
#include "checks/doctor.hpp"
#include "checks/families.hpp"
#include "checks/render.hpp"
#include "node_builders.hpp"

using namespace fabscope;
using namespace fabscope::testing;

namespace {

void expect_width(const std::string& text, std::size_t width) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) EXPECT_LE(line.size(), width) << line;
}

NodeInfo troubled_node() {
  NodeInfo n = healthy_roce_node();
  port0(n, "mlx5_1").state = "DOWN";
  netdev(n, "eth2").mtu = 1500;
  n.kernel.cmdline += " intel_iommu=on";
  n.rdma_devices[1].fw_ver = "28.40.1000";
  return n;
}

}  // namespace

TEST(WrapLines, BreaksAtBlanksAndCutsWordsLongerThanTheWidth) {
  auto lines = checks::wrap_lines("aaa bbb ccc 0123456789abcdef", 8);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "aaa bbb");
  EXPECT_EQ(lines[1], "ccc");
  EXPECT_EQ(lines[2], "01234567");
  EXPECT_EQ(lines[3], "89abcdef");
  EXPECT_TRUE(checks::wrap_lines("", 10).empty());
}

TEST(RenderFindings, FitsTheWidthAndKeepsEveryWord) {
  auto fs = checks::run(troubled_node());
  for (std::size_t w : {60u, 80u, 100u}) {
    std::string text = checks::render_findings(fs, w);
    expect_width(text, w);
    EXPECT_NE(text.find("link.port_down"), std::string::npos);
    EXPECT_NE(text.find("remedy:"), std::string::npos);
  }
}

TEST(RenderCheckText, SummaryLineCountsBySeverityAndGivesTheExitCode) {
  NodeInfo n = troubled_node();
  auto fs = checks::run(n);
  std::string text = checks::render_check_text(n, fs);
  EXPECT_NE(text.find(std::to_string(fs.size()) + " finding(s): 1 fail, "), std::string::npos) << text;
  EXPECT_NE(text.find("exit code 2"), std::string::npos);
}

TEST(RenderCheckText, NoFindingsSaysSo) {
  NodeInfo n = healthy_ib_node();
  std::string text = checks::render_check_text(n, {});
  EXPECT_EQ(text.rfind("no findings\n", 0), 0u) << text;
  EXPECT_NE(text.find("0 fail, 0 warn, 0 info"), std::string::npos);
}

TEST(CheckJson, CarriesSchemaFindingsSummaryAndExitCode) {
  NodeInfo n = troubled_node();
  auto fs = checks::run(n);
  json j = checks::check_json(n, fs);
  EXPECT_EQ(j.at("schema"), "fabscope.check");
  EXPECT_EQ(j.at("schema_version"), 1);
  EXPECT_EQ(j.at("hostname"), "node1");
  EXPECT_EQ(j.at("findings").size(), fs.size());
  EXPECT_EQ(j.at("summary").at("fail"), 1);
  EXPECT_EQ(j.at("summary").at("worst"), "fail");
  EXPECT_EQ(j.at("exit_code"), 2);
  EXPECT_EQ(j.at("checks").size(), checks::registry().size());
  EXPECT_EQ(j.at("findings")[0].get<Finding>().id, fs[0].id);  // findings read back
}

TEST(Doctor, HealthyRdmaNodeSaysRdmaWithGpuDirect) {
  NodeInfo n = healthy_ib_node();
  auto r = checks::diagnose_node(n, checks::run(n));
  EXPECT_EQ(r.verdict, "healthy");
  EXPECT_EQ(r.transport, "rdma");
  ASSERT_FALSE(r.description.empty());
  EXPECT_NE(r.description[0].find("2 GPUs (NVIDIA H100 80GB HBM3"), std::string::npos) << r.description[0];
  EXPECT_NE(r.description[0].find("2 RDMA devices (mlx5_0, mlx5_1; 2/2 ports ACTIVE, InfiniBand)"),
            std::string::npos) << r.description[0];
  EXPECT_NE(r.description[0].find("with GPUDirect RDMA (nvidia_peermem loaded)"), std::string::npos);
  ASSERT_EQ(r.next_steps.size(), 1u);
  EXPECT_EQ(r.next_steps[0], "nothing to fix");
}

TEST(Doctor, GpusWithoutRdmaSayTcpSocketsAndShowNvlinkWhenKnown) {
  NodeInfo n = healthy_ib_node();
  n.rdma_devices.clear();
  for (auto& g : n.gpus) g.nvlink_total = g.nvlink_active = 18;
  Netdev eth;
  eth.name = "eth0";
  eth.mtu = 1500;
  eth.operstate = "up";
  n.netdevs.push_back(eth);
  auto r = checks::diagnose_node(n, checks::run(n));
  EXPECT_EQ(r.transport, "sockets");
  EXPECT_EQ(r.description[0],
            "2 GPUs (NVIDIA H100 80GB HBM3, NVLink 18/18 up), no RDMA device: multi-node NCCL traffic "
            "would use TCP sockets over eth0 (MTU 1500).");
  EXPECT_NE(r.next_steps.back().find("NCCL_SOCKET_IFNAME=eth0"), std::string::npos);
}

TEST(Doctor, NodeWithoutGpuOrRdmaIsQuiet) {
  NodeInfo n;
  n.hostname = "login1";
  n.kernel.memlock_soft_bytes = 65536;
  auto r = checks::diagnose_node(n, checks::run(n));
  EXPECT_EQ(r.verdict, "healthy");
  EXPECT_TRUE(r.findings.empty());
  EXPECT_NE(r.description[0].find("no NVIDIA GPU, no RDMA device: not a GPU or RDMA node"), std::string::npos)
      << r.description[0];
  std::string text = checks::render_doctor_text(n, r);
  EXPECT_NE(text.find("verdict: healthy"), std::string::npos);
  EXPECT_EQ(text.find("SEV"), std::string::npos) << "no findings table expected:\n" << text;
}

TEST(Doctor, VerdictFollowsTheWorstFindingAndStepsFollowSeverity) {
  NodeInfo n = troubled_node();
  Finding lint = make_finding("verbs.library_missing", Severity::Warn, "node", "m", "e", "r");
  auto r = checks::diagnose_node(n, {lint});
  EXPECT_EQ(r.verdict, "degraded");
  r = checks::diagnose_node(n, checks::run(n));
  EXPECT_EQ(r.verdict, "broken");
  ASSERT_FALSE(r.next_steps.empty());
  EXPECT_EQ(r.next_steps[0].rfind("link.port_down (mlx5_1:1): ", 0), 0u) << r.next_steps[0];
  std::string text = checks::render_doctor_text(n, r);
  expect_width(text, 100);
  json j = checks::doctor_json(n, r);
  EXPECT_EQ(j.at("schema"), "fabscope.doctor");
  EXPECT_EQ(j.at("verdict"), "broken");
  EXPECT_EQ(j.at("exit_code"), 2);
}
