// Which engine measures a pair (auto: rdma where both nodes offer it, else tcp with the reason;
// rdma: such a pair is reported, not measured), and how rank 0 judges and reports mixed engines.
#include <gtest/gtest.h>

#include "../checks/node_builders.hpp"
#include "checks/checks.hpp"
#include "cluster/engine_choice.hpp"
#include "cluster/render.hpp"
#include "cluster/result.hpp"
#include "core/error.hpp"

using namespace fabscope;
using namespace fabscope::cluster;

namespace {

PairEndpoints with_rdma(const std::string& name, int i) {
  const std::string ip = "10.10.0." + std::to_string(i + 1);
  return {name, ip + ":4000", ip + ":5000", "rxe0:1 on eth0"};
}
PairEndpoints without_rdma(const std::string& name, int i) {
  return {name, "10.10.0." + std::to_string(i + 1) + ":4000", "", "rdma.no_device: no ACTIVE RDMA port here"};
}

// n nodes with RDMA except `tcp_only`; every pair measured with the engine auto picks, RDMA
// pairs near 20 Gb/s, tcp pairs near 3 Gb/s (slower by nature, not because of the node).
ClusterInput mixed(int n, int tcp_only) {
  ClusterInput in;
  in.launcher = "env";
  in.world = n;
  in.engine_mode = "auto";
  in.pairs = parse_pairs("all");
  in.rounds = static_cast<std::size_t>(n % 2 ? n : n - 1);
  std::vector<PairEndpoints> offers;
  for (int i = 0; i < n; ++i) {
    NodeInfo info = fabscope::testing::healthy_ib_node();
    info.hostname = "vm" + std::to_string(i);
    NodeSummary s = summarize_node(i, info, nullptr, checks::run(info));
    offers.push_back(i == tcp_only ? without_rdma(s.name, i) : with_rdma(s.name, i));
    s.pair_address = offers.back().tcp_address;
    s.rdma_address = offers.back().rdma_address;
    s.rdma_note = offers.back().rdma_note;
    in.nodes.push_back(s);
  }
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      PairResult p;
      p.a = a;
      p.b = b;
      auto c = choose_pair_engine(EngineMode::Auto, offers[static_cast<std::size_t>(a)], offers[static_cast<std::size_t>(b)]);
      p.engine = c.engine;
      p.engine_reason = c.reason;
      const double base = c.engine == "rdma" ? 20.0 : 3.0;
      p.a_to_b_gbps = base + 0.1 * a;
      p.b_to_a_gbps = base + 0.1 * b;
      in.pair_results.push_back(p);
    }
  return in;
}

