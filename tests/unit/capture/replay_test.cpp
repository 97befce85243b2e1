// A tree written by `fabscope capture` on a live node: the probe replays the kept tool outputs
// and the library facts of fabscope/probe.json.
#include "probe/replay.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/json.hpp"
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
