// The fabric handed to a scheduler: topology.conf (tree, block), topology.yaml, Kubernetes labels,
// and an existing topology.conf checked against the fabric. The expected files are written by
// hand from the fabrics built here, not produced by the code under test.
#include "fabric/slurm_topology.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/hostlist.hpp"
#include "fabric_builders.hpp"
#include "fabric/judge.hpp"

using namespace fabscope;
using namespace fabscope::fabric;
using namespace fabscope::testing;

namespace {

int count_id(const std::vector<Finding>& fs, const std::string& id) {
  int n = 0;
  for (const auto& f : fs) n += f.id == id;
  return n;
}

const Finding* find_id(const std::vector<Finding>& fs, const std::string& id) {
  for (const auto& f : fs)
    if (f.id == id) return &f;
  return nullptr;
}

// Strip the comment header: the lines Slurm reads.
std::string body(const std::string& text) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto end = text.find('\n', pos);
    const std::string line = text.substr(pos, end - pos + 1);
    pos = end + 1;
    if (!line.empty() && line[0] != '#') out += line;
  }
  return out;
}

// The held-out fabric: two spines, three leaves of 8 ports (1-4 hosts, 7-8 up). gpu01 has two
// HCAs, mlx5_0 on leaf-a and mlx5_1 on leaf-b (two rails); gpu02 on leaf-a; gpu03 was re-cabled
// from leaf-a to leaf-b; gpu04 and gpu05 on leaf-c, whose uplink to spine2 is dead (port Down, no
// cable).
Subnet heldout_fabric() {
  Subnet s;
  s.source = "mlx5_0:1";
  s.swept_at = "2026-11-29T12:00:00Z";
  const int sp1 = add_node(s, NodeType::Switch, "MF0;spine1:MQM9700/U1", 0x1000, 8, 1);
  const int sp2 = add_node(s, NodeType::Switch, "MF0;spine2:MQM9700/U1", 0x2000, 8, 2);
  const int la = add_node(s, NodeType::Switch, "MF0;leaf-a:MQM9700/U1", 0x3000, 8, 3);
  const int lb = add_node(s, NodeType::Switch, "MF0;leaf-b:MQM9700/U1", 0x4000, 8, 4);
  const int lc = add_node(s, NodeType::Switch, "MF0;leaf-c:MQM9700/U1", 0x5000, 8, 5);
  const int g1a = add_node(s, NodeType::Hca, "gpu01 mlx5_0", 0xa000, 1, 10);
  const int g1b = add_node(s, NodeType::Hca, "gpu01 mlx5_1", 0xa100, 1, 11);
  const int g2 = add_node(s, NodeType::Hca, "gpu02 mlx5_0", 0xb000, 1, 12);
  const int g3 = add_node(s, NodeType::Hca, "gpu03 mlx5_0", 0xc000, 1, 13);
  const int g4 = add_node(s, NodeType::Hca, "gpu04 mlx5_0", 0xd000, 1, 14);
  const int g5 = add_node(s, NodeType::Hca, "gpu05 mlx5_0", 0xe000, 1, 15);
  connect(s, g1a, 1, la, 1);
  connect(s, g1b, 1, lb, 1);
  connect(s, g2, 1, la, 2);
  connect(s, g3, 1, lb, 2);
  connect(s, g4, 1, lc, 1);
  connect(s, g5, 1, lc, 2);
  connect(s, la, 7, sp1, 1);
  connect(s, la, 8, sp2, 1);
  connect(s, lb, 7, sp1, 2);
  connect(s, lb, 8, sp2, 2);
  connect(s, lc, 7, sp1, 3);  // lc:8 to spine2 is down
  s.rebuild_links();
  return s;
}

}  // namespace

TEST(SlurmTopology, HealthyFabricTreeHasEveryLeafWithItsHostsAndEverySpineWithItsLeaves) {
  const auto t = scheduler_topology(healthy_fabric(), {});
  EXPECT_TRUE(t.findings.empty());
  EXPECT_EQ(body(render_slurm_tree(t)),
            "SwitchName=S-leaf1 Nodes=hca[1-2]\n"
            "SwitchName=S-leaf2 Nodes=hca[3-4]\n"
            "SwitchName=S-spine1 Switches=S-leaf[1-2]\n"
            "SwitchName=S-spine2 Switches=S-leaf[1-2]\n");
}

