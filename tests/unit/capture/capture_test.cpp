// The property `fabscope capture` exists for: the unpacked archive (unpacked by tar(1)) is judged
// as the tree or the node it was taken from.
#include "capture/capture.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>

#include "checks/checks.hpp"
#include "probe/probe.hpp"
#include "support/fixtures.hpp"

namespace fabscope::capture {

namespace {

std::filesystem::path unpack(const Result& r, const testing::TempDir& dir) {
  const auto file = dir.path() / "c.tar.gz";
  std::ofstream(file, std::ios::binary) << r.archive;
  const std::string cmd = "tar -xzf '" + file.string() + "' -C '" + dir.path().string() + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return dir.path() / r.summary["top_dir"].get<std::string>();
}

// id, severity, subject, evidence of each finding, sorted; identities made alike when redacted.
std::vector<std::string> judged(const NodeInfo& n, bool redacted) {
  static const std::regex ident(
      R"(\b[0-9a-fA-F]{1,4}(:[0-9a-fA-F]{1,4}){3,19}\b|\b\d{1,3}(\.\d{1,3}){3}\b|)"
      R"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})");
  std::vector<std::string> out;
  for (const auto& f : checks::run(n)) {
    std::string line = f.id + " " + std::to_string(static_cast<int>(f.severity)) + " " + f.subject + " | " + f.evidence;
    out.push_back(redacted ? std::regex_replace(line, ident, "ID") : line);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Options options(bool redact) {
  Options o;
  o.redact = redact;
  o.top_dir = "node";
  return o;
}

}  // namespace

TEST(Capture, FixtureRootsAreJudgedAlikeFromTheirCapture) {
  for (const char* fx : {"h200x2-node", "rxe-vm", "virtio-2cpu-node"}) {
    for (bool redact : {false, true}) {
      core::Root original(testing::fixture(fx));
      Result r = run(original, options(redact));
      testing::TempDir dir;
      core::Root captured(unpack(r, dir));
      EXPECT_EQ(judged(probe::collect(original), redact), judged(probe::collect(captured), redact))
          << fx << (redact ? " redacted" : "");
      EXPECT_EQ(r.manifest["redacted"], redact);
      if (redact) {  // something was replaced: MACs on every fixture node
        EXPECT_GT(r.manifest["redactions"]["mac"].get<int>(), 0) << fx;
      }
    }
  }
}

TEST(Capture, ThisNodeIsJudgedAlikeFromItsCapture) {
  core::Root live("/");
  Result r = run(live, options(false));
  NodeInfo here = probe::collect(live);
  testing::TempDir dir;
  core::Root captured(unpack(r, dir));
  NodeInfo replayed = probe::collect(captured);
  EXPECT_EQ(judged(here, false), judged(replayed, false));
  EXPECT_EQ(here.firewall.note, replayed.firewall.note);
  EXPECT_EQ(here.lldp.note, replayed.lldp.note);
  EXPECT_EQ(r.manifest["live"], true);
  EXPECT_EQ(here.hostname, replayed.hostname);  // procfs sysctl files read (no oversized read)
  EXPECT_EQ(here.kernel.sysctls, replayed.kernel.sysctls);
  EXPECT_FALSE(r.manifest["commands"].empty());  // nft and lldpcli were tried (found or not)
}

TEST(Capture, ManifestListsEachFileWithSizeAndDigest) {
  core::Root original(testing::fixture("virtio-2cpu-node"));
  Result r = run(original, options(false));
  testing::TempDir dir;
  const auto top = unpack(r, dir);
  std::size_t files = 0;
  for (const auto& f : r.manifest["files"]) {
    if (f["type"] != "file") continue;
    ++files;
    const auto p = top / f["path"].get<std::string>();
    ASSERT_TRUE(std::filesystem::is_regular_file(p)) << p;
    EXPECT_EQ(std::filesystem::file_size(p), f["size"].get<std::size_t>()) << p;
  }
  EXPECT_GT(files, 10u);
  EXPECT_TRUE(std::filesystem::exists(top / "fabscope/probe.json"));
  EXPECT_TRUE(std::filesystem::is_symlink(top / "sys/class/net/eth0") ||
              std::filesystem::is_directory(top / "sys/class/net"));
}

TEST(Capture, TopDirComesFromTheOutputName) {
  EXPECT_EQ(top_dir_for("/tmp/node7.tar.gz"), "node7");
  EXPECT_EQ(top_dir_for("x y.tgz"), "x_y");
  EXPECT_EQ(top_dir_for(".tar.gz"), "fabscope-capture");
}

// A tree whose kernel command line names the node's MACs, address, gateway and host name (PXE's
// BOOTIF, dracut's ifname= and ip=): no file of the redacted archive, probe.json and the manifest
// included, holds any of them in any spelling.
TEST(Capture, RedactedArchiveHoldsNoFormOfAnyValueInAnyFile) {
  testing::TempDir src;
  const auto tree = src.path() / "node";
  std::filesystem::copy(testing::fixture("rxe-vm"), tree,
                        std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  testing::write_file(tree, "proc/sys/kernel/hostname", "gpu7\n");
  // veth0 is 7a:db:90:26:5f:89 and veth1 2e:eb:fc:37:91:7e in the fixture (sys/class/net/*/address).
  testing::write_file(tree, "proc/cmdline",
                      "BOOT_IMAGE=/vmlinuz console=ttyS0 BOOTIF=01-7a-db-90-26-5f-89 ifname=veth1:2E:EB:FC:37:91:7E "
                      "ip=10.20.30.40::10.20.30.1:255.255.255.0:gpu7:veth0:none rd.neednet=1 quiet\n");
  Result r = run(core::Root(tree), options(true));
  testing::TempDir dir;
  const auto top = unpack(r, dir);
  auto squash = [](const std::string& t) {
    std::string o;
    for (char c : t)
      if (std::isalnum(static_cast<unsigned char>(c))) o += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return o;
  };
  std::size_t files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(top)) {
    if (!e.is_regular_file() || e.is_symlink()) continue;
    ++files;
    std::ifstream in(e.path(), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string flat = squash(text);
    for (const char* mac : {"7adb90265f89", "2eebfc37917e"}) EXPECT_EQ(flat.find(mac), std::string::npos) << e.path() << " holds " << mac;
    EXPECT_EQ(flat.find("gpu7"), std::string::npos) << e.path() << " holds the host name";
    for (const char* ip : {"10.20.30.40", "10.20.30.1:"}) EXPECT_EQ(text.find(ip), std::string::npos) << e.path() << " holds " << ip;
  }
  EXPECT_GT(files, 10u);
  EXPECT_TRUE(std::filesystem::exists(top / "fabscope/probe.json"));
}

// A tree of very many directories (100,000 took 46 s and 459 MB): the archive holds at most
// max_entries of them, and the manifest says what was left out.
TEST(Capture, ATreeOfManyDirectoriesIsCutAtTheEntryCapAndSaysSo) {
  testing::TempDir src;
  const auto tree = src.path() / "node";
  std::filesystem::copy(testing::fixture("rxe-vm"), tree,
                        std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  for (int i = 0; i < 2000; ++i) std::filesystem::create_directories(tree / "sys/class/net" / ("d" + std::to_string(i)));
  Options o = options(false);
  o.limits.max_entries = 300;
  Result r = run(core::Root(tree), o);
  std::size_t tree_entries = 0;
  for (const auto& f : r.manifest["files"])
    if (f["path"].get<std::string>().rfind("fabscope/", 0) != 0) ++tree_entries;
  EXPECT_LE(tree_entries, 300u);
  bool said = false;
  for (const auto& s : r.manifest["skipped"])
    said = said || s["reason"].get<std::string>().find("entry cap") != std::string::npos;
  EXPECT_TRUE(said) << r.manifest["skipped"].dump();
  EXPECT_EQ(r.manifest["limits"]["max_entries"], 300);
  // The walk goes through the paths sorted: what the probe read under proc/ is kept.
  bool cmdline = false;
  for (const auto& f : r.manifest["files"]) cmdline = cmdline || f["path"] == "proc/cmdline";
  EXPECT_TRUE(cmdline);
}

}  // namespace fabscope::capture
