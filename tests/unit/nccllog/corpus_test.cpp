// The corpus of public logs (tests/fixtures/nccl-logs/issues/EXPECTED): each verdict says what
// the thread's resolution (or the log itself) establishes, and nothing it rules out.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "nccllog/accumulate.hpp"
#include "nccllog/diagnose.hpp"
#include "support/fixtures.hpp"

using namespace fabscope::nccllog;

namespace {

std::vector<std::string> split(const std::string& s, const std::string& sep) {
  std::vector<std::string> out;
  std::size_t from = 0;
  while (true) {
    std::size_t p = s.find(sep, from);
    out.push_back(s.substr(from, p == std::string::npos ? std::string::npos : p - from));
    if (p == std::string::npos) return out;
    from = p + sep.size();
  }
}

struct Case {
  std::string path, basis;
  std::vector<std::string> must, must_not;
};

std::vector<Case> cases() {
  std::ifstream in(fabscope::testing::fixture("nccl-logs/issues/EXPECTED"));
  std::vector<Case> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto cols = split(line, "\t");
    EXPECT_EQ(cols.size(), 4u) << line;
    if (cols.size() != 4) continue;
    Case c{cols[0], cols[3], split(cols[1], ";;"), {}};
    if (cols[2] != "-") c.must_not = split(cols[2], ";;");
    out.push_back(c);
  }
  return out;
}

// One log of tests/fixtures/nccl-logs/wild, read as `fabscope log` reads it.
LogSummary wild_log(const std::string& name) {
  return summarize_files({fabscope::testing::fixture("nccl-logs/wild/" + name).string()});
}

}  // namespace

TEST(Corpus, EveryPublicLogGetsTheVerdictItsThreadEstablishes) {
  auto all = cases();
  ASSERT_GE(all.size(), 24u);
  for (const auto& c : all) {
    LogSummary s = summarize_files({fabscope::testing::fixture("nccl-logs/" + c.path).string()});
    Diagnosis d = diagnose(s);
    for (const auto& m : c.must)
      EXPECT_NE(d.verdict.find(m), std::string::npos) << c.path << ": missing \"" << m << "\" in: " << d.verdict;
    for (const auto& m : c.must_not)
      EXPECT_EQ(d.verdict.find(m), std::string::npos) << c.path << ": \"" << m << "\" in: " << d.verdict;
  }
}

TEST(Corpus, EveryLogOfTheIssuesDirectoryIsListed) {
  auto all = cases();
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(fabscope::testing::fixture("nccl-logs/issues"))) {
    if (e.path().extension() != ".log") continue;
    ++n;
    std::string rel = "issues/" + e.path().filename().string();
    EXPECT_TRUE(std::any_of(all.begin(), all.end(), [&](const Case& c) { return c.path == rel; })) << rel;
  }
  EXPECT_GE(n, 10);
}

TEST(Corpus, OomIsTheCauseAndThePeersSocketErrorsFollowFromIt) {
  // The issue's first example: the OOM is printed after the peer's errors, in another process.
  LogSummary s = summarize_files({fabscope::testing::fixture("nccl-logs/issues/nccl-1235-oom-peers-closed.log").string()});
  Diagnosis d = diagnose(s);
  ASSERT_TRUE(d.causality.first_cause.has_value());
  const Failure& f = s.failures[*d.causality.first_cause];
  EXPECT_EQ(f.id, "cuda_oom");
  EXPECT_EQ(f.pid, 3063028);
  EXPECT_EQ(f.phase, Phase::Connect);  // its traces run through transport/p2p.cc
  EXPECT_EQ(d.causality.consequences, 3);  // peer closed, recv failed, the calloc after the OOM
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings[0].id, "nccllog.first_cause");
}

