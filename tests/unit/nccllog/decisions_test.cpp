// The decisions NCCL states in INFO lines (GPUDirect RDMA, NVLS, what a network plugin turned off
// or set, switches set by environment), the lines without a host:pid prefix, and the error text a
// framework prints after the result's name: parsed, kept per process, and used by the verdict and
// the findings.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "nccllog/accumulate.hpp"
#include "nccllog/diagnose.hpp"
#include "nccllog/parser.hpp"

using namespace fabscope::nccllog;
using fabscope::Finding;
using fabscope::Severity;

namespace {

// The event's views point into the line: it is kept until the next call.
Event decision_event_of(const std::string& raw) {
  static std::string kept;
  kept = raw;
  Line l;
  EXPECT_TRUE(parse_line(kept, l)) << raw;
  return classify(l);
}

const Finding* decision_finding(const Diagnosis& d, const std::string& id) {
  for (const auto& f : d.findings)
    if (f.id == id) return &f;
  return nullptr;
}

}  // namespace

TEST(Decisions, EveryGdrFormatGivesFeatureStateWhereAndWhy) {
  struct Case {
    std::string line;
    bool on;
    std::string where, why;
  };
  const std::vector<Case> cases = {
      {"h:1:2 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0' (no module)", false, "HCA 0 'mlx5_0'",
       "no module"},
      {"h:1:2 [0] NCCL INFO NET/IB : GPU Direct RDMA (DMABUF) enabled for HCA 0 'rocep1s0f0'", true,
       "HCA 0 'rocep1s0f0'", ""},
      {"h:1:2 [0] NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 3 'mlx5_3'", true, "HCA 3 'mlx5_3'", ""},
      {"h:1:2 [0] NCCL INFO GPU Direct RDMA Disabled for GPU 0 / HCA 0 (distance 8 > 5)", false, "GPU 0 / HCA 0",
       "distance 8 > 5"},
      {"h:1:2 [3] NCCL INFO GPU Direct RDMA Enabled for GPU 3 / HCA 3 (distance 4 <= 5), read 1 mode Default", true,
       "GPU 3 / HCA 3", "distance 4 <= 5"},
      {"h:1:2 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for GPU 1b000 / HCA 1 (distance 6 >= 5)", false,
       "GPU 1b000 / HCA 1", "distance 6 >= 5"},
  };
  for (const auto& c : cases) {
    Event e = decision_event_of(c.line);
    ASSERT_EQ(e.kind, EventKind::Decision) << c.line;
    EXPECT_EQ(e.name, "GDR") << c.line;
    EXPECT_EQ(e.number, c.on ? 1 : 0) << c.line;
    EXPECT_EQ(e.value, c.where) << c.line;
    EXPECT_EQ(e.detail, c.why) << c.line;
  }
}

