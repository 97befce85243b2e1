// A tree written by `fabscope capture` on a live node: the probe replays the kept tool outputs
// and the library facts of fabscope/probe.json.
#include "probe/replay.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/json.hpp"
#include "checks/checks.hpp"
#include "probe/nvlink.hpp"
#include "probe/probe.hpp"
#include "support/fixtures.hpp"

namespace fabscope::probe {

namespace {
std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_capture(const std::filesystem::path& dir, const json& commands, const NodeInfo& saved, bool live = true) {
  testing::write_file(dir, "proc/sys/kernel/hostname", "node1\n");
  json m{{"schema", "fabscope.capture"}, {"schema_version", 1}, {"live", live}, {"commands", commands}};
  testing::write_file(dir, kCaptureManifest, m.dump());
  testing::write_file(dir, kCaptureProbe, json(saved).dump());
}
}  // namespace

TEST(CaptureReplay, KeptNftRulesetIsParsedAsIfNftRan) {
  testing::TempDir d;
  testing::write_file(d.path(), "fabscope/commands/nft.stdout",
                      slurp(testing::fixture("nft") / "drop-roce-v2.json"));
  testing::write_file(d.path(), "fabscope/commands/nft.stderr", "");
  write_capture(d.path(),
                json::array({{{"argv", {"nft", "-j", "list", "ruleset"}}, {"status", "ran"}, {"exit_code", 0},
                              {"stdout", "fabscope/commands/nft.stdout"}, {"stderr", "fabscope/commands/nft.stderr"}}}),
                NodeInfo{});
  NodeInfo n = collect(core::Root(d.path()));
  EXPECT_EQ(n.firewall.source, "nft");
  EXPECT_FALSE(n.firewall.chains.empty());
}

TEST(CaptureReplay, NftNotFoundOnTheNodeReadsAsNotFound) {
  testing::TempDir d;
  write_capture(d.path(), json::array({{{"argv", {"nft", "-j", "list", "ruleset"}}, {"status", "not_found"},
                                        {"exit_code", nullptr}, {"error", "nft: not found on PATH"}}}),
                NodeInfo{});
  NodeInfo n = collect(core::Root(d.path()));
  EXPECT_EQ(n.firewall.note, "nft not found (nftables not installed): firewall unknown");
}

TEST(CaptureReplay, LibraryFactsComeFromTheSavedProbe) {
  testing::TempDir d;
  NodeInfo saved;
  saved.versions.nccl = "2.27.3";
  saved.versions.nccl_code = 22703;
  saved.verbs = VerbsInfo{};
  write_capture(d.path(), json::array(), saved);
  NodeInfo n = collect(core::Root(d.path()));
  EXPECT_EQ(n.versions.nccl, "2.27.3");
  EXPECT_TRUE(n.verbs.has_value());
}

TEST(CaptureReplay, TreeCapturedFromATreeReplaysNothing) {
  testing::TempDir d;
  NodeInfo saved;
  saved.versions.nccl = "2.27.3";
  write_capture(d.path(), json::array(), saved, false);
  NodeInfo n = collect(core::Root(d.path()));
  EXPECT_EQ(n.versions.nccl, "");
  EXPECT_EQ(n.firewall.note, "the ruleset is read on a live node only (nft -j list ruleset)");
}

TEST(CaptureReplay, ManifestOfAnotherSchemaIsANote) {
  testing::TempDir d;
  testing::write_file(d.path(), kCaptureManifest, "{\"schema\": \"fabscope.node\"}");
  std::vector<std::string> notes;
  auto rp = load_capture_replay(core::Root(d.path()), notes);
  ASSERT_TRUE(rp.has_value());
  EXPECT_FALSE(rp->live);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("not a capture manifest"), std::string::npos);
}

}  // namespace fabscope::probe

