// NVLink facts from NVML's answers, as captured on H200 machines by
// scripts/device-nvml-capture.c (tests/fixtures/nvml-*): the same interpretation the live probe
// applies to its own answers.
#include "probe/nvlink.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "probe/gpu.hpp"
#include "probe/pci.hpp"
#include "probe/render.hpp"
#include "support/fixtures.hpp"

using namespace fabscope;
using fabscope::testing::fixture;

namespace {
json nvml_doc(const std::string& dir, const std::string& file = "nvml.json") {
  std::ifstream in(fixture(dir) / file);
  std::stringstream s;
  s << in.rdbuf();
  return json::parse(s.str());
}

// The two H200 of tests/fixtures/h200x2-node, the machine kind the NVML captures come from.
std::vector<Gpu> two_h200() {
  std::vector<Gpu> gpus(2);
  gpus[0].index = 0;
  gpus[0].pci_address = "0000:00:06.0";
  gpus[0].name = "NVIDIA H200";
  gpus[1].index = 1;
  gpus[1].pci_address = "0000:00:07.0";
  gpus[1].name = "NVIDIA H200";
  return gpus;
}

std::string nvml_parse_error(const json& doc) {
  try {
    probe::parse_nvml_capture(doc);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(NvmlCapture, H200x2_EighteenActiveLinksOfVersion4ToNvSwitches) {
  auto gpus = two_h200();
  probe::apply_nvml_answers(probe::parse_nvml_capture(nvml_doc("nvml-h200x2")), gpus);
  for (const auto& g : gpus) {
    ASSERT_EQ(g.nvlinks.size(), 18u);
    EXPECT_EQ(g.nvlink_total, 18);
    EXPECT_EQ(g.nvlink_active, 18);
    for (const auto& l : g.nvlinks) {
      EXPECT_EQ(l.active, true);
      EXPECT_EQ(l.version_code, 6);
      EXPECT_EQ(l.remote_type, "switch");
      EXPECT_EQ(l.remote_pci_address, "");  // FFFFFFFF:FF:FF.0: the switch has no PCI address here
    }
  }
  EXPECT_EQ(probe::nvlink_version_name(6), "4.0");
}

TEST(NvmlCapture, H200x2_ErrorCountersAsTheDriverGaveThem) {
  auto gpus = two_h200();
  probe::apply_nvml_answers(probe::parse_nvml_capture(nvml_doc("nvml-h200x2")), gpus);
  const NvLink& l0 = gpus[0].nvlinks[0];
  EXPECT_EQ(l0.replay_errors, 0u);
  EXPECT_EQ(l0.recovery_errors, 0u);
  EXPECT_EQ(l0.crc_flit_errors, 0u);
  EXPECT_EQ(l0.crc_data_errors, 410u);  // nvml.json gpus[0].links[0].errors[3]
  EXPECT_EQ(l0.ecc_data_errors, 798u);
}

TEST(NvmlCapture, H200x2_PairIsNv18WithP2pOk) {
  auto gpus = two_h200();
  auto pairs = probe::apply_nvml_answers(probe::parse_nvml_capture(nvml_doc("nvml-h200x2")), gpus);
  ASSERT_EQ(pairs.size(), 1u);  // 0->1 only; the 1->0 answer is the same pair
  EXPECT_EQ(pairs[0].gpu_a, "0000:00:06.0");
  EXPECT_EQ(pairs[0].gpu_b, "0000:00:07.0");
  EXPECT_EQ(pairs[0].level, "NV18");
  EXPECT_EQ(pairs[0].nvlinks, 18);
  EXPECT_EQ(pairs[0].source, "nvml");
  EXPECT_EQ(pairs[0].p2p_read, "ok");
  EXPECT_EQ(pairs[0].p2p_nvlink, "ok");
  auto topo = probe::gpu_topology(gpus, {}, pairs);
  ASSERT_EQ(topo.size(), 1u);
  EXPECT_EQ(topo[0].level, "NV18");
}

TEST(NvmlCapture, H200x2Bench_DataCounterMovedByThePayloadOfTheAllReduce) {
  auto before = two_h200(), after = two_h200();
  probe::apply_nvml_answers(probe::parse_nvml_capture(nvml_doc("nvml-h200x2-bench", "before.json")), before);
  probe::apply_nvml_answers(probe::parse_nvml_capture(nvml_doc("nvml-h200x2-bench", "after.json")), after);
  for (std::size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(before[i].nvlink_data_transmitted_bytes && after[i].nvlink_data_transmitted_bytes);
    // 54,527,679 KiB (SOURCE): 52 GiB of payload and 1.7 MiB of other traffic.
    EXPECT_EQ(*after[i].nvlink_data_transmitted_bytes - *before[i].nvlink_data_transmitted_bytes,
              54527679ull * 1024);
    EXPECT_GT(*after[i].nvlink_raw_transmitted_bytes, *after[i].nvlink_data_transmitted_bytes);
    // The capture asked the fields over all links only: no per-link bytes.
    EXPECT_FALSE(after[i].nvlinks[0].data_transmitted_bytes);
  }
}

TEST(NvmlCapture, H200x1_GpuAloneReportsNoLinks) {
  std::vector<Gpu> gpus(1);
  gpus[0].pci_address = "0000:00:06.0";
  auto pairs = probe::apply_nvml_answers(probe::parse_nvml_capture(nvml_doc("nvml-h200x1")), gpus);
  EXPECT_TRUE(gpus[0].nvlinks.empty());  // every link: NVML_ERROR_NOT_SUPPORTED
  EXPECT_EQ(gpus[0].nvlink_total, 0);
  EXPECT_FALSE(gpus[0].nvlink_data_transmitted_bytes);  // field 138 answered 3 as well
  EXPECT_TRUE(pairs.empty());
}

TEST(NvmlCapture, GpuNvmlDidNotAnswerForKeepsWhatItHad) {
  std::vector<Gpu> gpus(1);
  gpus[0].pci_address = "0000:81:00.0";
  gpus[0].nvlink_total = 4;
  probe::apply_nvml_answers(probe::parse_nvml_capture(nvml_doc("nvml-h200x2")), gpus);
  EXPECT_TRUE(gpus[0].nvlinks.empty());
  EXPECT_EQ(gpus[0].nvlink_total, 4);
}

TEST(NvmlCapture, MalformedFieldIsAnErrorNamingIt) {
  auto doc = nvml_doc("nvml-h200x2");
  doc["gpus"][1]["links"][3]["state"] = "up";
  EXPECT_NE(nvml_parse_error(doc).find("gpus[1].links[3].state"), std::string::npos) << nvml_parse_error(doc);
  doc = nvml_doc("nvml-h200x2");
  doc["gpus"][0]["links"][0]["errors"][2]["value"] = -4;
  EXPECT_NE(nvml_parse_error(doc).find("gpus[0].links[0].errors[2].value"), std::string::npos) << nvml_parse_error(doc);
  doc = nvml_doc("nvml-h200x2");
  doc["pairs"][0]["b"] = 7;
  EXPECT_NE(nvml_parse_error(doc).find("pairs[0]"), std::string::npos) << nvml_parse_error(doc);
  doc = nvml_doc("nvml-h200x2");
  doc["gpus"][0]["links"][0].erase("remote_bus_id");
  EXPECT_NE(nvml_parse_error(doc).find("gpus[0].links[0].remote_bus_id"), std::string::npos) << nvml_parse_error(doc);
  EXPECT_NE(nvml_parse_error(json::array()).find("not a JSON object"), std::string::npos);
}

TEST(NvmlCapture, CaptureWithoutNvmlGivesNoGpus) {
  json doc{{"capture", "fabscope.nvml-capture"}, {"error", "libnvidia-ml.so.1: cannot open shared object file"}};
  EXPECT_TRUE(probe::parse_nvml_capture(doc).gpus.empty());
}

TEST(NvmlBusId, NormalizedToTheSysfsSpelling) {
  EXPECT_EQ(probe::normalize_nvml_bus_id("00000000:07:00.0"), "0000:07:00.0");
  EXPECT_EQ(probe::normalize_nvml_bus_id("0000:9A:00.0"), "0000:9a:00.0");
  EXPECT_EQ(probe::normalize_nvml_bus_id("FFFFFFFF:FF:FF.0"), "");
  EXPECT_EQ(probe::normalize_nvml_bus_id("00010000:07:00.0"), "");
  EXPECT_EQ(probe::normalize_nvml_bus_id("garbage"), "");
  EXPECT_EQ(probe::normalize_nvml_bus_id(""), "");
}

TEST(GpuTopology, DirectLinksBetweenTwoGpusCountOnce) {
  auto gpus = two_h200();
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 4; ++k) {
      NvLink l;
      l.link = k;
      l.active = k != 3;  // one link down on each side
      l.remote_type = "gpu";
      l.remote_pci_address = gpus[1 - i].pci_address;
      gpus[i].nvlinks.push_back(l);
    }
  auto topo = probe::gpu_topology(gpus, {}, {});
  ASSERT_EQ(topo.size(), 1u);
  EXPECT_EQ(topo[0].level, "NV3");
  EXPECT_EQ(topo[0].nvlinks, 3);
}

TEST(GpuTopology, WithoutNvmlThePcieLevelFromSysfs) {
  std::vector<std::string> notes;
  core::Root root(fixture("h200x2-node"));
  auto pci = probe::collect_pci(root, notes);
  auto gpus = probe::collect_gpus(root, pci, notes);
  auto topo = probe::gpu_topology(gpus, pci, {});
  ASSERT_EQ(topo.size(), 1u);
  EXPECT_EQ(topo[0].source, "pci");
  EXPECT_FALSE(topo[0].nvlinks);
  // Both GPUs sit on the VM's one root complex (pci0000:00) with no bridge between.
  EXPECT_EQ(topo[0].level, "PHB");
}

TEST(NvlinkRender, TableAndMatrixFit100Columns) {
  std::vector<std::string> notes;
  core::Root root(fixture("h200x2-node"));
  NodeInfo n;
  n.pci_devices = probe::collect_pci(root, notes);
  n.gpus = probe::collect_gpus(root, n.pci_devices, notes);
  auto doc = nvml_doc("nvml-h200x2-bench", "after.json");
  doc["gpus"][1]["links"][3]["state"] = 0;  // NVML_FEATURE_DISABLED: link 3 of GPU 1 down
  auto pairs = probe::apply_nvml_answers(probe::parse_nvml_capture(doc), n.gpus);
  n.gpu_topology = probe::gpu_topology(n.gpus, n.pci_devices, pairs);
  const std::string text = probe::render_text(n, 100);
  EXPECT_NE(text.find("NVLinks (NVML"), std::string::npos) << text;
  EXPECT_NE(text.find("GPU x GPU"), std::string::npos) << text;
  EXPECT_NE(text.find("NV17"), std::string::npos) << text;  // GPU 1 has 17 switch links up
  EXPECT_NE(text.find("links down 3"), std::string::npos) << text;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    EXPECT_LE(end - start, 100u) << text.substr(start, end - start);
    start = end + 1;
  }
}
