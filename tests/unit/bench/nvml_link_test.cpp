// The bench's NVLink version comes from the probe's NVML facts, not from a second NVML session.
#include "bench/nvml_link.hpp"

#include <gtest/gtest.h>

namespace fabscope::bench {
namespace {

NodeInfo node_with_links(std::optional<int> version) {
  NodeInfo n;
  Gpu g;
  g.pci_address = "0000:9a:00.0";
  NvLink l;
  l.version_code = version;
  g.nvlinks = {l, l};
  n.gpus.push_back(g);
  return n;
}

TEST(NvmlLink, VersionOfTheGpuByItsBusIdInAnySpelling) {
  auto n = node_with_links(6);
  EXPECT_EQ(nvml_nvlink_version(n, "0000:9a:00.0"), 6u);
  EXPECT_EQ(nvml_nvlink_version(n, "00000000:9A:00.0"), 6u);  // CUDA's spelling
  EXPECT_FALSE(nvml_nvlink_version(n, "0000:9b:00.0"));
}

TEST(NvmlLink, NoLinksOrNoVersionIsUnknown) {
  EXPECT_FALSE(nvml_nvlink_version(node_with_links(std::nullopt), "0000:9a:00.0"));
  NodeInfo none;
  EXPECT_FALSE(nvml_nvlink_version(none, "0000:9a:00.0"));
}

}  // namespace
}  // namespace fabscope::bench