namespace fabscope::probe {

namespace {
// The saved probe of an H200 x2 node: the tree's GPUs with the NVLink facts NVML gave
// (tests/fixtures/nvml-h200x2), as fabscope capture keeps them in fabscope/probe.json.
NodeInfo saved_h200x2_with_nvlinks(const core::Root& tree) {
  NodeInfo saved = collect(tree);
  std::ifstream in(testing::fixture("nvml-h200x2") / "nvml.json");
  std::stringstream s;
  s << in.rdbuf();
  auto pairs = apply_nvml_answers(parse_nvml_capture(json::parse(s.str())), saved.gpus);
  for (auto& g : saved.gpus) g.source = "nvml";  // as a live probe names them
  saved.gpu_topology = gpu_topology(saved.gpus, saved.pci_devices, pairs);
  return saved;
}
}  // namespace

TEST(CaptureReplay, NvlinkFactsAndTheNvmlMatrixReplayFromTheSavedProbe) {
  testing::TempDir d;
  testing::copy_tree(testing::fixture("h200x2-node"), d.path());
  NodeInfo saved = saved_h200x2_with_nvlinks(core::Root(d.path()));
  write_capture(d.path(), json::array(), saved);
  NodeInfo n = collect(core::Root(d.path()));
  ASSERT_EQ(n.gpus.size(), 2u);
  ASSERT_EQ(n.gpus[1].nvlinks.size(), 18u);
  EXPECT_EQ(n.gpus[1].nvlinks[0].crc_data_errors, saved.gpus[1].nvlinks[0].crc_data_errors);
  EXPECT_EQ(n.gpus[0].nvlink_data_transmitted_bytes, saved.gpus[0].nvlink_data_transmitted_bytes);
  EXPECT_EQ(n.gpus[0].nvlink_active, 18);
  ASSERT_EQ(n.gpu_topology.size(), 1u);
  EXPECT_EQ(n.gpu_topology[0].level, "NV18");
  EXPECT_EQ(n.gpu_topology[0].p2p_read, "ok");
  // A healthy HGX pair: the NVLink checks find nothing in the replay.
  for (const auto& f : checks::run(n)) EXPECT_NE(f.id.rfind("nvlink.", 0), 0u) << f.id;
}

TEST(CaptureReplay, CaptureOfAnEarlierBuildReplaysWithoutNvlinks) {
  testing::TempDir d;
  testing::copy_tree(testing::fixture("h200x2-node"), d.path());
  json saved = saved_h200x2_with_nvlinks(core::Root(d.path()));
  saved.erase("gpu_topology");
  for (auto& g : saved["gpus"]) {
    for (const char* k : {"nvlinks", "nvlink_data_transmitted_bytes", "nvlink_data_received_bytes",
                          "nvlink_raw_transmitted_bytes", "nvlink_raw_received_bytes"})
      g.erase(k);
  }
  testing::write_file(d.path(), kCaptureManifest,
                      json{{"schema", "fabscope.capture"}, {"schema_version", 1}, {"live", true}, {"commands", json::array()}}.dump());
  testing::write_file(d.path(), kCaptureProbe, saved.dump());
  NodeInfo n = collect(core::Root(d.path()));
  ASSERT_EQ(n.gpus.size(), 2u);
  EXPECT_TRUE(n.gpus[0].nvlinks.empty());
  EXPECT_EQ(n.gpus[0].nvlink_total, 18);  // the older key is still replayed
  ASSERT_EQ(n.gpu_topology.size(), 1u);
  EXPECT_EQ(n.gpu_topology[0].source, "pci");
}

TEST(CaptureReplay, MalformedNvlinkInTheSavedProbeIsANoteNamingTheField) {
  testing::TempDir d;
  testing::copy_tree(testing::fixture("h200x2-node"), d.path());
  json saved = saved_h200x2_with_nvlinks(core::Root(d.path()));
  saved["gpus"][0]["nvlinks"][2]["replay_errors"] = -3;
  testing::write_file(d.path(), kCaptureManifest,
                      json{{"schema", "fabscope.capture"}, {"schema_version", 1}, {"live", true}, {"commands", json::array()}}.dump());
  testing::write_file(d.path(), kCaptureProbe, saved.dump());
  NodeInfo n = collect(core::Root(d.path()));
  bool named = false;
  for (const auto& note : n.probe_notes) named = named || note.find("gpus[0].nvlinks[2].replay_errors") != std::string::npos;
  EXPECT_TRUE(named);
  EXPECT_TRUE(n.gpus[0].nvlinks.empty());
}

}  // namespace fabscope::probe
