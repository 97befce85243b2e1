// GPUs from PCI and the driver's proc files; GPU<->NIC affinity classification.
#include <gtest/gtest.h>

#include "probe/affinity.hpp"
#include "probe/gpu.hpp"
#include "probe/pci.hpp"
#include "support/fixtures.hpp"

using namespace fabscope;
using fabscope::testing::fixture;
using fabscope::testing::TempDir;
using fabscope::testing::write_file;

namespace {
std::vector<Gpu> h200_gpus(const core::Root& root) {
  std::vector<std::string> notes;
  auto pci = probe::collect_pci(root, notes);
  return probe::collect_gpus(root, pci, notes);
}
PciDevice dev(const std::string& rc, std::vector<std::string> up, std::optional<int> numa = 0) {
  PciDevice d;
  d.root_complex = rc;
  d.upstream = std::move(up);
  d.numa_node = numa;
  return d;
}
}  // namespace

TEST(CollectGpus, FindsBothH200sInBusOrder) {
  auto gpus = h200_gpus(core::Root(fixture("h200x2-node")));
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].index, 0);
  EXPECT_EQ(gpus[0].pci_address, "0000:00:06.0");
  EXPECT_EQ(gpus[1].pci_address, "0000:00:07.0");
}

TEST(CollectGpus, NameAndUuidFromTheDriverInformationFile) {
  auto gpus = h200_gpus(core::Root(fixture("h200x2-node")));
  // As nvidia-smi printed in MACHINE.txt.
  EXPECT_EQ(gpus[0].name, "NVIDIA H200");
  EXPECT_EQ(gpus[0].uuid, "GPU-c11893f8-ac71-b872-b9e8-cf716c443c54");
  EXPECT_EQ(gpus[1].uuid, "GPU-c99f216e-66f0-69bd-9b1d-80fcfcd4197b");
  EXPECT_EQ(gpus[0].source, "driver");
  EXPECT_FALSE(gpus[0].nvlink_total);  // NVML only
}

TEST(CollectGpus, WithoutDriverFilesTheGpuIsStillListedFromPci) {
  TempDir t;
  fabscope::testing::copy_tree(fixture("h200x2-node"), t.path());
  std::filesystem::remove_all(t.path() / "proc/driver/nvidia/gpus");
  auto gpus = h200_gpus(core::Root(t.path()));
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].name, "");
  EXPECT_EQ(gpus[0].source, "pci");
}

TEST(CollectGpus, NonNvidiaDisplayIsNotAGpu) {
  PciDevice d;
  d.vendor = "0x1af4";
  d.class_code = 0x030000;
  EXPECT_FALSE(probe::is_nvidia_gpu(d));
  d.vendor = "0x10de";
  EXPECT_TRUE(probe::is_nvidia_gpu(d));
  d.class_code = 0x040300;  // NVIDIA HD audio function
  EXPECT_FALSE(probe::is_nvidia_gpu(d));
}

TEST(DriverInformation, GarbageGivesEmptyFields) {
  auto info = probe::parse_driver_gpu_information(std::string("\x01\x02\x03 no colon\n"));
  EXPECT_EQ(info.name, "");
  EXPECT_EQ(info.uuid, "");
}

TEST(Affinity, SameSwitchIsPix) {
  // Root port 15:01.0 -> switch upstream port 16:00.0 -> downstream ports 17:00.0 / 17:01.0.
  auto gpu = dev("pci0000:15", {"0000:15:01.0", "0000:16:00.0", "0000:17:00.0"});
  auto nic = dev("pci0000:15", {"0000:15:01.0", "0000:16:00.0", "0000:17:01.0"});
  EXPECT_EQ(probe::classify_affinity(gpu, nic), "PIX");
}

TEST(Affinity, NestedSwitchesArePxb) {
  auto gpu = dev("pci0000:15", {"0000:15:01.0", "0000:16:00.0", "0000:17:00.0", "0000:18:00.0", "0000:19:00.0"});
  auto nic = dev("pci0000:15", {"0000:15:01.0", "0000:16:00.0", "0000:17:01.0"});
  EXPECT_EQ(probe::classify_affinity(gpu, nic), "PXB");
}

TEST(Affinity, DifferentRootPortsOfOneHostBridgeArePhb) {
  auto gpu = dev("pci0000:00", {"0000:00:01.0"});
  auto nic = dev("pci0000:00", {"0000:00:02.0"});
  EXPECT_EQ(probe::classify_affinity(gpu, nic), "PHB");
  EXPECT_EQ(probe::classify_affinity(dev("pci0000:00", {}), dev("pci0000:00", {})), "PHB");
}

TEST(Affinity, HostBridgesOfOneNumaNodeAreNode) {
  EXPECT_EQ(probe::classify_affinity(dev("pci0000:15", {}, 0), dev("pci0000:37", {}, 0)), "NODE");
}

TEST(Affinity, DifferentNumaNodesAreSys) {
  EXPECT_EQ(probe::classify_affinity(dev("pci0000:15", {}, 0), dev("pci0000:97", {}, 1)), "SYS");
}

TEST(Affinity, UnknownNumaAcrossHostBridgesIsUnknown) {
  EXPECT_EQ(probe::classify_affinity(dev("pci0000:15", {}, std::nullopt), dev("pci0000:97", {}, 1)), "");
  EXPECT_EQ(probe::classify_affinity(dev("", {}), dev("pci0000:97", {})), "");
}

TEST(ComputeAffinity, UsesPhysicalNetdevsWhenThereIsNoRdmaDevice) {
  core::Root root(fixture("h200x2-node"));
  std::vector<std::string> notes;
  auto pci = probe::collect_pci(root, notes);
  auto gpus = probe::collect_gpus(root, pci, notes);
  std::vector<Netdev> net(2);
  net[0].name = "eth0";
  net[0].pci_address = "0000:00:03.0";
  net[1].name = "lo";
  net[1].is_virtual = true;
  auto aff = probe::compute_affinity(gpus, {}, net, pci);
  ASSERT_EQ(aff.size(), 2u);
  EXPECT_EQ(aff[0].nic, "eth0");
  EXPECT_EQ(aff[0].level, "PHB");  // both on the root bus of pci0000:00
}

TEST(ComputeAffinity, PrefersRdmaDevices) {
  std::vector<Gpu> gpus(1);
  gpus[0].pci_address = "0000:17:00.0";
  std::vector<RdmaDevice> rdma(1);
  rdma[0].name = "mlx5_0";
  rdma[0].pci_address = "0000:18:00.0";
  std::vector<Netdev> net(1);
  net[0].name = "eth0";
  net[0].pci_address = "0000:00:03.0";
  auto aff = probe::compute_affinity(gpus, rdma, net, {});
  ASSERT_EQ(aff.size(), 1u);
  EXPECT_EQ(aff[0].nic, "mlx5_0");
  EXPECT_EQ(aff[0].level, "");  // neither function is on PCI: unknown, not guessed
}
