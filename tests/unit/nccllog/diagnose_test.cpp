// Behaviours of the diagnosis on small inputs derived from the real fixtures (one line changed
// or one line added, as noted per test).
#include "nccllog/diagnose.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "nccllog/accumulate.hpp"

using namespace fabscope::nccllog;
using fabscope::Severity;

namespace {
bool has(const Diagnosis& d, const std::string& id) {
  return std::any_of(d.findings.begin(), d.findings.end(), [&](const auto& f) { return f.id == id; });
}
// From h200x2/socket-p2p-shm-disabled.log, rank 0's lines.
const char* kSocketRank0 =
    "vm:767:767 [0] NCCL INFO NCCL version 2.28.9+cuda13.0\n"
    "vm:767:767 [0] NCCL INFO ncclCommInitRankConfig comm 0xd60a470 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 60 "
    "commId 0x6b36aa821378b89a - Init START\n"
    "vm:767:767 [0] NCCL INFO comm 0xd60a470 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0\n"
    "vm:767:767 [0] NCCL INFO Channel 00/0 : 1[1] -> 0[0] [receive] via NET/Socket/0\n";
}  // namespace

TEST(Diagnose, SocketWhileIbListedDevicesIsAFailure) {
  // Derived: the real "NET/IB : Using [RO]" line with a device added, as RDMA nodes print it.
  std::string text = std::string("vm:767:767 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [RO]; OOB eth0:192.0.2.2<0>\n") +
                     kSocketRank0;
  Diagnosis d = diagnose(summarize_text(text));
  EXPECT_TRUE(has(d, "nccllog.net_socket_with_rdma_nics"));
  EXPECT_EQ(fabscope::exit_code_for(d.findings), 2);
}

TEST(Diagnose, RankWithoutInitCompleteIsAFailure) {
  Diagnosis d = diagnose(summarize_text(kSocketRank0));
  EXPECT_TRUE(has(d, "nccllog.init_incomplete"));
  EXPECT_NE(d.verdict.find("Init COMPLETE on 0/1 ranks"), std::string::npos) << d.verdict;
}

TEST(Diagnose, DifferentVersionsAcrossProcessesAreAMismatch) {
  // Derived: a second process line with the version changed.
  Diagnosis d = diagnose(summarize_text("a:1:1 [0] NCCL INFO NCCL version 2.28.9+cuda13.0\n"
                                        "b:2:2 [0] NCCL INFO NCCL version 2.27.3+cuda12.9\n"));
  EXPECT_TRUE(has(d, "nccllog.version_mismatch"));
}

TEST(Diagnose, TheHostRunningTheOddVersionIsNamed) {
  Diagnosis d = diagnose(summarize_text("a:1:1 [0] NCCL INFO NCCL version 2.28.9+cuda13.0\n"
                                        "b:2:2 [0] NCCL INFO NCCL version 2.28.9+cuda13.0\n"
                                        "c:3:3 [0] NCCL INFO NCCL version 2.27.3+cuda12.9\n"));
  auto f = std::find_if(d.findings.begin(), d.findings.end(),
                        [](const fabscope::Finding& x) { return x.id == "nccllog.version_mismatch"; });
  ASSERT_NE(f, d.findings.end());
  EXPECT_EQ(f->subject, "c");
  EXPECT_NE(f->message.find("c differs from the 2.28.9+cuda13.0 the other processes run"), std::string::npos)
      << f->message;
  EXPECT_NE(f->evidence.find("2.27.3+cuda12.9 on c (1 process)"), std::string::npos) << f->evidence;
  // One process each: no side is the odd one.
  Diagnosis tie = diagnose(summarize_text("a:1:1 [0] NCCL INFO NCCL version 2.28.9+cuda13.0\n"
                                          "b:2:2 [0] NCCL INFO NCCL version 2.27.3+cuda12.9\n"));
  auto g = std::find_if(tie.findings.begin(), tie.findings.end(),
                        [](const fabscope::Finding& x) { return x.id == "nccllog.version_mismatch"; });
  ASSERT_NE(g, tie.findings.end());
  EXPECT_EQ(g->subject, "job");
}

TEST(Diagnose, EmptyInputHasNoNcclLines) {
  Diagnosis d = diagnose(summarize_text(""));
  EXPECT_TRUE(has(d, "nccllog.no_nccl_lines"));
  EXPECT_EQ(fabscope::exit_code_for(d.findings), 1);
}

TEST(Diagnose, FindingsAreSortedMostSevereFirst) {
  Diagnosis d = diagnose(summarize_text(std::string(kSocketRank0) +
                                        "vm:767:767 [0] x.cc:1 NCCL WARN something unknown\n"));
  ASSERT_GE(d.findings.size(), 2u);
  for (std::size_t i = 1; i < d.findings.size(); ++i)
    EXPECT_GE(d.findings[i - 1].severity, d.findings[i].severity);
}

TEST(Diagnose, FindingsLinkToTheirDocsAnchor) {
  Diagnosis d = diagnose(summarize_text(""));
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings[0].docs, "docs/nccllog.md#nccllog-no_nccl_lines");
}

TEST(NormalizeTransport, DropsDeviceIndexAndKeepsGdr) {
  EXPECT_EQ(normalize_transport("NET/IB/0(1)/GDRDMA/Shared"), "NET/IB/GDRDMA");
  EXPECT_EQ(normalize_transport("NET/Socket/0"), "NET/Socket");
  EXPECT_EQ(normalize_transport("P2P/indirect/3[3]/read"), "P2P/indirect/read");
  EXPECT_EQ(normalize_transport("SHM/direct/direct"), "SHM/direct/direct");
}

TEST(Accumulator, MemoryStaysBoundedWithManyDistinctProcesses) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "h:" + std::to_string(i) + ":1 [0] NCCL INFO cudaDriverVersion 13000\n";
  LogSummary s = summarize_text(text);
  EXPECT_EQ(s.processes.size(), kMaxProcesses);
  EXPECT_EQ(s.dropped_entities, 20000 - static_cast<long>(kMaxProcesses));
}