TEST(Decisions, PluginRingNvlsAndDmaBufLines) {
  Event e = decision_event_of("h:1:2 [0] NCCL INFO NET/OFI Could not disable CUDA API usage for HMEM, disabling GDR");
  ASSERT_EQ(e.kind, EventKind::Decision);
  EXPECT_EQ(e.name, "GDR");
  EXPECT_EQ(e.number, 0);
  EXPECT_EQ(e.value, "NET/OFI");
  EXPECT_EQ(e.detail, "Could not disable CUDA API usage for HMEM");

  e = decision_event_of("h:1:2 [0] NCCL INFO NET/OFI Setting NCCL_PROTO to \"simple\"");
  ASSERT_EQ(e.kind, EventKind::Decision);
  EXPECT_EQ(e.name, "NCCL_PROTO");
  EXPECT_EQ(e.detail, "simple");
  EXPECT_EQ(e.value, "NET/OFI");

  e = decision_event_of("h:1:2 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 1");
  ASSERT_EQ(e.kind, EventKind::Decision);
  EXPECT_EQ(e.name, "GDR");
  EXPECT_EQ(e.number, 1);
  EXPECT_EQ(e.value, "rings");

  e = decision_event_of("h:1:2 [0] NCCL INFO 16 coll channels, 16 collnet channels, 0 nvls channels, 32 p2p channels, 2 p2p "
               "channels per peer");
  ASSERT_EQ(e.kind, EventKind::Decision);
  EXPECT_EQ(e.name, "NVLS");
  EXPECT_EQ(e.number, 0);
  EXPECT_EQ(e.detail, "0 nvls channels");
  e = decision_event_of("h:1:2 [0] NCCL INFO 24 coll channels, 16 nvls channels, 32 p2p channels, 32 p2p channels per peer");
  EXPECT_EQ(e.number, 1);
  EXPECT_EQ(e.detail, "16 nvls channels");

  e = decision_event_of("h:1:2 [0] NCCL INFO NVLS multicast support is not available on dev 0");
  ASSERT_EQ(e.kind, EventKind::Decision);
  EXPECT_EQ(e.name, "NVLS");
  EXPECT_EQ(e.number, 0);
  EXPECT_EQ(e.value, "dev 0");

  e = decision_event_of("h:1:2 [0] NCCL INFO DMA-BUF is available on GPU device 0");
  ASSERT_EQ(e.kind, EventKind::Decision);
  EXPECT_EQ(e.name, "DMA-BUF");

  // Near misses stay what they were.
  EXPECT_EQ(decision_event_of("h:1:2 [0] NCCL INFO GPU Direct RDMA maybe").kind, EventKind::None);
  EXPECT_EQ(decision_event_of("h:1:2 [0] NCCL INFO Connected all rings").kind, EventKind::None);
}

TEST(Decisions, KeptPerProcessCountedOnceWithThePluginAsWhere) {
  LogSummary s = summarize_text(
      "a:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0' (no module)\n"
      "a:1:1 [1] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0' (no module)\n"
      "a:1:1 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1\n"
      "a:1:1 [0] NCCL INFO NCCL_NVLS_ENABLE set by environment to 0.\n"
      "a:1:1 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 0.\n");
  ASSERT_EQ(s.processes.size(), 1u);
  const auto& ds = s.processes[0].decisions;
  ASSERT_EQ(ds.size(), 3u);
  EXPECT_EQ(ds[0].feature, "GDR");
  EXPECT_FALSE(ds[0].enabled);
  EXPECT_EQ(ds[0].scope, "NET/IB HCA 0 'mlx5_0'");
  EXPECT_EQ(ds[0].reason, "no module");
  EXPECT_EQ(ds[0].count, 2);
  EXPECT_EQ(ds[1].feature, "P2P");
  EXPECT_EQ(ds[1].reason, "NCCL_P2P_DISABLE=1 set by environment");
  EXPECT_EQ(ds[2].feature, "NVLS");
  EXPECT_FALSE(ds[2].enabled);  // NCCL_IB_DISABLE=0 turns nothing off: no decision
  EXPECT_FALSE(s.unprefixed);
}

TEST(Decisions, LinesWithoutHostPrefixKeepTheirFactsApart) {
  LogSummary s = summarize_text(
      "NCCL INFO NCCL_IB_DISABLE set by environment to 0.\n"
      "misc/ibvwrap.cc:212 NCCL WARN Call to ibv_open_device failed\n"
      "transport/net_ib.cc:148 NCCL WARN NET/IB : Unable to open device mlx5_bond_0\n"
      "NCCL INFO NET/IB : No device found.\n"
      "NCCL INFO NET/Socket : Using [0]bond0:200.1.93.2<0>\n"
      "NCCL INFO Using network Socket\n");
  EXPECT_TRUE(s.processes.empty());
  ASSERT_TRUE(s.unprefixed);
  EXPECT_TRUE(s.unprefixed->ib_no_device);
  EXPECT_EQ(s.unprefixed->network, "Socket");
  EXPECT_EQ(s.unprefixed->env.at("NCCL_IB_DISABLE"), "0");
  Diagnosis d = diagnose(s);
  EXPECT_EQ(d.verdict.find("NCCL failed"), std::string::npos) << d.verdict;
  EXPECT_NE(d.verdict.find("mlx5_bond_0 could not be opened"), std::string::npos) << d.verdict;
  EXPECT_NE(d.verdict.find("Socket (TCP) over bond0"), std::string::npos) << d.verdict;
  EXPECT_NE(d.verdict.find("IB was not disabled"), std::string::npos) << d.verdict;
  const Finding* f = decision_finding(d, "nccllog.ib_no_device");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->subject, "log");
  EXPECT_NE(decision_finding(d, "nccllog.ib_open_device_failed"), nullptr);
}

