#include "cli/fabric_topology.hpp"

#include <iostream>
#include <sstream>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/finding_text.hpp"
#include "core/hostlist.hpp"
#include "core/json.hpp"
#include "core/strings.hpp"
#include "core/terminal.hpp"
#include "fabric/slurm_topology.hpp"

namespace fabscope::cli {

using namespace fabscope::fabric;

void topology_flags(core::ArgParser& args) {
  args.option("--slurm-topology", "FORMAT",
              "write the fabric as Slurm's topology: tree (topology.conf, topology/tree), block "
              "(topology/block) or yaml (topology.yaml, Slurm 25.05)")
      .choices("slurm-topology", {"tree", "block", "yaml"})
      .option("--k8s-labels", "FORMAT",
              "write Kubernetes node labels (topograph's network.topology.nvidia.com/*): json or script "
              "(kubectl label commands)")
      .choices("k8s-labels", {"json", "script"})
      .option("-o,--output", "FILE", "write the topology or labels to FILE instead of standard output")
      .option("--check", "FILE", "compare an existing topology.conf with the fabric: hosts moved, missing or "
                                 "unknown, switches gone")
      .option("--name-map", "FILE", "host and switch names by GUID or node description (ibnetdiscover's "
                                    "node-name-map format; 'GUID NAME' lines)")
      .option("--nodes", "LIST", "keep only these hosts (Slurm hostlist, gpu[01-64]; @FILE: one list per line)")
      .flag("--skip-degraded", "leave the hosts of a leaf whose uplinks are down or slow out of the topology");
}

bool topology_requested(const core::ArgParser& args) {
  return args.has("slurm-topology") || args.has("k8s-labels") || args.has("check");
}

void check_topology_flags(const core::ArgParser& args) {
  const bool topo = topology_requested(args);
  for (const char* f : {"output", "name-map", "nodes", "skip-degraded"})
    if (args.has(f) && !topo)
      throw UsageError(std::string("fabric: --") + f + " goes with --slurm-topology, --k8s-labels or --check");
  if (args.has("slurm-topology") && args.has("k8s-labels"))
    throw UsageError("fabric: --slurm-topology and --k8s-labels write one file each; run fabric twice (or once "
                     "with --save, then twice with --from)");
  if (args.has("output") && !args.has("slurm-topology") && !args.has("k8s-labels"))
    throw UsageError("fabric: --output names the file --slurm-topology or --k8s-labels writes");
  if (args.has("slurm-topology")) {
    const std::string f = args.get("slurm-topology");
    if (f != "tree" && f != "block" && f != "yaml")
      throw UsageError("fabric: --slurm-topology '" + f + "' is not tree, block or yaml");
  }
  if (args.has("k8s-labels")) {
    const std::string f = args.get("k8s-labels");
    if (f != "json" && f != "script") throw UsageError("fabric: --k8s-labels '" + f + "' is not json or script");
  }
  if (topo)
    for (const char* f : {"save", "expect", "plan", "save-plan", "thresholds", "interval", "routes"})
      if (args.has(f))
        throw UsageError(std::string("fabric: --") + f + " judges the fabric; a topology run writes the topology " +
                         "(sweep with --save once, then --from FILE for each)");
}

namespace {

std::set<std::string> nodes_of(const std::string& value) {
  std::set<std::string> out;
  if (!value.empty() && value[0] == '@') {
    const std::string path = value.substr(1);
    const std::string text = core::read_input(path, 16u << 20);
    int line_no = 0;
    for (const auto& line : core::split(text, '\n', false)) {
      ++line_no;
      const std::string t(core::trim(line));
      if (t.empty() || t[0] == '#') continue;
      try {
        for (auto& n : core::expand_hostlist(t)) out.insert(std::move(n));
      } catch (const UsageError& e) {
        throw UsageError(path + ":" + std::to_string(line_no) + ": " + e.what());
      }
    }
    return out;
  }
  for (auto& n : core::expand_hostlist(value)) out.insert(std::move(n));
  return out;
}

std::string summary_line(const SchedTopology& t) {
  int leaves = 0, upper = 0;
  std::size_t placed = 0;
  for (const auto& sw : t.switches) (sw.level == 1 ? leaves : upper)++;
  for (const auto& h : t.hosts) placed += !h.leaf.empty();
  std::ostringstream os;
  os << leaves << " leaf switch(es) with " << placed << " host(s), " << upper << " switch(es) above them";
  if (placed < t.hosts.size()) os << "; " << t.hosts.size() - placed << " host(s) not placed";
  return os.str();
}

}  // namespace

int fabric_topology(const core::ArgParser& args, const Subnet& s) {
  TopologyOptions o;
  if (args.has("name-map")) o.names = load_name_map(args.get("name-map"));
  if (args.has("nodes")) o.keep = nodes_of(args.get("nodes"));
  o.skip_degraded_leaves = args.has("skip-degraded");
  std::optional<TopologyConf> conf;
  if (args.has("check")) conf = load_topology_conf(args.get("check"));

  const SchedTopology t = scheduler_topology(s, o);
  std::vector<Finding> findings = t.findings;
  if (conf) {
    auto more = check_topology_conf(*conf, t);
    findings.insert(findings.end(), more.begin(), more.end());
    std::stable_sort(findings.begin(), findings.end(),
                     [](const Finding& a, const Finding& b) { return a.severity > b.severity; });
  }

  std::string format, text;
  if (args.has("slurm-topology")) {
    format = args.get("slurm-topology");
    text = format == "tree" ? render_slurm_tree(t) : format == "block" ? render_slurm_block(t) : render_slurm_yaml(t);
  } else if (args.has("k8s-labels")) {
    format = "k8s-" + args.get("k8s-labels");
    text = format == "k8s-json" ? dump_json(k8s_labels_json(t)) + "\n" : k8s_labels_script(t);
  } else {
    format = "check";
  }
  const std::string output = args.get("output");
  if (!output.empty()) core::write_output(output, text);
  const bool to_stdout = !text.empty() && output.empty();
  if (args.has("json")) {
    SchedTopology with = t;
    with.findings = findings;
    std::cout << dump_json(topology_json(with, format, text)) << "\n";
    return exit_code_for(findings);
  }
  if (to_stdout) std::cout << text;
  // The report: after the file on standard output it goes to standard error.
  std::ostream& report = to_stdout || (!output.empty() && core::names_stdout(output)) ? std::cerr : std::cout;
  std::ostringstream r;
  r << "Topology of the subnet seen from " << t.source << ": " << summary_line(t) << "\n";
  if (!output.empty()) r << "Wrote " << output << " (" << format << ")\n";
  if (conf) {
    int nodes = 0;
    for (const auto& sw : conf->switches) nodes += static_cast<int>(sw.nodes.size());
    r << "Checked " << conf->origin << ": " << conf->switches.size() << " switch(es), " << nodes << " host(s)\n";
  }
  if (!findings.empty()) r << "\n" << core::render_finding_blocks(findings, core::output_width(args.has("wide")));
  const SeverityCounts c = count_severities(findings);
  r << (findings.empty() ? "" : "\n") << c.fail << " fail, " << c.warn << " warn, " << c.info << " info\n";
  report << core::printable_lines(r.str());
  return exit_code_for(findings);
}

}  // namespace fabscope::cli
