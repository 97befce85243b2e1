// The nccl pair engine's parts that run without a GPU: which pairs it measures and why not, the
// unique id's text form on the exchange, the loop's length, the rendezvous token of a round, and
// the refusal of a build without CUDA. The engine itself runs on the device machine
// (bench/RESULTS.md).
#include <gtest/gtest.h>

#include "cluster/engine_choice.hpp"
#include "cluster/pair_engine.hpp"
#include "cluster/pair_plan.hpp"
#include "cluster/pair_round.hpp"
#include "cluster/result.hpp"
#include "cluster/summary.hpp"
#include "core/error.hpp"

using namespace fabscope;
using namespace fabscope::cluster;

namespace {

PairEndpoints gpu_node(const std::string& name) {
  PairEndpoints e{name, "", "", "--engine nccl"};
  e.nccl_device = "GPU 0 NVIDIA H100 80GB HBM3 (00000000:1B:00.0), NCCL 2.28.3";
  return e;
}
PairEndpoints cpu_node(const std::string& name) {
  PairEndpoints e{name, "", "", "--engine nccl"};
  e.nccl_note = "no CUDA GPU is visible";
  return e;
}

// An engine that records what the round gave it, as the nccl engine would get it.
class RecordingEngine : public PairEngine {
 public:
  std::string name() const override { return "nccl"; }
  std::string address() const override { return ""; }
  std::string pair_token(bool initiator) override { return initiator ? std::string(256, 'a') : ""; }
  PairSide run(const std::string& peer_address, bool initiator, std::chrono::milliseconds) override {
    got_address = peer_address;
    got_initiator = initiator;
    return {12.5, "", 13.0};
  }
  std::string got_address;
  bool got_initiator = false;
};

RoundPlan two_gpu_nodes() {
  RoundPlan p;
  p.joined = {0, 1};
  p.offers = {gpu_node("n0"), gpu_node("n1")};
  p.spec = {PairsMode::All, 0};
  return p;
}

}  // namespace

TEST(NcclEngineChoice, BothNodesWithAnNcclDeviceRunOverNccl) {
  const EngineChoice c = choose_pair_engine(EngineMode::Nccl, gpu_node("n0"), gpu_node("n1"));
  EXPECT_EQ(c.engine, "nccl");
  EXPECT_NE(c.reason.find("NCCL 2.28.3"), std::string::npos) << c.reason;
}

TEST(NcclEngineChoice, ANodeWithoutOneIsReportedWithItsReasonNotMeasured) {
  const EngineChoice c = choose_pair_engine(EngineMode::Nccl, gpu_node("n0"), cpu_node("n1"));
  EXPECT_EQ(c.engine, "");
  EXPECT_EQ(c.reason, "--engine nccl: n1 has no NCCL engine (no CUDA GPU is visible)");
}

TEST(NcclEngineChoice, AutoNeverPicksNccl) {
  PairEndpoints a = gpu_node("n0"), b = gpu_node("n1");
  a.tcp_address = "10.0.0.1:4000";
  b.tcp_address = "10.0.0.2:4000";
  EXPECT_EQ(choose_pair_engine(EngineMode::Auto, a, b).engine, "tcp");
}

TEST(NcclEngineChoice, ParsesNcclAndNamesItInTheError) {
  EXPECT_EQ(parse_engine_mode("nccl"), EngineMode::Nccl);
  EXPECT_STREQ(to_string(EngineMode::Nccl), "nccl");
  try {
    parse_engine_mode("gloo");
    ADD_FAILURE();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("nccl"), std::string::npos) << e.what();
  }
}

TEST(NcclPlan, EveryJoinedNodeIsPlannedAndItsDeviceTravels) {
  std::vector<Offer> offers = {{true, gpu_node("n0")}, {true, cpu_node("n1")}, {false, gpu_node("n2")}};
  RunOptions o;
  o.pairs = {PairsMode::All, 0};
  const RoundPlan p = read_plan(make_plan(offers, EngineMode::Nccl, o).dump());
  EXPECT_EQ(p.joined, (std::vector<int>{0, 1}));  // n1 is reported, not left out; n2 never joined
  EXPECT_EQ(p.offers[0].nccl_device, gpu_node("n0").nccl_device);
  EXPECT_EQ(p.offers[1].nccl_note, "no CUDA GPU is visible");
  EXPECT_EQ(pair_choice(p, EngineMode::Nccl, 0, 1).engine, "");
}

TEST(NcclSummary, DeviceAndNoteRoundTripAndMayBeAbsent) {
  NodeSummary s;
  s.name = "n0";
  s.fabscope_version = "x";
  s.nccl_device = "GPU 1 H100";
  s.nccl_note = "";
  const NodeSummary back = summary_from_json(json(s));
  EXPECT_EQ(back.nccl_device, "GPU 1 H100");
  json older = json(s);
  older.erase("nccl_device");
  older.erase("nccl_note");
  EXPECT_EQ(summary_from_json(older).nccl_device, "");
}

