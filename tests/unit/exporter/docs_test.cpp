// docs/metrics.md must name every metric the exporter can produce.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "exporter/fabric_families.hpp"
#include "exporter/families.hpp"
#include "mesh/mesh_families.hpp"
#include "support/fixtures.hpp"

namespace fabscope::exporter {
namespace {

std::string read_doc(const std::string& rel) {
  std::ifstream in(std::string(FABSCOPE_SOURCE_DIR) + "/" + rel);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(MetricsDoc, NamesEveryFamilyTheExporterCanProduce) {
  RdmaDevice d;
  d.ports.resize(1);
  auto fams = port_families({d});
  fams.push_back(netdev_mtu_family({}));
  for (auto& f : node_families({})) fams.push_back(f);
  CheckResults checks;
  checks.timestamp_seconds = 1;
  for (auto& f : check_families(checks)) fams.push_back(f);
  for (auto& f : self_families({})) fams.push_back(f);
  // --fabric: every family, a saturated counter and the tick included.
  auto sub = subnet::load_subnet((testing::fixture("fabric-leaf-spine") / "fabric.json").string());
  (*sub.nodes[0].ports[0].counters)[subnet::Counter::LinkDownedCounter] = 255;
  FabricView v;
  v.subnet = std::make_shared<const subnet::Subnet>(std::move(sub));
  v.xmit_wait_tick_ns = 64;
  for (auto& f : fabric_families(v)) fams.push_back(f);
  // --mesh: a peer probed once, so its verdict series exist.
  mesh::MeshView mesh;
  mesh::MeshPeerStats p;
  p.peer = "node02";
  p.probed = true;
  mesh.peers.push_back(p);
  for (auto& f : mesh::mesh_families(mesh)) fams.push_back(f);
  auto doc = read_doc("docs/metrics.md");
  ASSERT_FALSE(doc.empty());
  for (const auto& f : fams) EXPECT_NE(doc.find("`" + f.name + "`"), std::string::npos) << f.name;
}

}  // namespace
}  // namespace fabscope::exporter
