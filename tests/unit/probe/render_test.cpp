// Human output of `fabscope probe`.
#include "probe/render.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "probe/lldp.hpp"
#include "probe/probe.hpp"
#include "support/fixtures.hpp"

using namespace fabscope;
using fabscope::testing::fixture;

namespace {
std::size_t widest_line(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::size_t w = 0;
  while (std::getline(in, line)) w = std::max(w, line.size());
  return w;
}
NodeInfo procfs_node() {
  fabscope::testing::TempDir t;
  fabscope::testing::unpack_ttar(fixture("procfs-infiniband/sys-class-infiniband-and-net.ttar"), t.path());
  return probe::collect(core::Root(t.path()), probe::Options{false});
}
}  // namespace

TEST(Render, SaysPlainlyWhenThereAreNoRdmaDevices) {
  auto text = probe::render_text(probe::collect(core::Root(fixture("h200x2-node")), probe::Options{false}));
  EXPECT_NE(text.find("no RDMA devices found"), std::string::npos);
}

TEST(Render, H200NodeFitsIn100Columns) {
  auto text = probe::render_text(probe::collect(core::Root(fixture("h200x2-node")), probe::Options{false}));
  EXPECT_LE(widest_line(text), 100u) << text;
}

TEST(Render, PortTableHasOneRowPerPort) {
  auto text = probe::render_text(procfs_node());
  std::istringstream in(text);
  std::string line;
  int mlx4_rows = 0;
  while (std::getline(in, line)) mlx4_rows += line.rfind("mlx4_0 ", 0) == 0;
  EXPECT_EQ(mlx4_rows, 2) << text;
  EXPECT_NE(text.find("100 Gb/s"), std::string::npos) << text;
  EXPECT_LE(widest_line(text), 100u) << text;
}

TEST(Render, AffinityMatrixShowsTheLevel) {
  auto text = probe::render_text(probe::collect(core::Root(fixture("h200x2-node")), probe::Options{false}));
  EXPECT_NE(text.find("GPU x NIC affinity"), std::string::npos);
  EXPECT_NE(text.find("0000:00:06.0  PHB"), std::string::npos) << text;
}

TEST(Render, WideMatrixIsSplitToFit) {
  NodeInfo info;
  info.gpus.resize(8);
  for (int g = 0; g < 8; ++g) {
    info.gpus[g].index = g;
    info.gpus[g].pci_address = "0000:" + std::to_string(10 + g) + ":00.0";
    for (int n = 0; n < 16; ++n)
      info.gpu_nic_affinity.push_back({info.gpus[g].pci_address, "mlx5_" + std::to_string(n), n == g ? "PIX" : "SYS"});
  }
  auto text = probe::render_text(info);
  EXPECT_LE(widest_line(text), 100u) << text;
  EXPECT_NE(text.find("mlx5_15"), std::string::npos) << text;
}

TEST(Render, NotesAreListed) {
  NodeInfo info;
  info.probe_notes.push_back("sys/class/infiniband/mlx5_0/ports/1/rate: not a rate: 'x'");
  auto text = probe::render_text(info);
  EXPECT_NE(text.find("mlx5_0/ports/1/rate: not a rate"), std::string::npos);
}

TEST(Render, LldpNeighboursOfARealCaptureFit100Columns) {
  NodeInfo info;
  info.root = "/";
  for (const char* name : {"ens1f0", "ens1f1", "ens1f2"}) {
    Netdev d;
    d.name = name;
    d.mtu = 9000;
    info.netdevs.push_back(d);
  }
  std::ifstream in(fixture("lldpcli") / "lldpd-1.0.16-three-neighbors.json");
  std::stringstream ss;
  ss << in.rdbuf();
  probe::ToolResult r;
  r.status = probe::ToolResult::Status::Ran;
  r.exit_code = 0;
  r.out = ss.str();
  info.lldp = probe::apply_lldpcli_result(r, info.netdevs, info.probe_notes);
  auto text = probe::render_text(info);
  EXPECT_LE(widest_line(text), 100u) << text;
  EXPECT_NE(text.find("LLDP neighbours (switch ports)"), std::string::npos) << text;
  EXPECT_NE(text.find("leaf-a.pod1"), std::string::npos) << text;
  EXPECT_NE(text.find("100u,200"), std::string::npos) << text;  // PVID marked
  EXPECT_NE(text.find("c6:56:da:38:cf:ce"), std::string::npos) << text;  // no system name: the chassis id
}

TEST(Render, LldpUnknownOnALiveNodeSaysWhy) {
  NodeInfo info;
  info.root = "/";
  info.lldp.note = "lldpcli not found (lldpd not installed): LLDP neighbours unknown";
  auto text = probe::render_text(info);
  EXPECT_NE(text.find("unknown: lldpcli not found"), std::string::npos) << text;
  info.root = "/tmp/capture";
  EXPECT_EQ(probe::render_text(info).find("LLDP"), std::string::npos);
}

// The TYPE column names the link type (if_arp.h), never the kernel's bare number.
TEST(Render, NetdevTypeIsNamed) {
  NodeInfo info;
  info.netdevs.resize(3);
  info.netdevs[0].name = "lo";
  info.netdevs[0].type = 772;
  info.netdevs[1].name = "eth0";
  info.netdevs[1].type = 1;
  info.netdevs[2].name = "odd0";
  info.netdevs[2].type = 4242;
  auto text = probe::render_text(info);
  EXPECT_NE(text.find("loopback"), std::string::npos) << text;
  EXPECT_NE(text.find("ether"), std::string::npos) << text;
  EXPECT_NE(text.find("arphrd 4242"), std::string::npos) << text;
  EXPECT_EQ(text.find(" 772 "), std::string::npos) << text;
}

// Unreadable /proc/modules: the modules are unknown, not "none of them".
TEST(Render, UnreadableModulesAreUnknownNotNone) {
  NodeInfo info;
  EXPECT_NE(probe::render_text(info).find("(none of the RDMA/GPU modules)"), std::string::npos);
  info.probe_notes.push_back("proc/modules: unreadable, loaded modules unknown");
  auto text = probe::render_text(info);
  EXPECT_EQ(text.find("none of the RDMA/GPU modules"), std::string::npos) << text;
  EXPECT_NE(text.find("modules unknown (proc/modules unreadable)"), std::string::npos) << text;
}