TEST(SlurmTopology, TreeHeaderNamesTheSweep) {
  const std::string text = render_slurm_tree(scheduler_topology(healthy_fabric(), {}));
  EXPECT_EQ(text.rfind("# topology.conf for TopologyPlugin=topology/tree, written by fabscope fabric from the "
                       "sweep of mlx5_0:1 at 2026-01-01T00:00:00Z\n",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("# 2 leaf switch(es), 2 switch(es) above them, 4 host(s) placed\n"), std::string::npos);
}

TEST(SlurmTopology, BlockGroupsHostsByLeafWithTheSmallestLeafAsBaseBlock) {
  EXPECT_EQ(body(render_slurm_block(scheduler_topology(healthy_fabric(), {}))),
            "BlockName=S-leaf1 Nodes=hca[1-2]\n"
            "BlockName=S-leaf2 Nodes=hca[3-4]\n"
            "BlockSizes=2\n");
}

TEST(SlurmTopology, YamlWritesATreeAndABlockTopology) {
  EXPECT_EQ(body(render_slurm_yaml(scheduler_topology(healthy_fabric(), {}))),
            "---\n"
            "- topology: fabric-tree\n"
            "  cluster_default: true\n"
            "  tree:\n"
            "    switches:\n"
            "      - switch: \"S-leaf1\"\n"
            "        nodes: \"hca[1-2]\"\n"
            "      - switch: \"S-leaf2\"\n"
            "        nodes: \"hca[3-4]\"\n"
            "      - switch: \"S-spine1\"\n"
            "        children: \"S-leaf[1-2]\"\n"
            "      - switch: \"S-spine2\"\n"
            "        children: \"S-leaf[1-2]\"\n"
            "- topology: fabric-block\n"
            "  block:\n"
            "    block_sizes:\n"
            "      - 2\n"
            "    blocks:\n"
            "      - block: \"S-leaf1\"\n"
            "        nodes: \"hca[1-2]\"\n"
            "      - block: \"S-leaf2\"\n"
            "        nodes: \"hca[3-4]\"\n");
}

TEST(SlurmTopology, CompressedHostlistExpandsBackToTheSameNames) {
  const std::vector<std::string> names{"gpu10", "gpu09", "gpu01", "gpu02", "gpu03", "login", "n9", "n10", "n11", "x1"};
  const std::string c = compress_hostlist(names);
  EXPECT_EQ(c, "gpu[01-03,09-10],login,n9,n[10-11],x1");
  auto back = core::expand_hostlist(c);
  auto want = names;
  std::sort(back.begin(), back.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(back, want);
}

TEST(SlurmTopology, HeldOutFabricTreeIsTheHandWrittenOne) {
  const auto t = scheduler_topology(heldout_fabric(), {});
  EXPECT_EQ(body(render_slurm_tree(t)),
            "SwitchName=leaf-a Nodes=gpu[01-02]\n"
            "SwitchName=leaf-b Nodes=gpu03\n"
            "SwitchName=leaf-c Nodes=gpu[04-05]\n"
            "SwitchName=spine1 Switches=leaf-a,leaf-b,leaf-c\n"
            "SwitchName=spine2 Switches=leaf-a,leaf-b\n");
}

TEST(SlurmTopology, HostWithHcasOnTwoLeavesIsPlacedByItsFirstHcaAndNamed) {
  const auto t = scheduler_topology(heldout_fabric(), {});
  const TopoHost* h = t.find_host("gpu01");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->leaf, "leaf-a");
  EXPECT_EQ(h->leaves, (std::vector<std::string>{"leaf-a", "leaf-b"}));
  const Finding* f = find_id(t.findings, "fabric.topology_host_rails");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::Info);
  EXPECT_NE(f->evidence.find("gpu01 (leaf-a+leaf-b)"), std::string::npos) << f->evidence;
  // The note is in the file itself, not only on the terminal.
  EXPECT_NE(render_slurm_tree(t).find("# note: fabric.topology_host_rails"), std::string::npos);
}

