// The fabric's metric families, rendered from the saved leaf/spine sweep
// (tests/fixtures/fabric-leaf-spine: 4 switches, 4 HCAs, 8 links, a master and a standby SM).
#include "exporter/fabric_families.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "support/fixtures.hpp"

namespace fabscope::exporter {
namespace {

using fabric::Counter;

fabric::Subnet leaf_spine_fabric() {
  return fabric::load_subnet((testing::fixture("fabric-leaf-spine") / "fabric.json").string());
}

FabricView view_of(fabric::Subnet s) {
  FabricView v;
  v.subnet = std::make_shared<const fabric::Subnet>(std::move(s));
  return v;
}

const MetricFamily* find(const std::vector<MetricFamily>& fams, const std::string& name) {
  auto it = std::find_if(fams.begin(), fams.end(), [&](const MetricFamily& f) { return f.name == name; });
  return it == fams.end() ? nullptr : &*it;
}

std::string label_of(const Sample& s, const std::string& key) {
  for (const auto& [k, v] : s.labels)
    if (k == key) return v;
  return "<none>";
}

// The sample of family `name` whose labels include every pair of `want`.
const Sample& sample(const std::vector<MetricFamily>& fams, const std::string& name, const Labels& want) {
  const auto* f = find(fams, name);
  if (!f) throw std::runtime_error("no family " + name);
  for (const auto& s : f->samples) {
    bool all = true;
    for (const auto& [k, v] : want) all = all && label_of(s, k) == v;
    if (all) return s;
  }
  throw std::runtime_error("no sample in " + name);
}

fabric::Port& port(fabric::Subnet& s, const std::string& name, int number) {
  for (int n = 0; n < static_cast<int>(s.nodes.size()); ++n)
    if (s.name(n) == name) return *s.nodes[n].port(number);
  throw std::runtime_error("no node " + name);
}

const Labels kNode1{{"node_guid", "0x0000000000100000"}, {"node_name", "H-node1 mlx5_0"}, {"port", "1"}};
const Labels kNode1Link{{"node_guid", "0x0000000000100000"}, {"port", "1"},
                        {"remote_node_guid", "0x0000000000200000"}, {"remote_node_name", "S-leaf1"},
                        {"remote_port", "1"}};

TEST(FabricFamilies, DataCountersAreBytesFromFourByteWordsWithNodeAndPortLabels) {
  auto fams = fabric_families(view_of(leaf_spine_fabric()));
  const auto& s = sample(fams, "fabscope_fabric_port_data_transmitted_bytes_total", kNode1);
  EXPECT_TRUE(s.is_integer);
  EXPECT_EQ(s.integer, 1017u * 4);
  EXPECT_EQ(sample(fams, "fabscope_fabric_port_data_received_bytes_total", kNode1).integer, 1013u * 4);
  EXPECT_EQ(sample(fams, "fabscope_fabric_port_packets_transmitted_total", kNode1).integer, 51u);
  EXPECT_EQ(sample(fams, "fabscope_fabric_port_transmit_wait_ticks_total", kNode1).integer, 3u);
  EXPECT_EQ(sample(fams, "fabscope_fabric_port_counters_extended", kNode1).value, 1);
  EXPECT_EQ(find(fams, "fabscope_fabric_port_data_transmitted_bytes_total")->type, MetricType::Counter);
}

TEST(FabricFamilies, ExtendedDataCountersKeepAll64Bits) {
  auto s = leaf_spine_fabric();
  (*port(s, "H-node1 mlx5_0", 1).counters)[Counter::PortXmitData] = (1ull << 60) + 1;
  auto fams = fabric_families(view_of(std::move(s)));
  EXPECT_EQ(sample(fams, "fabscope_fabric_port_data_transmitted_bytes_total", kNode1).integer, (1ull << 62) + 4);
  EXPECT_EQ(render_text(fams).find("e+"), std::string::npos);
}

TEST(FabricFamilies, EveryErrorCounterHasItsOwnFamily) {
  auto s = leaf_spine_fabric();
  auto& c = *port(s, "S-leaf1", 7).counters;
  c[Counter::SymbolErrorCounter] = 55;
  c[Counter::PortRcvErrors] = 7;
  c[Counter::VL15Dropped] = 2;
  auto fams = fabric_families(view_of(std::move(s)));
  const Labels at{{"node_name", "S-leaf1"}, {"port", "7"}};
  EXPECT_EQ(sample(fams, "fabscope_fabric_port_symbol_errors_total", at).integer, 55u);
  EXPECT_EQ(sample(fams, "fabscope_fabric_port_receive_errors_total", at).integer, 7u);
  EXPECT_EQ(sample(fams, "fabscope_fabric_port_vl15_dropped_total", at).integer, 2u);
  int error_families = 0;
  for (int k = 0; k < fabric::kCounterCount; ++k)
    if (fabric::is_error_counter(static_cast<Counter>(k))) ++error_families;
  int rendered = 0;
  for (const auto& f : fams)
    if (f.name.rfind("fabscope_fabric_port_", 0) != 0) continue;
    else if (f.name.find("_errors_total") != std::string::npos || f.name.find("_downed_total") != std::string::npos ||
        f.name.find("_recoveries_total") != std::string::npos || f.name.find("_discards_total") != std::string::npos ||
        f.name.find("_dropped_total") != std::string::npos)
      ++rendered;
  EXPECT_EQ(rendered, error_families);
}

TEST(FabricFamilies, SwitchManagementPortHasNoPortSeries) {
  auto fams = fabric_families(view_of(leaf_spine_fabric()));
  for (const auto& s : find(fams, "fabscope_fabric_port_state")->samples)
    EXPECT_FALSE(label_of(s, "node_name") == "S-leaf1" && label_of(s, "port") == "0");
}

TEST(FabricFamilies, SaturatedNarrowCounterGetsAGaugeNamingIt) {
  auto s = leaf_spine_fabric();
  (*port(s, "S-leaf1", 7).counters)[Counter::LinkDownedCounter] = 255;  // 8 bits
  (*port(s, "S-leaf1", 8).counters)[Counter::LinkDownedCounter] = 254;
  auto fams = fabric_families(view_of(std::move(s)));
  const auto* f = find(fams, "fabscope_fabric_port_counter_saturated");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->samples.size(), 1u);
  EXPECT_EQ(label_of(f->samples[0], "node_name"), "S-leaf1");
  EXPECT_EQ(label_of(f->samples[0], "port"), "7");
  EXPECT_EQ(label_of(f->samples[0], "counter"), "LinkDownedCounter");
}

TEST(FabricFamilies, ActiveLinkHasBothEndsLowerGuidFirstWithWidthSpeedAndRate) {
  auto fams = fabric_families(view_of(leaf_spine_fabric()));
  EXPECT_EQ(sample(fams, "fabscope_fabric_link_up", kNode1Link).value, 1);
  EXPECT_EQ(label_of(sample(fams, "fabscope_fabric_link_up", kNode1Link), "node_name"), "H-node1 mlx5_0");
  EXPECT_EQ(sample(fams, "fabscope_fabric_link_state", kNode1Link).value, 4);
  EXPECT_EQ(sample(fams, "fabscope_fabric_link_physical_state", kNode1Link).value, 5);
  EXPECT_EQ(sample(fams, "fabscope_fabric_link_width_lanes", kNode1Link).value, 4);
  // 4X HDR: 50 Gb/s a lane (the kernel's rate, not the 53.125 of signalling), 200 Gb/s the link.
  EXPECT_DOUBLE_EQ(sample(fams, "fabscope_fabric_link_lane_rate_bytes_per_second", kNode1Link).value, 6.25e9);
  EXPECT_DOUBLE_EQ(sample(fams, "fabscope_fabric_link_rate_bytes_per_second", kNode1Link).value, 25e9);
  EXPECT_EQ(sample(fams, "fabscope_fabric_link_below_tier", kNode1Link).value, 0);
  // ibsim-style ports support 12X: every link is below what both ends support.
  EXPECT_EQ(sample(fams, "fabscope_fabric_link_below_capability", kNode1Link).value, 1);
  EXPECT_EQ(find(fams, "fabscope_fabric_link_up")->samples.size(), 8u);
}

TEST(FabricFamilies, LinkNarrowerThanItsTierIsFlagged) {
  auto s = leaf_spine_fabric();
  port(s, "H-node1 mlx5_0", 1).info->width_active = 1;
  port(s, "S-leaf1", 1).info->width_active = 1;
  auto fams = fabric_families(view_of(std::move(s)));
  EXPECT_EQ(sample(fams, "fabscope_fabric_link_width_lanes", kNode1Link).value, 1);
  EXPECT_EQ(sample(fams, "fabscope_fabric_link_below_tier", kNode1Link).value, 1);
  EXPECT_DOUBLE_EQ(sample(fams, "fabscope_fabric_link_rate_bytes_per_second", kNode1Link).value, 6.25e9);
}

TEST(FabricFamilies, LinkWithAnEndInInitIsNotUp) {
  auto s = leaf_spine_fabric();
  port(s, "S-leaf1", 1).info->state = fabric::PortState::Init;
  auto fams = fabric_families(view_of(std::move(s)));
  EXPECT_EQ(sample(fams, "fabscope_fabric_link_up", kNode1Link).value, 0);
  EXPECT_EQ(sample(fams, "fabscope_fabric_link_state", kNode1Link).value, 2);
  EXPECT_THROW(sample(fams, "fabscope_fabric_link_width_lanes", kNode1Link), std::runtime_error);
}

TEST(FabricFamilies, LinkGoneSinceAnEarlierDiscoveryStaysAsDown) {
  auto s = leaf_spine_fabric();
  const auto keys = link_keys(s);
  auto& a = port(s, "H-node1 mlx5_0", 1);
  auto& b = port(s, "S-leaf1", 1);
  a.remote_node = b.remote_node = -1;
  a.info->state = b.info->state = fabric::PortState::Down;
  a.info->phys_state = b.info->phys_state = fabric::PhysState::Polling;
  s.rebuild_links();
  FabricView v = view_of(std::move(s));
  for (const auto& k : keys)
    if (k.a.node_guid == 0x100000) v.missing_links.push_back(k);
  ASSERT_EQ(v.missing_links.size(), 1u);
  auto fams = fabric_families(v);
  EXPECT_EQ(sample(fams, "fabscope_fabric_link_up", kNode1Link).value, 0);
  EXPECT_EQ(sample(fams, "fabscope_fabric_link_state", kNode1Link).value, 1);
  EXPECT_EQ(sample(fams, "fabscope_fabric_link_physical_state", kNode1Link).value, 2);
  EXPECT_EQ(sample(fams, "fabscope_fabric_links", {}).value, 7);
  EXPECT_EQ(sample(fams, "fabscope_fabric_links_missing", {}).value, 1);
  EXPECT_EQ(find(fams, "fabscope_fabric_link_up")->samples.size(), 8u);
}

TEST(FabricFamilies, SubnetManagersByStateWithPriority) {
  auto fams = fabric_families(view_of(leaf_spine_fabric()));
  const Labels master{{"sm_guid", "0x0000000000100001"}, {"node_name", "H-node1 mlx5_0"}};
  EXPECT_EQ(sample(fams, "fabscope_fabric_sm_state", master).value, 3);
  EXPECT_EQ(sample(fams, "fabscope_fabric_sm_priority", master).value, 15);
  EXPECT_EQ(sample(fams, "fabscope_fabric_sms", {{"state", "MASTER"}}).value, 1);
  EXPECT_EQ(sample(fams, "fabscope_fabric_sms", {{"state", "STANDBY"}}).value, 1);
  EXPECT_EQ(sample(fams, "fabscope_fabric_sms", {{"state", "NOTACTIVE"}}).value, 0);
}

TEST(FabricFamilies, NodesCountedByType) {
  auto fams = fabric_families(view_of(leaf_spine_fabric()));
  EXPECT_EQ(sample(fams, "fabscope_fabric_nodes", {{"type", "switch"}}).value, 4);
  EXPECT_EQ(sample(fams, "fabscope_fabric_nodes", {{"type", "hca"}}).value, 4);
  EXPECT_EQ(sample(fams, "fabscope_fabric_nodes", {{"type", "router"}}).value, 0);
  EXPECT_EQ(sample(fams, "fabscope_fabric_links", {}).value, 8);
}

TEST(FabricFamilies, BeforeTheFirstCollectionOnlyTheCollectorsOwnSeries) {
  FabricView v;
  v.discovery.interval_seconds = 300;
  v.discovery.errors_total = 2;
  auto fams = fabric_families(v);
  EXPECT_EQ(find(fams, "fabscope_fabric_link_up"), nullptr);
  EXPECT_EQ(sample(fams, "fabscope_fabric_collection_errors_total", {{"kind", "discovery"}}).integer, 2u);
  EXPECT_EQ(sample(fams, "fabscope_fabric_collection_interval_seconds", {{"kind", "discovery"}}).value, 300);
  EXPECT_EQ(sample(fams, "fabscope_fabric_last_success_timestamp_seconds", {{"kind", "counters"}}).value, 0);
  EXPECT_EQ(find(fams, "fabscope_fabric_transmit_wait_tick_seconds"), nullptr);
}

TEST(FabricFamilies, RendersAsValidExposition) {
  auto s = leaf_spine_fabric();
  s.nodes[1].description = "sw \"quoted\"\\ \n";
  FabricView v = view_of(std::move(s));
  v.xmit_wait_tick_ns = 64;
  auto text = render_text(fabric_families(v));
  EXPECT_NE(text.find("# TYPE fabscope_fabric_port_symbol_errors_total counter"), std::string::npos);
  EXPECT_NE(text.find("node_name=\"sw \\\"quoted\\\"\\\\ \\n\""), std::string::npos);
  EXPECT_NE(text.find("fabscope_fabric_transmit_wait_tick_seconds 6.4e-08"), std::string::npos);
}

}  // namespace
}  // namespace fabscope::exporter