const Finding* find_finding(const std::vector<Finding>& fs, const std::string& id) {
  for (const auto& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

}  // namespace

TEST(EngineChoice, AutoTakesRdmaWhenBothNodesOfferIt) {
  auto c = choose_pair_engine(EngineMode::Auto, with_rdma("vm0", 0), with_rdma("vm1", 1));
  EXPECT_EQ(c.engine, "rdma");
  EXPECT_NE(c.reason.find("vm0 rxe0:1 on eth0"), std::string::npos) << c.reason;
  EXPECT_NE(c.reason.find("vm1 rxe0:1 on eth0"), std::string::npos) << c.reason;
}

TEST(EngineChoice, AutoFallsBackToTcpNamingTheNodeWithoutRdmaAndWhy) {
  auto c = choose_pair_engine(EngineMode::Auto, with_rdma("vm0", 0), without_rdma("vm1", 1));
  EXPECT_EQ(c.engine, "tcp");
  EXPECT_EQ(c.reason, "fallback: vm1 has no usable RDMA endpoint (rdma.no_device: no ACTIVE RDMA port here)");
  // Either side: the same pair seen from the other end gives the same answer.
  EXPECT_EQ(choose_pair_engine(EngineMode::Auto, without_rdma("vm1", 1), with_rdma("vm0", 0)).engine, "tcp");
}

TEST(EngineChoice, AutoNamesBothNodesWhenNeitherHasRdma) {
  auto c = choose_pair_engine(EngineMode::Auto, without_rdma("vm0", 0), without_rdma("vm1", 1));
  EXPECT_EQ(c.engine, "tcp");
  EXPECT_NE(c.reason.find("vm0 has no usable"), std::string::npos);
  EXPECT_NE(c.reason.find("vm1 has no usable"), std::string::npos);
}

TEST(EngineChoice, RdmaOnlyReportsAPairWithoutRdmaAsNotMeasured) {
  auto c = choose_pair_engine(EngineMode::Rdma, with_rdma("vm0", 0), without_rdma("vm1", 1));
  EXPECT_EQ(c.engine, "");
  EXPECT_NE(c.reason.find("--engine rdma: vm1 has no usable RDMA endpoint"), std::string::npos) << c.reason;
  EXPECT_EQ(choose_pair_engine(EngineMode::Rdma, with_rdma("vm0", 0), with_rdma("vm1", 1)).engine, "rdma");
}

TEST(EngineChoice, TcpNeverUsesRdma) {
  auto c = choose_pair_engine(EngineMode::Tcp, with_rdma("vm0", 0), with_rdma("vm1", 1));
  EXPECT_EQ(c.engine, "tcp");
  EXPECT_EQ(c.reason, "--engine tcp");
  PairEndpoints no_tcp = with_rdma("vm1", 1);
  no_tcp.tcp_address.clear();
  EXPECT_EQ(choose_pair_engine(EngineMode::Tcp, with_rdma("vm0", 0), no_tcp).engine, "");
}

TEST(EngineChoice, ModeParsesItsFourNamesAndNamesABadOne) {
  EXPECT_EQ(parse_engine_mode("auto"), EngineMode::Auto);
  EXPECT_EQ(parse_engine_mode("rdma"), EngineMode::Rdma);
  EXPECT_EQ(parse_engine_mode("tcp"), EngineMode::Tcp);
  EXPECT_EQ(parse_engine_mode("nccl"), EngineMode::Nccl);
  try {
    parse_engine_mode("gloo");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'gloo'"), std::string::npos);
  }
}

TEST(JudgeEngines, FallbackNodeIsWarnedNotCalledSlow) {
  auto r = judge(mixed(5, 1));
  EXPECT_EQ(r.input.engine, "rdma");
  EXPECT_TRUE(r.outliers.judged);
  EXPECT_EQ(r.outliers.measured, 6u);  // the 6 RDMA pairs among vm0, vm2, vm3, vm4
  EXPECT_TRUE(r.outliers.slow_nodes.empty());
  EXPECT_TRUE(r.outliers.slow_links.empty());
  const Finding* f = find_finding(r.findings, "cluster.pair_engine_fallback");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, Severity::Warn);
  EXPECT_EQ(f->subject, "vm1");
  EXPECT_NE(f->evidence.find("rdma.no_device"), std::string::npos) << f->evidence;
  EXPECT_FALSE(find_finding(r.findings, "cluster.slow_node"));
}

TEST(JudgeEngines, SlowNodeIsFoundAmongRdmaPairs) {
  auto in = mixed(5, 1);
  for (auto& p : in.pair_results)
    if (p.engine == "rdma" && (p.a == 3 || p.b == 3)) p.a_to_b_gbps = p.b_to_a_gbps = 2.0;
  auto r = judge(in);
  ASSERT_EQ(r.outliers.slow_nodes.size(), 1u);
  EXPECT_EQ(r.outliers.slow_nodes[0].rank, 3);
  EXPECT_EQ(find_finding(r.findings, "cluster.slow_node")->subject, "vm3");
}

