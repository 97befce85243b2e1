// Verdicts and counts on every real log fixture (tests/fixtures/nccl-logs, see SOURCE files).
// Connection counts are checked against an independent count made here with std::regex.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "nccllog/accumulate.hpp"
#include "nccllog/diagnose.hpp"
#include "support/fixtures.hpp"

using namespace fabscope::nccllog;
using fabscope::Severity;
namespace fs = std::filesystem;

namespace {

fs::path log_path(const std::string& rel) { return fabscope::testing::fixture("nccl-logs/" + rel); }

LogSummary summarize(const std::vector<std::string>& rels) {
  Accumulator acc;
  for (const auto& rel : rels) {
    std::FILE* f = std::fopen(log_path(rel).c_str(), "rb");
    EXPECT_NE(f, nullptr) << rel;
    if (!f) continue;
    accumulate_stream(acc, f, rel);
    std::fclose(f);
  }
  return acc.finish();
}

struct Oracle {
  long net = 0, gdr = 0, socket = 0, local = 0;
};

Oracle count_with_regex(const std::string& rel) {
  static const std::regex re(R"((Channel|Ring) \d+(/\d+)? : \d+\[[^\]]*\] -> \d+\[[^\]]*\].* via (\S+))");
  Oracle o;
  std::ifstream in(log_path(rel));
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (!std::regex_search(line, m, re)) continue;
    std::string via = m[3];
    if (via.rfind("NET/", 0) == 0) {
      ++o.net;
      if (via.find("/GDRDMA") != std::string::npos) ++o.gdr;
      if (via.rfind("NET/Socket", 0) == 0) ++o.socket;
    } else {
      ++o.local;
    }
  }
  return o;
}

bool has_finding(const Diagnosis& d, const std::string& id, Severity sev) {
  return std::any_of(d.findings.begin(), d.findings.end(),
                     [&](const fabscope::Finding& f) { return f.id == id && f.severity == sev; });
}

void expect_counts_match_oracle(const std::string& rel) {
  LogSummary s = summarize({rel});
  Totals t = totals(s);
  Oracle o = count_with_regex(rel);
  EXPECT_EQ(t.net, o.net) << rel;
  EXPECT_EQ(t.gdr, o.gdr) << rel;
  EXPECT_EQ(t.socket, o.socket) << rel;
  EXPECT_EQ(t.local, o.local) << rel;
}

}  // namespace

TEST(Fixtures, ConnectionCountsMatchAnIndependentCountOnEveryLog) {
  int n = 0;
  for (const auto& dir : {"h200x2", "h200x2/per-rank", "public"})
    for (const auto& e : fs::directory_iterator(log_path(dir)))
      if (e.path().extension() == ".log") {
        expect_counts_match_oracle(std::string(dir) + "/" + e.path().filename().string());
        ++n;
      }
  EXPECT_GE(n, 20);
}

TEST(Fixtures, NvlinkDefaultIsIntraNodeP2pWithAllRanksComplete) {
  LogSummary s = summarize({"h200x2/nvlink-default.log"});
  Diagnosis d = diagnose(s);
  EXPECT_NE(d.verdict.find("intra-node only: GPU peer-to-peer (P2P) on all"), std::string::npos) << d.verdict;
  EXPECT_NE(d.verdict.find("Init COMPLETE on 2/2 ranks"), std::string::npos) << d.verdict;
  ASSERT_EQ(s.comms.size(), 1u);
  EXPECT_EQ(s.comms[0].key, "0xe481bfcc4c65d301");
  EXPECT_EQ(s.comms[0].nnodes, 1);
  EXPECT_EQ(fabscope::exit_code_for(d.findings), 0);
  ASSERT_EQ(s.processes.size(), 2u);
  EXPECT_EQ(s.processes[0].nccl_version, "2.28.9+cuda13.0");
  EXPECT_EQ(s.processes[0].cuda_driver, 13000);
  EXPECT_EQ(s.processes[0].bootstrap_if, "eth0:192.0.2.2<0>");
  EXPECT_TRUE(s.processes[0].ib_no_device);
  EXPECT_TRUE(has_finding(d, "nccllog.ib_init_failed", Severity::Info));
}

