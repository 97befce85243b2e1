#include "exporter/families.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace fabscope::exporter {
namespace {

RdmaDevice device_with_port() {
  RdmaDevice d;
  d.name = "mlx5_0";
  d.hca_type = "MT4123";
  d.fw_ver = "20.31.1014";
  d.board_id = "MT_0000000222";
  RdmaPort p;
  p.port = 1;
  p.state = "ACTIVE";
  p.state_code = 4;
  p.phys_state = "LinkUp";
  p.phys_state_code = 5;
  p.rate_gbps = 200;
  p.link_layer = "Ethernet";
  p.netdev = "ens1f0np0";
  p.counters = {{"port_xmit_data", 4000}, {"symbol_error", 3}, {"port_unknown_future", 9}};
  p.hw_counters = {{"np_cnp_sent", 12}, {"lifespan", 10}};
  d.ports.push_back(p);
  return d;
}

const MetricFamily& family(const std::vector<MetricFamily>& fams, const std::string& name) {
  auto it = std::find_if(fams.begin(), fams.end(), [&](const MetricFamily& f) { return f.name == name; });
  if (it == fams.end()) throw std::runtime_error("no family " + name);
  return *it;
}

std::string label(const Sample& s, const std::string& key) {
  for (const auto& [k, v] : s.labels)
    if (k == key) return v;
  return "<none>";
}

TEST(Families, KnownCounter_GetsItsOwnNameWithDeviceAndPortLabels) {
  auto fams = port_families({device_with_port()});
  const auto& f = family(fams, "fabscope_port_symbol_errors_total");
  ASSERT_EQ(f.samples.size(), 1u);
  EXPECT_EQ(f.type, MetricType::Counter);
  EXPECT_EQ(label(f.samples[0], "device"), "mlx5_0");
  EXPECT_EQ(label(f.samples[0], "port"), "1");
  EXPECT_EQ(f.samples[0].integer, 3u);
}

TEST(Families, DataCounter_IsExportedAsTheProbeBytesUnchanged) {
  auto fams = port_families({device_with_port()});
  EXPECT_EQ(family(fams, "fabscope_port_data_transmitted_bytes_total").samples[0].integer, 4000u);
}

TEST(Families, UnknownCountersFile_GoesToTheGenericFamilyWithCounterLabel) {
  auto fams = port_families({device_with_port()});
  const auto& f = family(fams, "fabscope_port_extra_events_total");
  ASSERT_EQ(f.samples.size(), 1u);
  EXPECT_EQ(label(f.samples[0], "counter"), "port_unknown_future");
}

TEST(Families, HwCounters_AreCountersButLifespanIsLeftOut) {
  auto fams = port_families({device_with_port()});
  const auto& f = family(fams, "fabscope_port_hw_events_total");
  ASSERT_EQ(f.samples.size(), 1u);
  EXPECT_EQ(label(f.samples[0], "counter"), "np_cnp_sent");
  EXPECT_EQ(f.samples[0].integer, 12u);
}

TEST(Families, Rate_IsInBytesPerSecond) {
  auto fams = port_families({device_with_port()});
  EXPECT_DOUBLE_EQ(family(fams, "fabscope_port_rate_bytes_per_second").samples[0].value, 25e9);  // 200 Gb/s
}

TEST(Families, States_AreTheKernelCodes) {
  auto fams = port_families({device_with_port()});
  EXPECT_EQ(family(fams, "fabscope_port_state").samples[0].value, 4);
  EXPECT_EQ(family(fams, "fabscope_port_physical_state").samples[0].value, 5);
}

TEST(Families, UnknownStateAndRate_HaveNoSample) {
  auto d = device_with_port();
  d.ports[0].state_code.reset();
  d.ports[0].rate_gbps.reset();
  auto fams = port_families({d});
  EXPECT_TRUE(family(fams, "fabscope_port_state").samples.empty());
  EXPECT_TRUE(family(fams, "fabscope_port_rate_bytes_per_second").samples.empty());
}

TEST(Families, Info_CarriesAdapterFirmwareLinkLayerAndNetdev) {
  auto fams = port_families({device_with_port()});
  const auto& s = family(fams, "fabscope_port_info").samples.at(0);
  EXPECT_EQ(s.value, 1);
  EXPECT_EQ(label(s, "hca_type"), "MT4123");
  EXPECT_EQ(label(s, "fw_ver"), "20.31.1014");
  EXPECT_EQ(label(s, "link_layer"), "Ethernet");
  EXPECT_EQ(label(s, "netdev"), "ens1f0np0");
}

TEST(Families, EveryFamily_HasHelpAndAValidName) {
  auto fams = port_families({device_with_port()});
  fams.push_back(netdev_mtu_family({{"eth0", 9000}}));
  for (auto& f : node_families({2, true})) fams.push_back(f);
  for (auto& f : check_families({{"link.port_down"}, {}, 0.1, 1e9})) fams.push_back(f);
  for (auto& f : self_families({})) fams.push_back(f);
  for (const auto& f : fams) {
    EXPECT_TRUE(is_valid_metric_name(f.name)) << f.name;
    EXPECT_FALSE(f.help.empty()) << f.name;
    EXPECT_EQ(f.type == MetricType::Counter, f.name.size() > 6 && f.name.ends_with("_total")) << f.name;
  }
}

TEST(Families, CheckStatus_IsZeroForIdsWithoutFindings) {
  CheckResults r;
  r.ids = {"link.port_down", "roce.pfc_disabled"};
  auto fams = check_families(r);
  const auto& f = family(fams, "fabscope_check_status");
  ASSERT_EQ(f.samples.size(), 2u);
  EXPECT_EQ(f.samples[0].value, 0);
  EXPECT_EQ(f.samples[1].value, 0);
}

TEST(Families, CheckStatus_IsTheWorstSeverityOverSubjects) {
  CheckResults r;
  r.ids = {"link.port_down"};
  Finding a, b, c;
  a.id = b.id = c.id = "link.port_down";
  a.severity = Severity::Warn;
  b.severity = Severity::Fail;
  c.severity = Severity::Info;
  r.findings = {a, b, c};
  EXPECT_EQ(family(check_families(r), "fabscope_check_status").samples.at(0).value, 2);
}

TEST(Families, CheckStatus_MapsInfoToOkAndWarnToOne) {
  EXPECT_EQ(check_status(Severity::Info), 0);
  EXPECT_EQ(check_status(Severity::Ok), 0);
  EXPECT_EQ(check_status(Severity::Warn), 1);
  EXPECT_EQ(check_status(Severity::Fail), 2);
}

TEST(Families, FindingOutsideTheRegistry_StillGetsAStatus) {
  CheckResults r;
  Finding a;
  a.id = "gdr.peermem_missing";
  a.severity = Severity::Warn;
  r.findings = {a};
  auto fams = check_families(r);
  const auto& s = family(fams, "fabscope_check_status").samples.at(0);
  EXPECT_EQ(label(s, "check"), "gdr.peermem_missing");
  EXPECT_EQ(s.value, 1);
}

TEST(Families, ScrapeErrors_ListEveryReasonFromZero) {
  SelfStats s;
  s.scrape_errors_total[kErrorRead] = 2;
  auto fams = self_families(s);
  const auto& f = family(fams, "fabscope_scrape_errors_total");
  ASSERT_EQ(f.samples.size(), 3u);
  for (const auto& sample : f.samples)
    EXPECT_EQ(sample.integer, label(sample, "reason") == kErrorRead ? 2u : 0u) << label(sample, "reason");
}

TEST(Families, ReadProblems_ListEveryNoteKindFromZero) {
  SelfStats s;
  s.read_problems_total["bad_value"] = 3;
  auto fams = self_families(s);
  const auto& f = family(fams, "fabscope_scrape_read_problems_total");
  EXPECT_EQ(f.type, MetricType::Counter);
  std::vector<std::string> kinds;
  for (const auto& sample : f.samples) {
    kinds.push_back(label(sample, "kind"));
    EXPECT_EQ(sample.integer, kinds.back() == "bad_value" ? 3u : 0u) << kinds.back();
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"bad_value", "empty", "missing", "not_text", "removed", "unreadable"}));
}

