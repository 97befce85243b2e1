// NIC interrupts and NUMA CPU lists on a real capture (tests/fixtures/virtio-2cpu-node).
#include <gtest/gtest.h>

#include "probe/irq.hpp"
#include "probe/probe.hpp"
#include "support/fixtures.hpp"

using namespace fabscope;
using namespace fabscope::probe;
using fabscope::testing::fixture;

TEST(Cpulist, RangesAndSingles) {
  EXPECT_EQ(parse_cpulist("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpulist(""), std::vector<int>{});
  EXPECT_EQ(parse_cpulist("1"), std::vector<int>{1});
}

TEST(Cpulist, GarbageIsRejected) {
  EXPECT_FALSE(parse_cpulist("3-1"));
  EXPECT_FALSE(parse_cpulist("a"));
  EXPECT_FALSE(parse_cpulist("0-99999999"));
  EXPECT_FALSE(parse_cpulist("-1"));
}

TEST(Interrupts, NumberedLinesSummedOverCpus) {
  auto text = R"(           CPU0       CPU1
 38:          0       2324 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0
NMI:          0          0   Non-maskable interrupts
)";
  auto m = parse_interrupts(text);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[38].total, 2324u);
  EXPECT_EQ(m[38].name, "virtio2-input.0");
}

TEST(NicIrqs, VirtioNicVectorsWithTheirCpus) {
  NodeInfo n = collect(core::Root(fixture("virtio-2cpu-node")), Options{false});
  ASSERT_EQ(n.numa_nodes.size(), 1u);
  EXPECT_EQ(n.numa_nodes[0].cpus, (std::vector<int>{0, 1}));
  const NicIrqs* eth0 = nullptr;
  for (const auto& x : n.nic_irqs)
    if (x.pci_address == "0000:00:03.0") eth0 = &x;
  ASSERT_NE(eth0, nullptr);
  EXPECT_EQ(eth0->netdevs, std::vector<std::string>{"eth0"});
  EXPECT_FALSE(eth0->numa_node);  // numa_node -1: the VM gives no affinity
  ASSERT_EQ(eth0->irqs.size(), 3u);
  EXPECT_EQ(eth0->irqs[0].irq, 37);
  EXPECT_EQ(eth0->irqs[0].name, "virtio2-config");
  EXPECT_EQ(eth0->irqs[1].name, "virtio2-input.0");
  EXPECT_EQ(eth0->irqs[1].affinity_source, "effective_affinity_list");
  EXPECT_EQ(eth0->irqs[1].affinity_cpus, std::vector<int>{1});
  EXPECT_EQ(eth0->irqs[2].affinity_cpus, std::vector<int>{0});
  EXPECT_GT(eth0->irqs[1].count.value_or(0), 0u);
  EXPECT_TRUE(eth0->note.empty());
}