TEST(Decisions, GdrOffIsAWarningNamingHostsAndTheReasonsRemedy) {
  Diagnosis d = diagnose(summarize_text(
      "a:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.1<0>\n"
      "a:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0' (no module)\n"
      "b:2:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.2<0>\n"
      "b:2:2 [0] NCCL INFO GPU Direct RDMA Disabled for GPU 0 / HCA 0 (distance 8 > 5)\n"));
  const Finding* f = decision_finding(d, "nccllog.gdr_disabled");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::Warn);
  EXPECT_EQ(f->subject, "a, b");
  EXPECT_NE(f->evidence.find("GDR off (NET/IB HCA 0 'mlx5_0': no module)"), std::string::npos) << f->evidence;
  EXPECT_NE(f->evidence.find("distance 8 > 5"), std::string::npos) << f->evidence;
  EXPECT_NE(f->remedy.find("nvidia_peermem"), std::string::npos);
  EXPECT_NE(f->remedy.find("NCCL_NET_GDR_LEVEL"), std::string::npos);
}

TEST(Decisions, SocketsAndRingsWithoutRdmaAreNoGdrFinding) {
  Diagnosis d = diagnose(summarize_text(
      "vm:1:1 [0] NCCL INFO NET/Socket : GPU Direct RDMA Disabled for HCA 0 'eth0'\n"
      "vm:1:1 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 0\n"));
  EXPECT_EQ(decision_finding(d, "nccllog.gdr_disabled"), nullptr);
}

TEST(FrameworkText, TheLineAfterTheResultNameIsReadWhenTheCatalogKnowsIt) {
  LogSummary s = summarize_text(
      "torch.distributed.DistBackendError: NCCL error in: NCCLUtils.cpp:93, unhandled cuda error, NCCL version 2.29.7\n"
      "ncclUnhandledCudaError: Call to CUDA function failed.\n"
      "Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 2 'out of memory'.\n");
  Diagnosis d = diagnose(s);
  EXPECT_NE(d.verdict.find("NVLink SHARP (NVLS) multicast memory could not be bound"), std::string::npos)
      << d.verdict;
  EXPECT_NE(d.verdict.find("not GPU memory"), std::string::npos) << d.verdict;
  EXPECT_EQ(d.verdict.find("CUDA out of memory"), std::string::npos) << d.verdict;
  EXPECT_NE(d.verdict.find("transport connect"), std::string::npos) << d.verdict;
}

TEST(FrameworkText, AnUnknownLineAfterTheResultNameIsNoFailureAndLastErrorStillWorks) {
  LogSummary s = summarize_text(
      "[rank0]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed.\n"
      "[rank0]: Exception raised from getNCCLComm at ProcessGroupNCCL.cpp:1234 (most recent call first):\n");
  EXPECT_TRUE(s.failures.empty());
  s = summarize_text(
      "[rank0]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed.\n"
      "[rank0]: Last error:\n"
      "[rank0]: Bootstrap : no socket interface found\n");
  ASSERT_EQ(s.failures.size(), 1u);
  EXPECT_EQ(s.failures[0].severity, Severity::Fail);
  EXPECT_EQ(s.failures[0].id, "socket_no_interface");
}