TEST(Fixtures, ShmOnlyRunIsIntraNodeShm) {
  Diagnosis d = diagnose(summarize({"h200x2/shm-p2p-disabled.log"}));
  EXPECT_NE(d.verdict.find("intra-node only: SHM/direct/direct"), std::string::npos) << d.verdict;
  EXPECT_EQ(fabscope::exit_code_for(d.findings), 0);
}

TEST(Fixtures, SocketRunWithNoIbDeviceWarnsAboutSockets) {
  for (const char* rel : {"h200x2/socket-p2p-shm-disabled.log", "h200x2/subsys-all-socket.log",
                          "h200x2/ib-hca-set-no-ib.log"}) {
    LogSummary s = summarize({rel});
    Diagnosis d = diagnose(s);
    EXPECT_NE(d.verdict.find("no RDMA: all"), std::string::npos) << rel << ": " << d.verdict;
    EXPECT_TRUE(has_finding(d, "nccllog.net_socket_no_rdma", Severity::Warn)) << rel;
    EXPECT_EQ(fabscope::exit_code_for(d.findings), 1) << rel;
    ASSERT_EQ(s.comms.size(), 1u);
    EXPECT_EQ(s.comms[0].nnodes, 2) << rel;
  }
}

TEST(Fixtures, IbHcaOverrideIsReportedAsEnvironment) {
  LogSummary s = summarize({"h200x2/ib-hca-set-no-ib.log"});
  ASSERT_FALSE(s.processes.empty());
  EXPECT_EQ(s.processes[0].env.at("NCCL_IB_HCA"), "=mlx5_0:1");
}

TEST(Fixtures, BadSocketIfnameFailsWithTheCatalogCause) {
  LogSummary s = summarize({"h200x2/bad-socket-ifname.log"});
  Diagnosis d = diagnose(s);
  EXPECT_NE(d.verdict.find("No usable network interface"), std::string::npos) << d.verdict;
  EXPECT_TRUE(has_finding(d, "nccllog.socket_no_interface", Severity::Fail));
  EXPECT_TRUE(has_finding(d, "nccllog.nccl_call_failed", Severity::Fail));
  EXPECT_EQ(fabscope::exit_code_for(d.findings), 2);
  // The value at fault is in the evidence (and so in the human output), not only in the JSON.
  for (const auto& f : d.findings)
    if (f.id == "nccllog.socket_no_interface")
      EXPECT_NE(f.evidence.find("NCCL_SOCKET_IFNAME==nosuchif0 (set by environment)"), std::string::npos) << f.evidence;
}

TEST(Fixtures, PerRankFilesMakeOneCommunicatorOfTwoRanks) {
  LogSummary s = summarize({"h200x2/per-rank/vm.1084.log", "h200x2/per-rank/vm.1085.log"});
  Diagnosis d = diagnose(s);
  ASSERT_EQ(s.comms.size(), 1u);
  EXPECT_EQ(s.comms[0].ranks.size(), 2u);
  EXPECT_NE(d.verdict.find("Init COMPLETE on 2/2 ranks"), std::string::npos) << d.verdict;
}

TEST(Fixtures, LauncherOutputWithoutNcclLinesSaysSo) {
  Diagnosis d = diagnose(summarize({"h200x2/per-rank-files.log"}));
  EXPECT_TRUE(has_finding(d, "nccllog.no_nccl_lines", Severity::Warn));
}

TEST(Fixtures, MpirunLogWithGraphSubsystemIsStillP2p) {
  Diagnosis d = diagnose(summarize({"h200x2/mpirun-init-graph-env.log"}));
  EXPECT_NE(d.verdict.find("GPU peer-to-peer"), std::string::npos) << d.verdict;
}

TEST(Fixtures, PublicIbWithoutGdrdmaWarns) {
  LogSummary s = summarize({"public/nccl-1412-ib-no-gdrdma.log"});
  Diagnosis d = diagnose(s);
  EXPECT_NE(d.verdict.find("RDMA in use on all 4 network connections, GPUDirect RDMA on 0/4"), std::string::npos)
      << d.verdict;
  EXPECT_TRUE(has_finding(d, "nccllog.gdrdma_absent", Severity::Warn));
}