TEST(NcclUniqueId, HexRoundTripsEveryByte) {
  std::array<unsigned char, kNcclIdBytes> id{};
  for (std::size_t i = 0; i < id.size(); ++i) id[i] = static_cast<unsigned char>(i * 37 + 11);
  const std::string hex = nccl_id_hex(id);
  EXPECT_EQ(hex.size(), 256u);
  EXPECT_EQ(hex.substr(0, 4), "0b30");
  std::array<unsigned char, kNcclIdBytes> back{};
  ASSERT_TRUE(nccl_id_from_hex(hex, back));
  EXPECT_EQ(back, id);
}

TEST(NcclUniqueId, MalformedTextIsRefused) {
  std::array<unsigned char, kNcclIdBytes> id{};
  EXPECT_FALSE(nccl_id_from_hex("", id));
  EXPECT_FALSE(nccl_id_from_hex(std::string(254, 'a'), id));
  EXPECT_FALSE(nccl_id_from_hex(std::string(258, 'a'), id));
  EXPECT_FALSE(nccl_id_from_hex(std::string(255, 'a') + "g", id));
  EXPECT_FALSE(nccl_id_from_hex(std::string(255, 'a') + "A", id));  // the exchange carries lowercase
}

TEST(NcclTransferCount, FillsTheDurationWithinBounds) {
  EXPECT_EQ(nccl_transfer_count(2.0, 0.1), 20);
  EXPECT_EQ(nccl_transfer_count(2.0, 0.3), 7);      // rounded up: at least the duration
  EXPECT_EQ(nccl_transfer_count(2.0, 5.0), 2);      // slower than the duration: 2 transfers
  EXPECT_EQ(nccl_transfer_count(60.0, 1e-9), 100'000);
  EXPECT_EQ(nccl_transfer_count(2.0, 0.0), 2);
  EXPECT_EQ(nccl_transfer_count(2.0, -1.0), 2);
}

TEST(NcclRound, TheInitiatorMakesTheTokenAndTheResponderRunsWithIt) {
  RecordingEngine e0, e1;
  PairEngines v0, v1;
  v0.mode = v1.mode = EngineMode::Nccl;
  v0.nccl = &e0;
  v1.nccl = &e1;
  const RoundPlan p = two_gpu_nodes();
  const std::string token = my_pair_token(p, 0, 1, v0);
  EXPECT_EQ(token, std::string(256, 'a'));
  EXPECT_EQ(my_pair_token(p, 1, 0, v1), "");
  const json r1 = run_my_pair(p, 1, 0, v1, std::chrono::milliseconds(10), token);
  EXPECT_EQ(e1.got_address, token);
  EXPECT_FALSE(e1.got_initiator);
  EXPECT_EQ(r1["rx_gbps"], 12.5);
  EXPECT_EQ(r1["error"], "");
}

TEST(NcclRound, WithoutATokenThePairFailsWithoutRunning) {
  RecordingEngine e1;
  PairEngines v1;
  v1.mode = EngineMode::Nccl;
  v1.nccl = &e1;
  const json r = run_my_pair(two_gpu_nodes(), 1, 0, v1, std::chrono::milliseconds(10), "");
  EXPECT_EQ(r["error"], "no NCCL unique id came from the peer");
  EXPECT_EQ(e1.got_address, "");
}

TEST(NcclBuild, ABuildWithoutCudaSaysSoAndOpensNoEngine) {
  const NcclEngineSetup s = make_nccl_engine(1 << 20);
  if (nccl_engine_built()) {
    // A GPU build: an engine on this node's GPU, or the reason (CI machines have no GPU).
    EXPECT_NE(s.engine == nullptr, s.note.empty()) << s.note;
    return;
  }
  EXPECT_EQ(s.engine, nullptr);
  EXPECT_NE(s.note.find("built without CUDA and NCCL"), std::string::npos) << s.note;
}

TEST(NcclResult, TheJsonNodesNameTheirNcclDeviceOrWhyNot) {
  ClusterInput in;
  in.launcher = "env";
  in.world = 2;
  in.engine_mode = "nccl";
  for (int r : {0, 1}) {
    NodeSummary s;
    s.rank = r;
    s.name = "n" + std::to_string(r);
    s.fabscope_version = "x";
    if (r == 0) s.nccl_device = "GPU 0 NVIDIA H200 (0000:00:06.0), NCCL 2.28.3";
    else s.nccl_note = "no CUDA GPU is visible";
    in.nodes.push_back(s);
  }
  const json j = cluster_json(judge(std::move(in)));
  EXPECT_EQ(j["nodes"][0]["nccl_device"], "GPU 0 NVIDIA H200 (0000:00:06.0), NCCL 2.28.3");
  EXPECT_EQ(j["nodes"][1]["nccl_note"], "no CUDA GPU is visible");
}