TEST(SlurmTopology, LeafWithADeadUplinkIsReportedAndKeptByDefault) {
  const auto t = scheduler_topology(heldout_fabric(), {});
  const Finding* f = find_id(t.findings, "fabric.topology_uplinks_degraded");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->subject, "leaf-c");
  EXPECT_NE(f->message.find("1 of the usual 2 uplinks active"), std::string::npos) << f->message;
  EXPECT_EQ(count_id(t.findings, "fabric.topology_uplinks_degraded"), 1);
  ASSERT_NE(t.find_switch("leaf-c"), nullptr);
  EXPECT_TRUE(t.find_switch("leaf-c")->degraded);
  EXPECT_FALSE(t.find_switch("leaf-a")->degraded);
}

TEST(SlurmTopology, SkipDegradedLeavesLeavesTheirHostsOutOfThePlacement) {
  TopologyOptions o;
  o.skip_degraded_leaves = true;
  const auto t = scheduler_topology(heldout_fabric(), o);
  EXPECT_EQ(body(render_slurm_tree(t)),
            "SwitchName=leaf-a Nodes=gpu[01-02]\n"
            "SwitchName=leaf-b Nodes=gpu03\n"
            "SwitchName=spine1 Switches=leaf-a,leaf-b\n"
            "SwitchName=spine2 Switches=leaf-a,leaf-b\n");
  EXPECT_EQ(t.find_host("gpu04")->leaf, "");
}

TEST(SlurmTopology, UplinkBelowItsTierDegradesTheLeaf) {
  Subnet s = healthy_fabric();
  connect(s, kLeaf.leaf2, 8, kLeaf.spine2, 2, 1, Speed::HDR);  // trained at 1X
  const auto t = scheduler_topology(s, {});
  const Finding* f = find_id(t.findings, "fabric.topology_uplinks_degraded");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->subject, "S-leaf2");
  EXPECT_NE(f->message.find("1 below their tier"), std::string::npos) << f->message;
}

TEST(SlurmTopology, CheckFindsTheReCabledHost) {
  // The file an operator wrote before gpu03 moved to leaf-b.
  const auto conf = parse_topology_conf(
      "# hand-written\n"
      "SwitchName=leaf-a Nodes=gpu[01-03]\n"
      "SwitchName=leaf-c Nodes=gpu[04-05]\n"
      "SwitchName=spine1 Switches=leaf-a,leaf-c\n",
      "topology.conf");
  const auto t = scheduler_topology(heldout_fabric(), {});
  const auto fs = check_topology_conf(conf, t);
  ASSERT_EQ(count_id(fs, "fabric.topology_host_moved"), 1);
  const Finding* f = find_id(fs, "fabric.topology_host_moved");
  EXPECT_EQ(f->subject, "gpu03");
  EXPECT_EQ(f->evidence, "file_leaf=leaf-a fabric_leaf=leaf-b line=2");
  EXPECT_EQ(count_id(fs, "fabric.topology_host_missing"), 0);
  EXPECT_EQ(count_id(fs, "fabric.topology_host_unknown"), 0);
  EXPECT_EQ(count_id(fs, "fabric.topology_switch_gone"), 0);
}

TEST(SlurmTopology, CheckOfTheGeneratedFileFindsNothing) {
  const auto t = scheduler_topology(heldout_fabric(), {});
  EXPECT_TRUE(check_topology_conf(parse_topology_conf(render_slurm_tree(t), "gen"), t).empty());
  EXPECT_TRUE(check_topology_conf(parse_topology_conf(render_slurm_block(t), "gen"), t).empty());
}