TEST(Corpus, TimestampsOrderTheFailures) {
  LogSummary s =
      summarize_files({fabscope::testing::fixture("nccl-logs/issues/pytorch-ci-infra-490-shm-timestamps.log").string()});
  ASSERT_EQ(s.failures.size(), 2u);
  ASSERT_TRUE(s.failures[0].time.has_value());
  // 2026-04-22 21:34:20 UTC in seconds since 1970
  EXPECT_DOUBLE_EQ(*s.failures[0].time, 1776893660.0);
}

TEST(Corpus, P2pThatCannotBeEnabledIsANoteAboutShm) {
  LogSummary s = summarize_files({fabscope::testing::fixture("nccl-logs/issues/nccl-1516-p2p-not-enabled.log").string()});
  Diagnosis d = diagnose(s);
  auto f = std::find_if(d.findings.begin(), d.findings.end(),
                        [](const fabscope::Finding& x) { return x.id == "nccllog.p2p_not_enabled"; });
  ASSERT_NE(f, d.findings.end());
  EXPECT_EQ(f->severity, fabscope::Severity::Info);
  EXPECT_NE(f->evidence.find("4x"), std::string::npos) << f->evidence;
  EXPECT_TRUE(s.failures.empty());
}

TEST(Corpus, CollnetFallbackIsANoteNotAFailedJob) {
  LogSummary s =
      summarize_files({fabscope::testing::fixture("nccl-logs/issues/nccl-1050-collnet-sharp-fallback.log").string()});
  Diagnosis d = diagnose(s);
  EXPECT_TRUE(s.failures.empty());
  EXPECT_LE(fabscope::exit_code_for(d.findings), 1);
  EXPECT_TRUE(std::none_of(d.findings.begin(), d.findings.end(),
                           [](const fabscope::Finding& x) { return x.id == "nccllog.nccl_call_failed"; }));
  auto f = std::find_if(d.findings.begin(), d.findings.end(),
                        [](const fabscope::Finding& x) { return x.id == "nccllog.collnet_fallback"; });
  ASSERT_NE(f, d.findings.end());
  EXPECT_EQ(f->severity, fabscope::Severity::Info);
}

TEST(Corpus, NvlsCudaFailureIsTheFabricManagersFirstCause) {
  // nccl#1488: the Cuda failure from transport/nvls.cc is the cause; its traces place it in connect.
  LogSummary s =
      summarize_files({fabscope::testing::fixture("nccl-logs/issues/nccl-1488-nvls-fabric-manager.log").string()});
  Diagnosis d = diagnose(s);
  ASSERT_TRUE(d.causality.first_cause.has_value());
  EXPECT_EQ(s.failures[*d.causality.first_cause].id, "cuda_failure");
  EXPECT_EQ(s.failures[*d.causality.first_cause].phase, Phase::Connect);
  ASSERT_FALSE(d.causality.rules_applied.empty());
  EXPECT_EQ(d.causality.rules_applied[0], "nvls_fabric");
}

TEST(Corpus, EveryWildLogIsReadAndJudged) {
  // Public logs gathered after the analyser was written (tests/fixtures/nccl-logs/wild/SOURCE);
  // the ones it judges right are in EXPECTED, every one must at least be read and judged.
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(fabscope::testing::fixture("nccl-logs/wild"))) {
    if (e.path().extension() != ".log") continue;
    ++n;
    LogSummary s = summarize_files({e.path().string()});
    Diagnosis d = diagnose(s);
    EXPECT_FALSE(d.verdict.empty()) << e.path();
  }
  EXPECT_GE(n, 20);
}

