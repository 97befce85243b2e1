// docs/metrics.md must name every metric the exporter can produce.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "exporter/families.hpp"

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
  auto doc = read_doc("docs/metrics.md");
  ASSERT_FALSE(doc.empty());
  for (const auto& f : fams) EXPECT_NE(doc.find("`" + f.name + "`"), std::string::npos) << f.name;
}

}  // namespace
}  // namespace fabscope::exporter
