#pragma once
// The swept subnet handed to a scheduler (pure: values in, text and findings out): which hosts
// hang under which leaf switch and which switches above them, as Slurm's topology.conf (tree or
// block), Slurm 25.05's topology.yaml, or Kubernetes node labels with topograph's keys; and an
// existing topology.conf compared with the fabric. Where the fabric makes a topology misleading
// (a host with HCAs on several leaves, a leaf with uplinks down or degraded, an HCA whose host
// cannot be named) a fabric.topology_* finding says so; such hosts are never silently placed.
//
// Names: a switch is named by its node description where that is unique among the switches (the
// "NAME" of a Mellanox "MF0;NAME:MODEL/U1" description), else by its GUID; a host is the first
// word of its HCAs' node description (rdma-core sets "HOSTNAME mlx5_0"), or what a mapping file
// says. Every name is cut to what Slurm's hostlist parser and Kubernetes label values accept.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/finding.hpp"
#include "core/finding_registry.hpp"
#include "core/json.hpp"
#include "fabric/model.hpp"

namespace fabscope::fabric {

// The fabric.topology_* ids (documented in docs/fabric.md, "Slurm topology and Kubernetes labels").
const std::vector<FindingInfo>& topology_checks();

// A mapping file: "KEY NAME" per line, KEY a node or port GUID (0x...) or a node description
// (the rest of the line before NAME), NAME optionally in double quotes, so ibnetdiscover's
// node-name-map ('0x0002c903000a1b2c "gpu01"') reads as it is. '#' starts a comment line.
struct NameMap {
  std::map<std::uint64_t, std::string> by_guid;
  std::map<std::string, std::string> by_description;
  bool empty() const { return by_guid.empty() && by_description.empty(); }
};
// Throws Error "origin:line: ..." for a line with no name, a bad GUID, a name Slurm cannot use,
// or a key mapped twice to different names.
NameMap parse_name_map(const std::string& text, const std::string& origin);
NameMap load_name_map(const std::string& path);

struct TopologyOptions {
  NameMap names;
  // The cluster's nodes (an expanded host list): hosts of the fabric not in it are left out;
  // names in it the fabric does not have are reported. Empty: every host.
  std::set<std::string> keep;
  // Leave the hosts of a leaf whose uplinks are down or degraded out of the placement (they are
  // then in no switch: Slurm gives them only single-switch jobs' leftovers). Default: keep them,
  // with a finding.
  bool skip_degraded_leaves = false;
};

struct TopoSwitch {
  std::string name;
  int node = -1;                        // index into Subnet::nodes
  int level = 0;                        // 1 leaf, 2 spine, 3 core ...
  std::vector<std::string> hosts;       // leaves: the hosts placed under it, sorted
  std::vector<std::string> children;    // upper switches: the switches one level down, sorted
  int uplinks = 0, uplinks_usual = 0;   // leaves: active links up, and most leaves' count
  bool degraded = false;                // leaves: an uplink down or running below its tier
};

struct TopoHost {
  std::string name;
  std::string leaf;                     // the switch it is placed under; "" not placed
  std::vector<std::string> leaves;      // every leaf its HCAs reach (more than one: rails)
  std::vector<std::uint64_t> hca_guids;
};

struct SchedTopology {
  std::string source, swept_at;         // of the sweep, for the files' header
  std::vector<TopoSwitch> switches;     // by level, then name
  std::vector<TopoHost> hosts;          // placed or not, by name
  std::vector<Finding> findings;        // most severe first
  const TopoSwitch* find_switch(const std::string& name) const;
  const TopoHost* find_host(const std::string& name) const;
};

SchedTopology scheduler_topology(const Subnet& s, const TopologyOptions& opt);

// "H-node1,H-node2,H-node3,gpu07" -> "H-node[1-3],gpu07": names ending in digits of one width
// joined into ranges; the order of first appearance of each prefix is kept. What Slurm's hostlist
// parser reads back (core::expand_hostlist) as the same names.
std::string compress_hostlist(std::vector<std::string> names);

// Slurm's topology.conf for topology/tree: one SwitchName line per switch with its Nodes= (leaves)
// or Switches= (upper switches), a comment header naming the sweep and every note.
std::string render_slurm_tree(const SchedTopology& t);
// topology.conf for topology/block (Slurm 23.11 and later): one BlockName per leaf with its
// hosts, BlockSizes= the smallest block's size.
std::string render_slurm_block(const SchedTopology& t);
// Slurm 25.05's topology.yaml: a tree topology (cluster_default) and a block topology.
std::string render_slurm_yaml(const SchedTopology& t);

// Kubernetes node labels with topograph's keys: network.topology.nvidia.com/block (the leaf),
// /spine (the first switch above it by name), /datacenter (the first above that); /accelerator
// (an NVLink domain) is not in an InfiniBand sweep and never written.
std::map<std::string, std::map<std::string, std::string>> k8s_labels(const SchedTopology& t);
json k8s_labels_json(const SchedTopology& t);      // {"schema": "fabscope.fabric.k8s-labels", "nodes": {...}}
std::string k8s_labels_script(const SchedTopology& t);  // one 'kubectl label --overwrite node ...' per host

// The document --json prints: the topology, the rendered file and the findings.
json topology_json(const SchedTopology& t, const std::string& format, const std::string& text);

// An existing topology.conf (tree), read the way Slurm's topology/tree reads it. Throws Error
// "origin:line: ..." for what slurmctld refuses: a line that is not SwitchName=..., a switch
// defined twice, with both or neither Nodes= and Switches=, a name over 64 characters, a child
// switch that is not defined or is the switch itself, a cycle, no node at all, a bad hostlist.
struct ConfSwitch {
  std::string name;
  int line = 0;
  std::vector<std::string> nodes;       // expanded
  std::vector<std::string> switches;    // expanded
};
struct TopologyConf {
  std::string origin;
  std::vector<ConfSwitch> switches;
};
TopologyConf parse_topology_conf(const std::string& text, const std::string& origin);
TopologyConf load_topology_conf(const std::string& path);

// The file against the fabric: hosts under another leaf than their HCAs are cabled to, hosts of
// the fabric the file lacks, hosts of the file the fabric lacks, switches of the file the fabric
// lacks. A leaf of the file whose name the fabric does not have is matched to the fabric leaf
// that holds most of its hosts, so a hand-named file is compared by content.
std::vector<Finding> check_topology_conf(const TopologyConf& conf, const SchedTopology& t);

}  // namespace fabscope::fabric