TEST(SlurmTopology, CheckReportsMissingUnknownHostsAndGoneSwitches) {
  const auto conf = parse_topology_conf(
      "SwitchName=old-leaf Nodes=gpu[01-02],gpu99\n"
      "SwitchName=leaf-b Nodes=gpu03\n"
      "SwitchName=core9 Switches=old-leaf,leaf-b\n",
      "t.conf");
  const auto fs = check_topology_conf(conf, scheduler_topology(heldout_fabric(), {}));
  const Finding* gone = find_id(fs, "fabric.topology_switch_gone");
  ASSERT_NE(gone, nullptr);
  EXPECT_EQ(gone->subject, "old-leaf");
  // A renamed leaf is compared by content: its hosts are where the fabric has them.
  EXPECT_NE(gone->message.find("2 of its 3 host(s) are under leaf-a now"), std::string::npos) << gone->message;
  EXPECT_EQ(count_id(fs, "fabric.topology_switch_gone"), 2);  // old-leaf, core9
  EXPECT_EQ(count_id(fs, "fabric.topology_host_moved"), 0);
  ASSERT_NE(find_id(fs, "fabric.topology_host_unknown"), nullptr);
  EXPECT_EQ(find_id(fs, "fabric.topology_host_unknown")->evidence, "hosts=gpu99");
  ASSERT_NE(find_id(fs, "fabric.topology_host_missing"), nullptr);
  EXPECT_EQ(find_id(fs, "fabric.topology_host_missing")->evidence, "hosts=gpu04, gpu05");
}

TEST(SlurmTopology, K8sLabelsUseTopographsKeys) {
  const auto labels = k8s_labels(scheduler_topology(healthy_fabric(), {}));
  ASSERT_EQ(labels.size(), 4u);
  const auto& l = labels.at("hca3");
  EXPECT_EQ(l.at("network.topology.nvidia.com/block"), "S-leaf2");
  EXPECT_EQ(l.at("network.topology.nvidia.com/spine"), "S-spine1");
  EXPECT_EQ(l.count("network.topology.nvidia.com/datacenter"), 0u);
  EXPECT_EQ(l.count("network.topology.nvidia.com/accelerator"), 0u);
  const std::string script = k8s_labels_script(scheduler_topology(healthy_fabric(), {}));
  EXPECT_NE(script.find("kubectl label --overwrite node hca1 network.topology.nvidia.com/block=S-leaf1 "
                        "network.topology.nvidia.com/spine=S-spine1\n"),
            std::string::npos)
      << script;
  const json j = k8s_labels_json(scheduler_topology(healthy_fabric(), {}));
  EXPECT_EQ(j["schema"], "fabscope.fabric.k8s-labels");
  EXPECT_EQ(j["nodes"]["hca2"]["network.topology.nvidia.com/block"], "S-leaf1");
}

TEST(SlurmTopology, SwitchesWithOneDescriptionAreNamedByGuid) {
  Subnet s = healthy_fabric();
  s.nodes[kLeaf.leaf1].description = "Quantum Mellanox Technologies";
  s.nodes[kLeaf.leaf2].description = "Quantum Mellanox Technologies";
  const auto t = scheduler_topology(s, {});
  EXPECT_NE(t.find_switch("0x0000000000003000"), nullptr);
  EXPECT_NE(t.find_switch("0x0000000000004000"), nullptr);
  EXPECT_EQ(t.find_host("hca3")->leaf, "0x0000000000004000");
}

TEST(SlurmTopology, DuplicateHostDescriptionIsAFailureAndTheHostIsLeftOut) {
  Subnet s = healthy_fabric();
  s.nodes[kLeaf.hca4].description = "hca3 mlx5_0";  // a cloned image
  const auto t = scheduler_topology(s, {});
  const Finding* f = find_id(t.findings, "fabric.topology_duplicate_name");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::Fail);
  EXPECT_EQ(f->subject, "hca3");
  EXPECT_EQ(t.find_host("hca3"), nullptr);
  EXPECT_EQ(body(render_slurm_tree(t)).find("hca3"), std::string::npos);
  EXPECT_EQ(exit_code_for(t.findings), 2);
}