// A value unread is a state: a gauge by kind, every kind from 0, and no "removed" (an event).
TEST(Families, ValuesUnread_IsAGaugeOfEveryValueKindFromZero) {
  SelfStats s;
  s.values_unread["empty"] = 2;
  auto fams = self_families(s);
  const auto& f = family(fams, "fabscope_values_unread");
  EXPECT_EQ(f.type, MetricType::Gauge);
  std::vector<std::string> kinds;
  for (const auto& sample : f.samples) {
    kinds.push_back(label(sample, "kind"));
    EXPECT_EQ(sample.integer, kinds.back() == "empty" ? 2u : 0u) << kinds.back();
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"bad_value", "empty", "missing", "not_text", "unreadable"}));
}

TEST(Families, NodeFacts_UnknownLeavesTheSeriesOut) {
  auto fams = node_families({});
  EXPECT_TRUE(family(fams, "fabscope_node_gpus").samples.empty());
  EXPECT_TRUE(family(fams, "fabscope_node_peermem_loaded").samples.empty());
  auto known = node_families({8, false});
  EXPECT_EQ(family(known, "fabscope_node_gpus").samples.at(0).value, 8);
  EXPECT_EQ(family(known, "fabscope_node_peermem_loaded").samples.at(0).value, 0);
}

}  // namespace
}  // namespace fabscope::exporter