TEST(Corpus, ThePhaseComesFromTheSourceFileNotFromMissingLines) {
  // One WARN line and nothing else: misc/cudawrap.cc is device initialisation, not bootstrap.
  LogSummary s = wild_log("cuml-5961-driver-insufficient.log");
  ASSERT_EQ(s.failures.size(), 1u);
  EXPECT_EQ(s.failures[0].phase, Phase::Topology);
  // A WARN whose source and process say nothing of the phase: unknown, and no phase remedy.
  LogSummary u = summarize_text("h:1:1 [0] NCCL WARN Net : Call to recv from 10.0.0.1<1> failed : Connection timed out\n");
  ASSERT_EQ(u.failures.size(), 1u);
  EXPECT_EQ(u.failures[0].phase, Phase::Unknown);
  Diagnosis d = diagnose(u);
  EXPECT_NE(d.verdict.find("does not show in which phase"), std::string::npos) << d.verdict;
  EXPECT_EQ(d.verdict.find("bootstrap"), std::string::npos) << d.verdict;
  // The same WARN after an INFO line of its process is in bootstrap at least.
  LogSummary b = summarize_text(
      "h:1:1 [0] NCCL INFO Bootstrap: Using eth0:10.0.0.2<0>\n"
      "h:1:1 [0] NCCL WARN Net : Call to recv from 10.0.0.1<1> failed : Connection timed out\n");
  ASSERT_EQ(b.failures.size(), 1u);
  EXPECT_EQ(b.failures[0].phase, Phase::Bootstrap);
}

TEST(Corpus, AWarnOutsideTheCatalogFollowedByAnErrorTraceIsTheCause) {
  LogSummary s = wild_log("sglang-3820-no-route-bootstrap.log");
  Diagnosis d = diagnose(s);
  ASSERT_TRUE(d.causality.first_cause.has_value());
  const Failure& f = s.failures[*d.causality.first_cause];
  EXPECT_EQ(f.id, "unknown_warning");
  EXPECT_EQ(f.severity, fabscope::Severity::Fail);
  EXPECT_EQ(f.phase, Phase::Bootstrap);
  EXPECT_EQ(f.source, "misc/socket.cc:533");
  EXPECT_EQ(d.verdict.find("no WARN naming the cause"), std::string::npos) << d.verdict;
  // Without the trace the same WARN stays a warning: NCCL did not say the call failed.
  LogSummary w = summarize_text(
      "node5:240:240 [6] misc/socket.cc:533 NCCL WARN socketPollConnect: Connect to 10.0.0.4<56849> returned "
      "113(No route to host) errno 115(Operation now in progress)\n");
  ASSERT_EQ(w.failures.size(), 1u);
  EXPECT_EQ(w.failures[0].severity, fabscope::Severity::Warn);
}

TEST(Corpus, TheLastErrorAFrameworkQuotesIsTheCauseBehindLauncherPrefixes) {
  // PyTorch's ncclInternalError names NCCL's last WARN on the line after "Last error:"; the
  // launcher's prefix is on both lines (nccl#1837: "[trainer0|0]:").
  LogSummary s = summarize_text(
      "[trainer0|0]:host:7:7 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth9\n"
      "[trainer0|0]:RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1201, internal error, NCCL version 2.14.3\n"
      "[trainer0|0]:ncclInternalError: Internal check failed.\n"
      "[trainer0|0]:Last error:\n"
      "[trainer0|0]:Bootstrap : no socket interface found\n");
  Diagnosis d = diagnose(s);
  ASSERT_TRUE(d.causality.first_cause.has_value());
  const Failure& f = s.failures[*d.causality.first_cause];
  EXPECT_EQ(f.id, "socket_no_interface");
  EXPECT_EQ(f.line, "Bootstrap : no socket interface found");
  EXPECT_EQ(f.phase, Phase::Bootstrap);
  EXPECT_FALSE(d.causality.only_consequences);
  EXPECT_NE(d.verdict.find("NCCL_SOCKET_IFNAME=eth9"), std::string::npos) << d.verdict;
  // A "Last error:" text outside the catalog is a failure too, kept as NCCL printed it.
  LogSummary u = summarize_text("x [stderr] Last error:\nx [stderr] Something NCCL never said before\n");
  ASSERT_EQ(u.failures.size(), 1u);
  EXPECT_EQ(u.failures[0].id, "unknown_warning");
  EXPECT_EQ(u.failures[0].severity, fabscope::Severity::Fail);
  EXPECT_EQ(u.failures[0].line, "Something NCCL never said before");
}