TEST(SlurmTopology, HostOnNoLeafIsNamedAndLeftOut) {
  Subnet s = healthy_fabric();
  for (auto [n, p] : {std::pair{kLeaf.hca4, 1}, std::pair{kLeaf.leaf2, 2}}) {
    port_of(s, n, p).remote_node = -1;
    port_of(s, n, p).info = down_info();
  }
  s.rebuild_links();
  const auto t = scheduler_topology(s, {});
  const Finding* f = find_id(t.findings, "fabric.topology_host_unplaced");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->evidence, "hosts=hca4");
  EXPECT_EQ(body(render_slurm_tree(t)).find("hca4"), std::string::npos);
}

TEST(SlurmTopology, UnsetDescriptionsAreUnmappedNotMergedIntoOneHost) {
  Subnet s = healthy_fabric();
  s.nodes[kLeaf.hca3].description = "MT4123 ConnectX6   Mellanox Technologies";
  s.nodes[kLeaf.hca4].description = "MT4123 ConnectX6   Mellanox Technologies";
  const auto t = scheduler_topology(s, {});
  const Finding* f = find_id(t.findings, "fabric.topology_name_unmapped");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->subject, "2 HCA(s)");
  EXPECT_EQ(t.find_host("MT4123"), nullptr);
  EXPECT_EQ(t.find_switch("S-leaf2"), nullptr);  // no host left under it
}

TEST(SlurmTopology, NameMapNamesHostsAndSwitchesByGuidOrDescription) {
  const NameMap m = parse_name_map(
      "# ibnetdiscover's node-name-map\n"
      "0x0000000000003000 \"leaf01\"\n"
      "\n"
      "0x000000000000c000 gpu-c\n"
      "MT4123 ConnectX6   Mellanox Technologies gpu-d\n",
      "names");
  Subnet s = healthy_fabric();
  s.nodes[kLeaf.hca4].description = "MT4123 ConnectX6   Mellanox Technologies";
  TopologyOptions o;
  o.names = m;
  const auto t = scheduler_topology(s, o);
  EXPECT_EQ(body(render_slurm_tree(t)),
            "SwitchName=S-leaf2 Nodes=gpu-c,gpu-d\n"
            "SwitchName=leaf01 Nodes=hca[1-2]\n"
            "SwitchName=S-spine1 Switches=S-leaf2,leaf01\n"
            "SwitchName=S-spine2 Switches=S-leaf2,leaf01\n");
}

TEST(SlurmTopology, NameMapBadLinesNameFileAndLine) {
  auto message = [](const std::string& text) {
    try {
      parse_name_map(text, "names.map");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("0x1 gpu1\ngpu2\n").rfind("names.map:2: expected 'GUID NAME'", 0), 0u) << message("0x1 gpu1\ngpu2\n");
  EXPECT_EQ(message("\n\n0xZZ gpu1\n").rfind("names.map:3: '0xZZ' is not a GUID", 0), 0u);
  EXPECT_EQ(message("0x1 \"gpu 1\"\n").rfind("names.map:1: name 'gpu 1' is not a Slurm node name", 0), 0u);
  EXPECT_EQ(message("0x1 gpu1\n0x1 gpu2\n").rfind("names.map:2: GUID 0x1 is mapped to 'gpu1' already", 0), 0u);
  EXPECT_EQ(message("0x1 \"gpu1\n").rfind("names.map:1:", 0), 0u);
}

TEST(SlurmTopology, HostListKeepsOnlyTheClustersNodesAndNamesTheAbsent) {
  TopologyOptions o;
  o.keep = {"hca1", "hca2", "hca3", "hca9"};
  const auto t = scheduler_topology(healthy_fabric(), o);
  EXPECT_EQ(body(render_slurm_tree(t)),
            "SwitchName=S-leaf1 Nodes=hca[1-2]\n"
            "SwitchName=S-leaf2 Nodes=hca3\n"
            "SwitchName=S-spine1 Switches=S-leaf[1-2]\n"
            "SwitchName=S-spine2 Switches=S-leaf[1-2]\n");
  const Finding* f = find_id(t.findings, "fabric.topology_host_not_found");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->evidence, "hosts=hca9");
}

