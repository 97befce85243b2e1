// libFuzzer target for what `fabscope fabric --slurm-topology/--k8s-labels/--check` reads besides
// the sweep: a topology.conf (--check), a name map (--name-map), and a saved sweep turned into a
// topology. The first byte picks ('0' topology.conf, '1' name map, '2' a sweep in the
// fabscope.fabric schema), the rest is the file. A file reads or throws fabscope::Error; a
// sweep's topology renders in every format, and the tree written from it reads back and checks
// against the same topology with nothing moved. Run:
//   build-fuzz/tests/fuzz/fabscope_slurm_topology_fuzz tests/fuzz/corpus/slurm_topology
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "fabric/model.hpp"
#include "fabric/slurm_topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fabscope;
  using namespace fabscope::fabric;
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 3) {
    case 0:
      try {
        (void)parse_topology_conf(text, "fuzz");
      } catch (const Error&) {
      }
      return 0;
    case 1:
      try {
        (void)parse_name_map(text, "fuzz");
      } catch (const Error&) {
      }
      return 0;
    default: break;
  }
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return 0;
  Subnet s;
  try {
    s = subnet_from_json(j);
  } catch (const Error&) {
    return 0;
  }
  const SchedTopology t = scheduler_topology(s, {});
  const std::string tree = render_slurm_tree(t);
  (void)render_slurm_block(t);
  (void)render_slurm_yaml(t);
  (void)k8s_labels_script(t);
  (void)dump_json(k8s_labels_json(t));
  (void)dump_json(topology_json(t, "tree", tree));
  // What fabscope writes, Slurm's reader (and ours) takes, and it agrees with the fabric.
  bool any_host = false;
  for (const auto& sw : t.switches) any_host = any_host || !sw.hosts.empty();
  if (!any_host) return 0;
  try {
    for (const auto& f : check_topology_conf(parse_topology_conf(tree, "written"), t))
      if (f.id == "fabric.topology_host_moved" || f.id == "fabric.topology_host_missing") std::abort();
  } catch (const Error&) {
    std::abort();
  }
  return 0;
}