TEST(JudgeEngines, NoNodeWithRdmaIsOneInfoNote) {
  auto in = mixed(4, -1);
  for (auto& n : in.nodes) n.rdma_address.clear(), n.rdma_note = "rdma.no_device: no ACTIVE RDMA port here";
  for (auto& p : in.pair_results) p.engine = "tcp", p.engine_reason = "fallback";
  auto r = judge(in);
  EXPECT_EQ(r.input.engine, "tcp");
  const Finding* f = find_finding(r.findings, "cluster.pair_engine_fallback");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, Severity::Info);
  EXPECT_EQ(exit_code(r), 0);
}

TEST(JudgeEngines, JsonSaysPerPairWhichEngineRanAndWhy) {
  auto j = cluster_json(judge(mixed(4, 2)));
  const auto& pw = j.at("pairwise");
  EXPECT_EQ(pw.at("engine"), "rdma");
  EXPECT_EQ(pw.at("engine_mode"), "auto");
  EXPECT_EQ(pw.at("pairs_by_engine").at("rdma"), 3);
  EXPECT_EQ(pw.at("pairs_by_engine").at("tcp"), 3);
  for (const auto& p : pw.at("pairs")) {
    const bool touches = p.at("a") == 2 || p.at("b") == 2;
    EXPECT_EQ(p.at("engine"), touches ? "tcp" : "rdma");
    EXPECT_FALSE(p.at("engine_reason").get<std::string>().empty());
  }
  EXPECT_EQ(j.at("nodes").at(2).at("rdma_address"), "");
  EXPECT_EQ(j.at("nodes").at(0).at("rdma_address"), "10.10.0.1:5000");
}

TEST(JudgeEngines, TextNamesTheFallbackReasonWithin100Columns) {
  auto in = mixed(4, 2);
  in.nodes[2].rdma_note = std::string(150, 'x');
  for (auto& p : in.pair_results)
    if (p.engine == "tcp") p.engine_reason += std::string(150, 'y');
  const std::string text = render_text(judge(in), false);
  EXPECT_NE(text.find("engine auto: rdma 3, tcp 3; judged over rdma"), std::string::npos) << text;
  EXPECT_NE(text.find("3 pair(s) tcp: fallback: vm2 has no usable RDMA endpoint"), std::string::npos) << text;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    EXPECT_LE(end - start, 100u) << text.substr(start, end - start);
    start = end + 1;
  }
}

TEST(Summary, RdmaEndpointRoundTripsAndAnOlderSummaryHasNone) {
  NodeInfo info = fabscope::testing::healthy_ib_node();
  NodeSummary s = summarize_node(0, info, nullptr, {});
  s.rdma_address = "10.10.0.1:5000";
  s.rdma_note = "mlx5_0:1";
  auto back = summary_from_json(json(s));
  EXPECT_EQ(back.rdma_address, s.rdma_address);
  EXPECT_EQ(back.rdma_note, s.rdma_note);
  json older = json(s);
  older.erase("rdma_address");
  older.erase("rdma_note");
  EXPECT_EQ(summary_from_json(older).rdma_address, "");
  older["rdma_address"] = 7;
  EXPECT_THROW(summary_from_json(older), Error);
}

// Peer names, reasons and evidence come from other machines: rank 0's text prints them as text,
// never as terminal escape sequences.
TEST(ClusterText, NothingFromAPeerReachesTheTerminalAsAControlSequence) {
  auto in = mixed(4, 2);
  in.nodes[1].name = "vm1\x1b]0;owned\x07";
  for (auto& p : in.pair_results)
    if (p.engine == "tcp") p.engine_reason += " \x1b[2J\x9b" "31m";
  const std::string text = render_text(judge(in), false);
  for (char c : text) {
    const auto b = static_cast<unsigned char>(c);
    EXPECT_TRUE(b >= 0x20 || c == '\n') << "control byte " << int(b) << " in:\n" << text;
  }
  EXPECT_NE(text.find("vm1?]0;owned?"), std::string::npos) << text;
}