TEST(Fixtures, PublicA100GdrdmaIsClean) {
  Diagnosis d = diagnose(summarize({"public/nccl-707-a100-gdrdma.log"}));
  EXPECT_NE(d.verdict.find("GPUDirect RDMA on 12/12"), std::string::npos) << d.verdict;
  EXPECT_EQ(fabscope::exit_code_for(d.findings), 0);
}

TEST(Fixtures, PublicCompletionErrorsMapToVerbsStatus) {
  LogSummary s = summarize({"public/nccl-1405-status12-plugin.log"});
  ASSERT_EQ(s.hits.size(), 1u);
  EXPECT_EQ(s.hits[0].id, "ib_wc_retry_exceeded");
  EXPECT_EQ(s.hits[0].count, 3);
  EXPECT_EQ(s.hits[0].wc_status, 12);
  Diagnosis d2 = diagnose(summarize({"public/nccl-1052-roce-plugin-absent.log"}));
  EXPECT_TRUE(has_finding(d2, "nccllog.ib_wc_local_protection", Severity::Fail));
}

TEST(Fixtures, PublicRoceNicsAndNetworkAreReported) {
  LogSummary s = summarize({"public/nccl-tests-227-irdma-plugin-timeout.log"});
  ASSERT_EQ(s.processes.size(), 2u);
  EXPECT_EQ(s.processes[0].network, "IBext_v8");
  ASSERT_EQ(s.processes[0].ib_nics.size(), 2u);
  EXPECT_EQ(s.processes[0].ib_nics[0].name, "irdma0:1");
  EXPECT_EQ(s.processes[0].ib_nics[0].link_layer, "RoCE");
  EXPECT_TRUE(has_finding(diagnose(s), "nccllog.ib_modify_qp_timeout", Severity::Fail));
}

TEST(Fixtures, PublicTaggedOutputKeepsMixedLinkLayers) {
  LogSummary s = summarize({"public/nccl-302-tagged-modify-qp.log"});
  ASSERT_EQ(s.processes.size(), 1u);
  ASSERT_EQ(s.processes[0].ib_nics.size(), 4u);
  EXPECT_EQ(s.processes[0].ib_nics[2].link_layer, "RoCE");
  EXPECT_TRUE(has_finding(diagnose(s), "nccllog.ib_modify_qp_invalid", Severity::Fail));
}

TEST(Fixtures, PublicSocketFallbackAfterMissingVerbs) {
  Diagnosis d = diagnose(summarize({"public/pytorch-68893-no-libibverbs.log"}));
  EXPECT_TRUE(has_finding(d, "nccllog.ib_verbs_missing", Severity::Warn));
  EXPECT_TRUE(has_finding(d, "nccllog.net_socket_no_rdma", Severity::Warn));
}

TEST(Fixtures, PublicVersionsOfSeparateLogsAreAMismatch) {
  // Two unrelated public logs stand in for two nodes of one job with different NCCL builds.
  Diagnosis d = diagnose(summarize({"public/nccl-1052-roce-plugin-absent.log", "public/nccl-tests-185-roce-unreachable.log"}));
  EXPECT_TRUE(has_finding(d, "nccllog.version_mismatch", Severity::Fail));
}

TEST(Fixtures, PublicOomShmAndSocketErrorsAreCataloged) {
  EXPECT_TRUE(has_finding(diagnose(summarize({"public/tensorrt-llm-1670-cuda-oom.log"})), "nccllog.cuda_oom", Severity::Fail));
  Diagnosis d = diagnose(summarize({"public/nccl-tests-166-shm-and-socket.log"}));
  EXPECT_TRUE(has_finding(d, "nccllog.shm_exhausted", Severity::Fail));
  EXPECT_TRUE(has_finding(d, "nccllog.socket_closed_by_peer", Severity::Fail));
  EXPECT_TRUE(has_finding(diagnose(summarize({"public/espnet-1940-connection-refused.log"})),
                          "nccllog.socket_connection_refused", Severity::Fail));
}