TEST(Corpus, AWatchdogTimeoutWithNoNcclErrorBeforeItIsAHang) {
  // nccl#1610: the watchdog fires on two ranks, then the abort's socket traces: the timeout is the
  // first cause (a hang), not a consequence of what NCCL printed after it.
  LogSummary s = wild_log("nccl-1610-two-threads-watchdog.log");
  Diagnosis d = diagnose(s);
  ASSERT_TRUE(d.causality.first_cause.has_value());
  const Failure& f = s.failures[*d.causality.first_cause];
  EXPECT_EQ(f.id, "collective_timeout");
  EXPECT_EQ(f.rank, 13);
  EXPECT_TRUE(d.causality.hang);
  EXPECT_FALSE(d.causality.only_consequences);
  EXPECT_NE(d.verdict.find("ALLTOALL_BASE, SeqNum 216, 1379328 elements"), std::string::npos) << d.verdict;
  // The ranks disagree on the collective: the verdict says which waits in which.
  LogSummary a = summarize_text(
      "[E ProcessGroupNCCL.cpp:566] [Rank 0] Watchdog caught collective operation timeout: "
      "WorkNCCL(OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1801060 milliseconds before timing out.\n"
      "[E ProcessGroupNCCL.cpp:566] [Rank 1] Watchdog caught collective operation timeout: "
      "WorkNCCL(OpType=BROADCAST, Timeout(ms)=1800000) ran for 1801140 milliseconds before timing out.\n");
  Diagnosis da = diagnose(a);
  EXPECT_NE(da.verdict.find("different collectives: ALLREDUCE on rank 0; BROADCAST on rank 1"), std::string::npos)
      << da.verdict;
  // A NCCL error before the timeout stays the cause; the timeout follows from it.
  LogSummary b = summarize_text(
      "h:1:1 [0] transport/net_ib.cc:1 NCCL WARN NET/IB : Got completion from peer 10.0.0.1<1> with status=12 opcode=0\n"
      "[E ProcessGroupNCCL.cpp:566] [Rank 0] Watchdog caught collective operation timeout: "
      "WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=8) ran for 1801060 milliseconds before timing out.\n");
  Diagnosis db = diagnose(b);
  ASSERT_TRUE(db.causality.first_cause.has_value());
  EXPECT_EQ(b.failures[*db.causality.first_cause].id, "ib_wc_retry_exceeded");
  EXPECT_FALSE(db.causality.hang);
}

TEST(Corpus, AnExcerptWithoutChannelLinesSaysWhatItsInfoLinesDecided) {
  // nccl#941: a container without /dev/infiniband: no failure, NET/IB finds no device, sockets.
  LogSummary s = wild_log("nccl-941-container-no-ib-device.log");
  Diagnosis d = diagnose(s);
  EXPECT_EQ(d.verdict.find("no transport lines"), std::string::npos) << d.verdict;
  EXPECT_NE(d.verdict.find("NET/IB found no RDMA device on 05-06-76-200"), std::string::npos) << d.verdict;
  auto f = std::find_if(d.findings.begin(), d.findings.end(),
                        [](const fabscope::Finding& x) { return x.id == "nccllog.ib_no_device"; });
  ASSERT_NE(f, d.findings.end());
  EXPECT_EQ(f->severity, fabscope::Severity::Warn);
  // With channel lines on sockets the counted finding says it instead; the excerpt one stays out.
  Diagnosis c = diagnose(summarize_text(
      "h:1:1 [0] NCCL INFO NET/IB : No device found.\n"
      "h:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
      "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0\n"
      "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0\n"));
  EXPECT_TRUE(std::none_of(c.findings.begin(), c.findings.end(),
                           [](const fabscope::Finding& x) { return x.id == "nccllog.ib_no_device"; }));
  EXPECT_TRUE(std::any_of(c.findings.begin(), c.findings.end(),
                          [](const fabscope::Finding& x) { return x.id == "nccllog.net_socket_no_rdma"; }));
}
