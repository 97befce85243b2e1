// `fabscope fabric --slurm-topology / --k8s-labels / --check` as a user runs them, offline on the
// saved leaf/spine sweep (tests/fixtures/fabric-leaf-spine: S-leaf1 with H-node1-2, S-leaf2 with
// H-node3-4, two spines): the file on standard output or in -o, the report beside it, exit codes,
// the flags that do not go together. No fabric is touched.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/json.hpp"
#include "support/cli_run.hpp"
#include "support/fixtures.hpp"

using fabscope::json;
using fabscope::testing::expect_fits_100_columns;
using fabscope::testing::fixture;
using fabscope::testing::quote;
using fabscope::testing::run_fabscope;
using fabscope::testing::TempDir;
using fabscope::testing::write_file;

namespace {

std::string topo_sweep() { return (fixture("fabric-leaf-spine") / "fabric.json").string(); }

std::string topo_read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST(FabricTopologyCli, TreeGoesToStandardOutputAndTheReportToStandardError) {
  auto r = run_fabscope("fabric --from " + quote(topo_sweep()) + " --slurm-topology tree", "", false);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("\nSwitchName=S-leaf1 Nodes=H-node[1-2]\nSwitchName=S-leaf2 Nodes=H-node[3-4]\n"
                       "SwitchName=S-spine1 Switches=S-leaf[1-2]\nSwitchName=S-spine2 Switches=S-leaf[1-2]\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("fail, "), std::string::npos) << "the report is not in the file: " << r.out;
}

TEST(FabricTopologyCli, OutputFileIsWrittenAndTheReportPrinted) {
  TempDir dir;
  const auto path = dir.path() / "topology.conf";
  auto r = run_fabscope("fabric --from " + quote(topo_sweep()) + " --slurm-topology block -o " + quote(path.string()));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("2 leaf switch(es) with 4 host(s), 2 switch(es) above them"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 fail, 0 warn, 0 info"), std::string::npos) << r.out;
  expect_fits_100_columns(r.out);
  const std::string text = topo_read(path);
  EXPECT_NE(text.find("\nBlockName=S-leaf1 Nodes=H-node[1-2]\nBlockName=S-leaf2 Nodes=H-node[3-4]\nBlockSizes=2\n"),
            std::string::npos)
      << text;
}

TEST(FabricTopologyCli, CheckOfAMovedHostWarnsAndExitsOne) {
  TempDir dir;
  write_file(dir.path(), "topology.conf",
             "SwitchName=S-leaf1 Nodes=H-node[1-3]\nSwitchName=S-leaf2 Nodes=H-node4\n"
             "SwitchName=S-spine1 Switches=S-leaf[1-2]\n");
  auto r = run_fabscope("fabric --from " + quote(topo_sweep()) + " --check " + quote((dir.path() / "topology.conf").string()));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("WARN fabric.topology_host_moved"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("H-node3"), std::string::npos) << r.out;
  expect_fits_100_columns(r.out);
  r = run_fabscope("fabric --from " + quote(topo_sweep()) + " --check " + quote((dir.path() / "topology.conf").string()) +
                   " --json");
  const json j = json::parse(r.out);
  EXPECT_EQ(j["schema"], "fabscope.fabric.topology");
  EXPECT_EQ(j["format"], "check");
  EXPECT_EQ(j["exit_code"], 1);
}

TEST(FabricTopologyCli, JsonCarriesTheFileAndK8sLabelsAreJson) {
  auto r = run_fabscope("fabric --from " + quote(topo_sweep()) + " --slurm-topology yaml --json", "", false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["format"], "yaml");
  EXPECT_NE(j["text"].get<std::string>().find("- topology: fabric-tree"), std::string::npos);
  r = run_fabscope("fabric --from " + quote(topo_sweep()) + " --k8s-labels json", "", false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json l = json::parse(r.out);
  EXPECT_EQ(l["nodes"]["H-node4"]["network.topology.nvidia.com/block"], "S-leaf2");
}

TEST(FabricTopologyCli, BadInputsExitThreeNamingFileAndLine) {
  TempDir dir;
  write_file(dir.path(), "names", "0x1 gpu1\n0x2\n");
  auto r = run_fabscope("fabric --from " + quote(topo_sweep()) + " --slurm-topology tree --name-map " +
                        quote((dir.path() / "names").string()));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("names:2: expected 'GUID NAME'"), std::string::npos) << r.out;
  write_file(dir.path(), "topology.conf", "SwitchName=a Nodes=H-node1\nSwitchName=a Nodes=H-node2\n");
  r = run_fabscope("fabric --from " + quote(topo_sweep()) + " --check " + quote((dir.path() / "topology.conf").string()));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("topology.conf:2: switch 'a' is defined already at line 1"), std::string::npos) << r.out;
}

TEST(FabricTopologyCli, FlagsThatDoNotGoTogetherAreUsageErrors) {
  for (const char* args : {"--slurm-topology tree --k8s-labels json", "--slurm-topology ring", "--k8s-labels yaml",
                           "--nodes gpu1", "-o x.conf", "--check x.conf -o y.conf", "--slurm-topology tree --expect x",
                           "--check x.conf --plan y"}) {
    auto r = run_fabscope("fabric --from " + quote(topo_sweep()) + " " + args);
    EXPECT_EQ(r.exit_code, 3) << args << ": " << r.out;
    EXPECT_NE(r.out.find("fabric: "), std::string::npos) << args << ": " << r.out;
  }
}
