// docs/metrics.md must name every metric the exporter can produce, and every name must follow its
// naming rule ("Names", "Renamed series").
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "exporter/fabric_families.hpp"
#include "exporter/families.hpp"
#include "exporter/job_families.hpp"
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

// Every family the exporter's sources can build, with a sample where a family has one per port,
// link or peer: node mode (a port with counters), --fabric (a saturated counter and the tick
// included), --mesh (a peer probed once, so its verdict series exist) and --jobs (the families
// without a process).
std::vector<MetricFamily> every_family() {
  RdmaDevice d;
  d.name = "mlx5_0";
  RdmaPort p;
  p.port = 1;
  p.state_code = 4;
  p.phys_state_code = 5;
  p.rate_gbps = 200;
  p.counters = {{"port_xmit_data", 4000}, {"port_xmit_wait", 7}, {"port_unknown_future", 9}};
  p.hw_counters = {{"np_cnp_sent", 12}};
  d.ports.push_back(p);
  auto fams = port_families({d});
  fams.push_back(netdev_mtu_family({}));
  for (auto& f : node_families({})) fams.push_back(f);
  CheckResults checks;
  checks.timestamp_seconds = 1;
  for (auto& f : check_families(checks)) fams.push_back(f);
  for (auto& f : self_families({})) fams.push_back(f);
  auto sub = fabric::load_subnet((testing::fixture("fabric-leaf-spine") / "fabric.json").string());
  (*sub.nodes[0].ports[0].counters)[fabric::Counter::LinkDownedCounter] = 255;
  FabricView v;
  v.subnet = std::make_shared<const fabric::Subnet>(std::move(sub));
  v.xmit_wait_tick_ns = 64;
  for (auto& f : fabric_families(v)) fams.push_back(f);
  mesh::MeshView mesh;
  mesh::MeshPeerStats peer;
  peer.peer = "node02";
  peer.probed = true;
  mesh.peers.push_back(peer);
  for (auto& f : mesh::mesh_families(mesh)) fams.push_back(f);
  return fams;
}

std::vector<MetricFamily> every_family_with_jobs() {
  auto fams = every_family();
  for (auto& f : job_families({}, {}, 4096)) fams.push_back(f);
  return fams;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::set<std::string> names_of(const std::vector<MetricFamily>& fams) {
  std::set<std::string> out;
  for (const auto& f : fams) out.insert(f.name);
  return out;
}

// (old, new) of each row of docs/metrics.md's "Renamed series" table.
std::vector<std::pair<std::string, std::string>> renamed_in_doc() {
  const auto doc = read_doc("docs/metrics.md");
  const auto at = doc.find("\n## Renamed series\n");
  if (at == std::string::npos) return {};
  const auto end = doc.find("\n## ", at + 1);
  std::istringstream in(doc.substr(at, end - at));
  std::vector<std::pair<std::string, std::string>> out;
  const std::regex row(R"(^\| `(fabscope_[a-z0-9_]+)` \| `(fabscope_[a-z0-9_]+)` \|)");
  std::smatch m;
  for (std::string line; std::getline(in, line);)
    if (std::regex_search(line, m, row)) out.emplace_back(m[1], m[2]);
  return out;
}

TEST(MetricsDoc, NamesEveryFamilyTheExporterCanProduce) {
  auto doc = read_doc("docs/metrics.md");
  ASSERT_FALSE(doc.empty());
  for (const auto& f : every_family()) EXPECT_NE(doc.find("`" + f.name + "`"), std::string::npos) << f.name;
}

TEST(MetricNames, CountersAndOnlyCountersEndInTotal) {
  for (const auto& f : every_family_with_jobs())
    EXPECT_EQ(f.type == MetricType::Counter, ends_with(f.name, "_total")) << f.name;
}

TEST(MetricNames, InfoFamiliesAreGaugesOfOne) {
  int infos = 0;
  for (const auto& f : every_family_with_jobs()) {
    if (!ends_with(f.name, "_info")) continue;
    infos++;
    EXPECT_EQ(f.type, MetricType::Gauge) << f.name;
    for (const auto& s : f.samples) EXPECT_EQ(s.value, 1) << f.name;
  }
  EXPECT_GE(infos, 3);
}

TEST(MetricNames, UnitsAreBaseUnitsAndWordsAreWhole) {
  // Abbreviations of the kernel or the IBA, prefixed or abbreviated units, and `speed` for a rate.
  const std::set<std::string> banned = {"xmit", "rcv",    "phys", "gbps",  "mbps", "gbytes", "mbytes",
                                        "kb",   "mb",     "gb",   "ms",    "us",   "ns",     "sec",
                                        "bits", "speed",  "milliseconds", "microseconds", "nanoseconds",
                                        "kilobytes", "megabytes", "gigabytes"};
  for (const auto& f : every_family_with_jobs()) {
    std::istringstream words(f.name);
    for (std::string w; std::getline(words, w, '_');) EXPECT_EQ(banned.count(w), 0u) << f.name << ": " << w;
  }
}

TEST(MetricNames, FabricPortCountersHaveTheNodeModeNames) {
  const auto fams = every_family();
  const auto names = names_of(fams);
  const std::string fabric = "fabscope_fabric_port_";
  int counters = 0;
  for (const auto& f : fams) {
    if (f.type != MetricType::Counter || f.name.rfind(fabric, 0) != 0) continue;
    counters++;
    EXPECT_EQ(names.count("fabscope_port_" + f.name.substr(fabric.size())), 1u) << f.name;
  }
  EXPECT_GE(counters, 17);
}

TEST(MetricNames, RenamedSeriesAreGoneTheirNewNamesServedAndRecordedUnderTheOld) {
  const auto renamed = renamed_in_doc();
  ASSERT_FALSE(renamed.empty());
  const auto names = names_of(every_family_with_jobs());
  const auto rules = read_doc("deploy/prometheus/fabscope-renamed-rules.yml");
  for (const auto& [old_name, new_name] : renamed) {
    EXPECT_EQ(names.count(old_name), 0u) << old_name;
    EXPECT_EQ(names.count(new_name), 1u) << new_name;
    const auto rule = rules.find("- record: " + old_name + "\n");
    ASSERT_NE(rule, std::string::npos) << old_name;
    const auto expr = rules.find("expr: ", rule);
    ASSERT_NE(expr, std::string::npos) << old_name;
    const auto line = rules.substr(expr + 6, rules.find('\n', expr) - expr - 6);
    EXPECT_TRUE(line == new_name || line.rfind(new_name + " ", 0) == 0) << old_name << " is recorded from " << line;
  }
}

}  // namespace
}  // namespace fabscope::exporter