TEST(SlurmTopology, HostListMatchesAFullyQualifiedDescriptionByItsShortName) {
  Subnet s = healthy_fabric();
  s.nodes[kLeaf.hca1].description = "hca1.cluster.example mlx5_0";
  TopologyOptions o;
  o.keep = {"hca1", "hca2", "hca3", "hca4"};
  EXPECT_EQ(scheduler_topology(s, o).find_host("hca1")->leaf, "S-leaf1");
}

TEST(SlurmTopology, TopologyConfThatSlurmRejectsIsAnErrorWithItsLine) {
  auto message = [](const std::string& text) {
    try {
      parse_topology_conf(text, "topology.conf");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("SwitchName=a Nodes=n1\nSwitchName=a Nodes=n2\n"),
            "topology.conf:2: switch 'a' is defined already at line 1");
  EXPECT_EQ(message("SwitchName=a Nodes=n1 Switches=b\n"), "topology.conf:1: switch 'a' has both Nodes= and Switches=");
  EXPECT_EQ(message("SwitchName=a\n"), "topology.conf:1: switch 'a' has neither Nodes= nor Switches=");
  EXPECT_EQ(message("SwitchName=a Nodes=n1\nSwitchName=s Switches=a,b\n"),
            "topology.conf:2: switch 's' has the undefined switch 'b' as a child");
  EXPECT_EQ(message("SwitchName=a Nodes=n1\nSwitchName=s Switches=t\nSwitchName=t Switches=s\n").rfind(
                "topology.conf:3: switch 't' and 's' are each other's descendants", 0),
            0u);
  EXPECT_EQ(message("SwitchName=a Nodes=n1 Color=red\n").rfind("topology.conf:1: unknown key 'Color=red'", 0), 0u);
  EXPECT_EQ(message("Nodes=n1\n").rfind("topology.conf:1: a line starts with SwitchName=", 0), 0u);
  EXPECT_EQ(message("SwitchName=a Nodes=n[1-\n").rfind("topology.conf:1: Nodes='n[1-'", 0), 0u);
  EXPECT_EQ(message("SwitchName=s Switches=s\n").rfind("topology.conf:1: switch 's' has itself as a child", 0), 0u);
  EXPECT_EQ(message("# nothing\n"), "topology.conf: no switch has Nodes=: Slurm refuses a topology without nodes");
}

TEST(SlurmTopology, TopologyConfReadsContinuationsCommentsAndCase) {
  const auto c = parse_topology_conf(
      "switchname=a nodes=n[1-2] # leaf\n"
      "SwitchName=b \\\n  Nodes=n3 LinkSpeed=100\n"
      "SwitchName=s Switches=a,b\n",
      "t");
  ASSERT_EQ(c.switches.size(), 3u);
  EXPECT_EQ(c.switches[0].nodes, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(c.switches[1].nodes, (std::vector<std::string>{"n3"}));
  EXPECT_EQ(c.switches[2].line, 4);
}

TEST(SlurmTopology, JsonCarriesSwitchesHostsTextAndFindings) {
  const auto t = scheduler_topology(heldout_fabric(), {});
  const json j = topology_json(t, "tree", render_slurm_tree(t));
  EXPECT_EQ(j["schema"], "fabscope.fabric.topology");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["switches"][0]["name"], "leaf-a");
  EXPECT_EQ(j["switches"][2]["degraded"], true);
  EXPECT_EQ(j["hosts"][0]["leaves"].size(), 2u);
  EXPECT_EQ(j["exit_code"], 1);
}

TEST(SlurmTopology, EveryIdIsRegisteredOnceInTheFabricFamily) {
  std::set<std::string> ids;
  for (const auto& f : topology_checks()) {
    EXPECT_EQ(f.family, "fabric");
    EXPECT_EQ(f.docs, "docs/fabric.md");
    EXPECT_TRUE(ids.insert(f.id).second) << f.id;
  }
  for (const auto& f : fabric_checks()) EXPECT_FALSE(ids.count(f.id)) << f.id;
}
