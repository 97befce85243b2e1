// Node mode's NVLink series, from values shaped like NVML's answers on two H200
// (tests/fixtures/nvml-h200x2: 18 links each to NVSwitches; nvml-h200x2-bench: the data counter).
#include <gtest/gtest.h>

#include "exporter/families.hpp"

namespace fabscope::exporter {
namespace {

const MetricFamily& nvlink_family(const std::vector<MetricFamily>& fams, const std::string& name) {
  for (const auto& f : fams)
    if (f.name == name) return f;
  throw std::runtime_error("no family " + name);
}

std::string nvlink_label(const Sample& s, const std::string& key) {
  for (const auto& [k, v] : s.labels)
    if (k == key) return v;
  return "<none>";
}

std::vector<Gpu> nvlink_gpus() {
  Gpu g;
  g.index = 0;
  g.pci_address = "0000:00:06.0";
  for (int k = 0; k < 18; ++k) {
    NvLink l;
    l.link = k;
    l.active = k != 5;
    l.version_code = 6;
    l.remote_type = "switch";
    l.replay_errors = 0;
    l.crc_data_errors = 410;
    if (k == 0) l.data_transmitted_bytes = 3038613ull * 1024;  // smi-gtd-after.txt, link 0
    g.nvlinks.push_back(l);
  }
  g.nvlink_data_transmitted_bytes = 54527679ull * 1024;
  g.nvlink_raw_transmitted_bytes = 67137607ull * 1024;
  return {g};
}

TEST(NvlinkFamilies, OneUpSamplePerLinkWithTheDownOneAtZero) {
  auto fams = nvlink_families(nvlink_gpus(), {});
  const auto& up = nvlink_family(fams, "fabscope_gpu_nvlink_up");
  ASSERT_EQ(up.samples.size(), 18u);
  EXPECT_EQ(nvlink_label(up.samples[5], "gpu"), "0000:00:06.0");
  EXPECT_EQ(nvlink_label(up.samples[5], "link"), "5");
  EXPECT_EQ(up.samples[5].value, 0);
  EXPECT_EQ(up.samples[4].value, 1);
  const auto& info = nvlink_family(fams, "fabscope_gpu_nvlink_info");
  EXPECT_EQ(nvlink_label(info.samples[0], "version"), "6");
  EXPECT_EQ(nvlink_label(info.samples[0], "remote_type"), "switch");
}

TEST(NvlinkFamilies, ErrorsByCounterOnlyWhereTheDriverAnswered) {
  auto fams = nvlink_families(nvlink_gpus(), {});
  const auto& errors = nvlink_family(fams, "fabscope_gpu_nvlink_errors_total");
  EXPECT_EQ(errors.type, MetricType::Counter);
  ASSERT_EQ(errors.samples.size(), 36u);  // replay and crc_data on 18 links; the rest unanswered
  EXPECT_EQ(nvlink_label(errors.samples[1], "error"), "crc_data");
  EXPECT_EQ(errors.samples[1].integer, 410u);
}

TEST(NvlinkFamilies, BytesExactPerLinkAndOverAllLinks) {
  auto fams = nvlink_families(nvlink_gpus(), {});
  const auto& tx = nvlink_family(fams, "fabscope_gpu_nvlink_data_transmitted_bytes_total");
  ASSERT_EQ(tx.samples.size(), 1u);
  EXPECT_EQ(tx.samples[0].integer, 3038613ull * 1024);
  const auto& all = nvlink_family(fams, "fabscope_gpu_nvlinks_transmitted_bytes_total");
  ASSERT_EQ(all.samples.size(), 2u);
  EXPECT_EQ(nvlink_label(all.samples[0], "traffic"), "data");
  EXPECT_EQ(all.samples[0].integer, 54527679ull * 1024);  // above 2^53 / 1024: kept exact
  EXPECT_EQ(nvlink_label(all.samples[1], "traffic"), "raw");
  EXPECT_TRUE(nvlink_family(fams, "fabscope_gpu_nvlinks_received_bytes_total").samples.empty());
}

TEST(NvlinkFamilies, PairSeriesCarriesTheTopoLevel) {
  GpuPair nv;
  nv.gpu_a = "0000:00:06.0";
  nv.gpu_b = "0000:00:07.0";
  nv.level = "NV18";
  nv.nvlinks = 18;
  GpuPair pcie = nv;
  pcie.gpu_b = "0000:00:08.0";
  pcie.level = "SYS";
  pcie.nvlinks = 0;
  GpuPair unknown = nv;  // sysfs only: the links are not known, no sample
  unknown.nvlinks.reset();
  unknown.level = "PHB";
  auto fams = nvlink_families({}, {nv, pcie, unknown});
  const auto& pair = nvlink_family(fams, "fabscope_gpu_pair_nvlinks");
  ASSERT_EQ(pair.samples.size(), 2u);
  EXPECT_EQ(pair.samples[0].value, 18);
  EXPECT_EQ(nvlink_label(pair.samples[1], "level"), "SYS");
  EXPECT_EQ(pair.samples[1].value, 0);
}

TEST(NvlinkFamilies, NoGpuGivesEmptyFamiliesInNodeMode) {
  auto fams = node_families({});
  EXPECT_TRUE(nvlink_family(fams, "fabscope_gpu_nvlink_up").samples.empty());
  EXPECT_TRUE(nvlink_family(fams, "fabscope_gpu_pair_nvlinks").samples.empty());
}

}  // namespace
}  // namespace fabscope::exporter
