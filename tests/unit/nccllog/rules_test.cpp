// Each entry of the reasoning tables (rules.hpp) and of the summary rules (diagnose.hpp) on its own,
// on lines from real logs (tests/fixtures/nccl-logs/issues and public, see their SOURCE files).
#include "nccllog/rules.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "nccllog/accumulate.hpp"
#include "nccllog/diagnose.hpp"
#include "nccllog/findings.hpp"
#include "core/strings.hpp"
#include "nccllog/signatures.hpp"

using namespace fabscope::nccllog;

namespace {

// A failure as the accumulator records it: the catalog id the line matches, and the line.
Failure failure_of(const std::string& line) {
  LogSummary s = summarize_text(line + "\n");
  EXPECT_EQ(s.failures.size(), 1u) << line;
  return s.failures.empty() ? Failure{} : s.failures[0];
}

std::string consequence_id(const std::string& line) {
  const ConsequenceRule* r = match_consequence(failure_of(line));
  return r ? r->id : "";
}

std::string docs() {
  std::ifstream f(std::string(FABSCOPE_SOURCE_DIR) + "/docs/nccllog.md");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// One real line per consequence rule.
const std::map<std::string, std::string> kConsequenceSamples = {
    {"peer_closed", "ng30903:3063025:3066048 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by "
                    "remote peer ng30903-ib.narval.calcul.quebec<51159>"},
    {"peer_reset", "h:1:1 [0] misc/socket.cc:1 NCCL WARN Net : Connection reset by peer"},
    {"recv_failed", "ng30903:3063025:3066048 [0] proxy.cc:1143 NCCL WARN Socket recv failed while polling for "
                    "opId=0x55a51966cc80"},
    {"socket_progress_error", "h:1:1 [0] misc/socket.cc:1 NCCL WARN socketProgress: abort, res=3"},
    {"proxy_op_failed", "user:16901:16967 [2] proxy.cc:1519 NCCL WARN [Proxy Service 2] Failed to execute operation "
                        "Connect from rank 2, retcode 3"},
    {"proxy_progress_error", "Fri Aug 11 12:31:45 2023[1,0]<stdout>:tomte401:1850301:1881358 [0] proxy.cc:1485 NCCL "
                             "WARN [Service thread] Error encountered progressing operation=Connect, res=3, closing "
                             "connection"},
    {"remote_error", "RuntimeError: NCCL error: remote process exited or there was a network error, NCCL version 2.18"},
    {"remote_error_warn", "h:1:1 [0] x.cc:1 NCCL WARN remote process exited or there was a network error"},
    {"aborted_by_rank", "[rank1]: RuntimeError: NCCL communicator was aborted on rank 1."},
    {"qp_flushed", "h:1:1 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.1<1> with status=5 opcode=0"},
    {"peer_not_ready", "h:1:1 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.1<1> with status=13 opcode=0"},
    {"peer_rejected_access", "h:1:1 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.1<1> with status=10"},
    {"peer_remote_op", "h:1:1 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.1<1> with status=11"},
    {"peer_invalid_request", "node023:10214:10303 [0] transport/net_ib.cc:1909 NCCL WARN NET/IB : Got completion "
                             "from peer 10.1.3.201<33057> with status=9 opcode=0 len=0 vendor err 138"},
    {"proxy_call_failed", "host:22337:22400 [6] proxy.cc:862 NCCL WARN Proxy Call to rank 14 failed (Connect)"},
    {"proxy_receive_failed", "Fri Aug 11 12:31:45 2023[1,0]<stdout>:tomte401:1850301:1881358 [0] proxy.cc:1495 NCCL "
                             "WARN [Service thread] Could not receive type from localRank 0, res=3, closed=0"},
    {"alloc_after_cuda_failure", "ng30903:3063028:3066152 [3] include/alloc.h:185 NCCL WARN Failed to CUDA calloc "
                                 "6291456 bytes"},
    {"framework_system_error", "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:825, unhandled system error, NCCL "
                               "version 2.7.8"},
    {"framework_internal_error", "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1197, "
                                 "internal error - please report this issue to the NCCL developers"},
    {"framework_cuda_error", "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled cuda error"},
    {"framework_invalid_usage", "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1727, invalid "
                                "usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3"},
    {"watchdog_timeout", "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1) ran for 600000 ms "
                         "before timing out. NCCL error"},
};

}  // namespace

TEST(ConsequenceRules, EveryRuleMatchesItsSampleAndHasOne) {
  for (const auto& r : consequence_rules()) {
    auto it = kConsequenceSamples.find(r.id);
    ASSERT_NE(it, kConsequenceSamples.end()) << "no sample line for consequence rule " << r.id;
    EXPECT_EQ(consequence_id(it->second), r.id) << it->second;
  }
  EXPECT_EQ(kConsequenceSamples.size(), consequence_rules().size());
}

TEST(ConsequenceRules, CausesAreNotConsequences) {
  EXPECT_EQ(consequence_id("ng30903:3063028:3066152 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'"), "");
  EXPECT_EQ(consequence_id("72bf:76786:77145 [3] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with error "
                           "No such device"),
            "");
  EXPECT_EQ(consequence_id("h:1:1 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.1<1> with status=12"), "");
  EXPECT_EQ(consequence_id("user:16901:16967 [2] misc/socket.cc:441 NCCL WARN socketFinalizeAccept: wrong type 4 != 3"),
            "");
}

TEST(ConsequenceRules, EveryRuleIsDocumented) {
  const std::string d = docs();
  for (const auto& r : consequence_rules())
    if (r.signature[0] != '\0') {
      EXPECT_NE(d.find("### nccllog." + std::string(r.signature) + "\n"), std::string::npos) << r.id;
    }
}

TEST(ConsequenceRules, ReferToCatalogIds) {
  for (const auto& r : consequence_rules()) {
    if (r.signature[0] == '\0') continue;
    bool found = std::any_of(signatures().begin(), signatures().end(),
                             [&](const Signature& s) { return std::string(s.id) == r.signature; });
    EXPECT_TRUE(found) << r.id << " -> " << r.signature;
  }
}

namespace {
std::vector<std::string> rules_applied(const std::string& text) {
  return diagnose(summarize_text(text)).causality.rules_applied;
}
bool applied(const std::string& text, const std::string& id) {
  auto v = rules_applied(text);
  return std::find(v.begin(), v.end(), id) != v.end();
}
// From public/espnet-1940-connection-refused.log with a bootstrap line of the same process added.
const char* kRefused =
    "tj1:941227:943077 [0] include/socket.h:390 NCCL WARN Connect to 10.38.10.112<21724> failed : Connection refused\n"
    "tj1:941227:943077 [0] NCCL INFO bootstrap.cc:100 -> 2\n";
}  // namespace

TEST(CauseRules, BootstrapInterfaceIsNamedForASocketFailureInBootstrap) {
  std::string text = std::string("tj1:941227:941227 [0] NCCL INFO Bootstrap : Using eth0:10.38.10.113<0>\n") + kRefused;
  EXPECT_TRUE(applied(text, "bootstrap_interface"));
  EXPECT_FALSE(applied(text, "bootstrap_ipoib"));
  Diagnosis d = diagnose(summarize_text(text));
  EXPECT_NE(d.verdict.find("NCCL failed during bootstrap (TCP rendezvous): Socket connection refused"), std::string::npos)
      << d.verdict;
  EXPECT_NE(d.verdict.find("bootstrap interface eth0:10.38.10.113<0>"), std::string::npos) << d.verdict;
  ASSERT_FALSE(d.findings.empty());
  EXPECT_NE(d.findings[0].remedy.find("NCCL_SOCKET_IFNAME"), std::string::npos);
  EXPECT_EQ(d.findings[0].remedy.find("GID"), std::string::npos) << "no RDMA remedy before any transport line";
  // Without the bootstrap line the rule has nothing to name.
  EXPECT_FALSE(applied(kRefused, "bootstrap_interface"));
}

TEST(CauseRules, IpoibBootstrapAcrossSubnetsPinsTheEthernetInterface) {
  std::string text = std::string(
                         "tj1:941227:941227 [0] NCCL INFO Bootstrap : Using ib0:192.168.1.5<0>\n"
                         "tj2:5:5 [0] NCCL INFO Bootstrap : Using ib0:192.168.2.6<0>\n"
                         "tj1:941227:941227 [0] NCCL INFO NET/Socket : Using [0]ib0:192.168.1.5<0> [1]eno1:10.0.0.5<0>\n") +
                     kRefused;
  EXPECT_TRUE(applied(text, "bootstrap_ipoib"));
  Diagnosis d = diagnose(summarize_text(text));
  EXPECT_NE(d.verdict.find("IPoIB used for bootstrap across 2 subnets"), std::string::npos) << d.verdict;
  EXPECT_NE(d.findings[0].remedy.find("NCCL_SOCKET_IFNAME=eno1"), std::string::npos) << d.findings[0].remedy;
}

TEST(CauseRules, SocketInterfaceNamesTheVethTheChannelsRanOn) {
  // public/oneflow-3586-socket-timeout.log, with the WARN its thread quotes completed as NCCL prints it.
  std::ifstream f(std::string(FABSCOPE_SOURCE_DIR) + "/tests/fixtures/nccl-logs/public/oneflow-3586-socket-timeout.log");
  std::stringstream ss;
  ss << f.rdbuf();
  std::string text = ss.str() +
                     "worker:101542:101934 [0] include/socket.h:403 NCCL WARN Connect to fe80::1<43323> failed : "
                     "Connection timed out\n";
  EXPECT_TRUE(applied(text, "socket_interface"));
  Diagnosis d = diagnose(summarize_text(text));
  EXPECT_NE(d.verdict.find("NET/Socket ran over veth25f2e72:fe80::380d"), std::string::npos) << d.verdict;
  EXPECT_NE(d.findings[0].remedy.find("NCCL_SOCKET_IFNAME=eno1"), std::string::npos) << d.findings[0].remedy;
}

TEST(CauseRules, RailHintOnlyForAnRtrTimeout) {
  const std::string rtr =
      "[2026-03-13 22:26:02] host-01.example.com:XXXXXX [5] ibvwrap.c:262 NCCL WARN Call to ibv_modify_qp failed with "
      "110 Connection timed out, on dev mlx_x:1, curr state INIT, next state RTR, local GID index 3\n";
  EXPECT_TRUE(applied(rtr, "rail_cross_nic"));
  Diagnosis d = diagnose(summarize_text(rtr));
  EXPECT_NE(d.findings[0].remedy.find("NCCL_CROSS_NIC=0"), std::string::npos);
  // nccl-tests#227's line names no state: the generic ARP/GID remedy stays alone.
  EXPECT_FALSE(applied("ai-worker01:5771:5783 [0] ibvwrap.c:1 NCCL WARN Call to ibv_modify_qp failed with error "
                       "Connection timed out\n",
                       "rail_cross_nic"));
  // One NIC per node cannot be a rail problem.
  EXPECT_FALSE(applied("h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.1<0>\n"
                       "h:1:2 [0] ibvwrap.c:262 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, "
                       "curr state INIT, next state RTR\n",
                       "rail_cross_nic"));
}

TEST(CauseRules, QpTransitionIsNamedAndPicksTheRemedy) {
  // nccl#2013's line (ETIMEDOUT, INIT -> RTR), and the same format with EINVAL.
  const std::string rtr =
      "[2026-03-13 22:26:02] host-01.example.com:XXXXXX [5] ibvwrap.c:262 NCCL WARN Call to ibv_modify_qp failed with "
      "110 Connection timed out, on dev mlx_x:1, curr state INIT, next state RTR, local GID index 3\n";
  EXPECT_TRUE(applied(rtr, "qp_transition"));
  EXPECT_NE(diagnose(summarize_text(rtr)).verdict.find("QP INIT -> RTR"), std::string::npos);
  std::string inval = rtr;
  inval.replace(inval.find("110 Connection timed out"), 24, "22 Invalid argument");
  Diagnosis d = diagnose(summarize_text(inval));
  EXPECT_NE(d.findings[0].remedy.find("MTU"), std::string::npos) << d.findings[0].remedy;
  EXPECT_NE(d.findings[0].remedy.find("NCCL_IB_ROCE_VERSION_NUM"), std::string::npos);
  // Older lines name no state.
  EXPECT_FALSE(applied("h:1:1 [0] ibvwrap.cc:1 NCCL WARN Call to ibv_modify_qp failed with error Invalid argument\n",
                       "qp_transition"));
}

TEST(CauseRules, OomDuringConnectIsTheTransportBuffers) {
  std::string text =
      "ng30903:3063028:3066152 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'\n"
      "ng30903:3063028:3066152 [3] NCCL INFO transport/p2p.cc:204 -> 1\n";
  EXPECT_TRUE(applied(text, "oom_transport_buffers"));
  // In a collective (enqueue.cc) it is not.
  EXPECT_FALSE(applied("VM:392:494 [2] enqueue.cc:43 NCCL WARN Cuda failure 'out of memory'\n", "oom_transport_buffers"));
}

TEST(CauseRules, NvlsFailuresPointAtTheNvswitchFabric) {
  // nccl#1488's line (a Cuda failure printed from transport/nvls.cc) and NVIDIA/DCGM#304's bind WARN.
  const std::string cuda = "node23:12098:12141 [2] transport/nvls.cc:244 NCCL WARN Cuda failure 1 'invalid argument'\n";
  EXPECT_TRUE(applied(cuda, "nvls_fabric"));
  Diagnosis d = diagnose(summarize_text(cuda));
  EXPECT_NE(d.verdict.find("in NVLS (NVLink SHARP) setup"), std::string::npos) << d.verdict;
  EXPECT_NE(d.findings[0].remedy.find("NCCL_NVLS_ENABLE=0"), std::string::npos) << d.findings[0].remedy;
  EXPECT_TRUE(applied("[2026-06-23 15:45:07] gpu-stress-dgc86-xfpt6:420:437 [5] transport/nvls.cc:379 (nvlsAllocateMem) "
                      "NCCL WARN Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 401 "
                      "'the operation cannot be performed in the present state'.\n",
                      "nvls_fabric"));
  // nccl#957's Cuda failure comes from transport.cc, not NVLS.
  EXPECT_FALSE(applied("Fri Aug 11 12:31:45 2023[1,0]<stdout>:tomte401:1850301:1881341 [0] transport.cc:154 NCCL WARN "
                       "Cuda failure 'invalid argument'\n",
                       "nvls_fabric"));
}

TEST(CauseRules, SocketIfnameIsNamedWhenNoInterfaceOrAddressIsFound) {
  const std::string env = "h:7:7 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth2\n";
  EXPECT_TRUE(applied(env + "h:7:7 [0] misc/socket.cc:1 NCCL WARN Bootstrap : no socket interface found\n",
                      "socket_ifname_set"));
  EXPECT_TRUE(applied(env + "h:7:7 [0] misc/socket.cc:1 NCCL WARN ncclSocketInit: connecting to address  with "
                            "family 59936 is neither AF_INET(2) nor AF_INET6(10)\n",
                      "socket_ifname_set"));
  // Without the setting in the log there is nothing to name; another failure is not about it.
  EXPECT_FALSE(applied("h:7:7 [0] misc/socket.cc:1 NCCL WARN Bootstrap : no socket interface found\n",
                       "socket_ifname_set"));
  EXPECT_FALSE(applied(env + "h:7:7 [0] misc/socket.cc:1 NCCL WARN Connect to 10.0.0.1<1> failed : Connection refused\n",
                       "socket_ifname_set"));
}

TEST(CauseRules, GidTableChangeBeforeACompletionErrorOnTheSameHostIsNamed) {
  const std::string gid = "VM-0-14-centos:106:196 [0] transport/net_ib.cc:73 NCCL WARN NET/IB : Got async event : GID table change\n";
  const std::string wc = "VM-0-14-centos:108:593 [0] transport/net_ib.cc:816 NCCL WARN NET/IB : Got completion with error 12, "
                         "opcode 0, len 32633, vendor err 129\n";
  EXPECT_TRUE(applied(gid + wc, "gid_changed"));
  // after the error, or on another host, it explains nothing
  EXPECT_FALSE(applied(wc + gid, "gid_changed"));
  EXPECT_FALSE(applied("other:1:1 [0] transport/net_ib.cc:73 NCCL WARN NET/IB : Got async event : GID table change\n" + wc,
                       "gid_changed"));
}

TEST(CauseRules, EveryRuleHasATestAndIsDocumented) {
  const std::string d = docs();
  for (const auto& r : cause_rules()) {
    EXPECT_NE(d.find("`" + std::string(r.id) + "`"), std::string::npos) << r.id;
  }
  EXPECT_EQ(cause_rules().size(), 9u) << "a new cause rule needs its own test above";
}

namespace {
std::string fixture_text(const std::string& rel) {
  std::ifstream f(std::string(FABSCOPE_SOURCE_DIR) + "/tests/fixtures/nccl-logs/" + rel);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
}  // namespace

TEST(FallbackRules, CollnetFallbackExplainsTheSetupTraces) {
  // nccl#1050: ranks print "transport.cc:291 -> 2" / "init.cc:670 -> 2", rank 0 the fallback WARN.
  const std::string text = fixture_text("issues/nccl-1050-collnet-sharp-fallback.log");
  LogSummary s = summarize_text(text);
  ASSERT_FALSE(s.processes.empty());
  for (const auto& p : s.processes)
    if (p.first_error_code) {
      const FallbackRule* r = trace_fallback(s, p);
      ASSERT_NE(r, nullptr) << p.host << ":" << p.pid;
      EXPECT_STREQ(r->id, "collnet_to_p2p");
    }
  Diagnosis d = diagnose(s);
  EXPECT_EQ(d.verdict.find("NCCL failed"), std::string::npos) << d.verdict;
  EXPECT_NE(d.verdict.find("fell back to the point-to-point network"), std::string::npos) << d.verdict;
  // The same log without its last line (the fallback WARN): the traces are unexplained again.
  LogSummary cut = summarize_text(text.substr(0, text.rfind("ib-vm-41:1056918")));
  for (const auto& p : cut.processes) EXPECT_EQ(trace_fallback(cut, p), nullptr) << p.host << ":" << p.pid;
  EXPECT_NE(diagnose(cut).verdict.find("NCCL failed"), std::string::npos);
}

TEST(FallbackRules, TracesOfAnotherFileOrResultAreNotTheFallbacks) {
  // nccl#1050's fallback WARN beside espnet#1940's bootstrap trace (ncclSystemError from bootstrap.cc).
  LogSummary s = summarize_text(
      "ib-vm-41:1056918:1057186 [0] transport.cc:323 NCCL WARN Cannot initialize CollNet, using point-to-point "
      "network instead\n"
      "tj1:941227:943077 [0] NCCL INFO bootstrap.cc:100 -> 2\n");
  ASSERT_EQ(s.processes.size(), 2u);
  EXPECT_EQ(trace_fallback(s, s.processes[1]), nullptr);
  EXPECT_NE(diagnose(s).verdict.find("NCCL failed"), std::string::npos);
}

TEST(FallbackRules, IgnoredCollnetAlgorithmIsANoteInTheVerdict) {
  Diagnosis d = diagnose(summarize_text(fixture_text("issues/nccl-tests-133-collnet-algo-ignored.log")));
  EXPECT_NE(d.verdict.find("NCCL_ALGO=COLLNET was ignored"), std::string::npos) << d.verdict;
  EXPECT_EQ(fabscope::exit_code_for(d.findings), 0);
}

TEST(FallbackRules, EveryRuleHasATestReferToCatalogIdsAndIsDocumented) {
  const std::string d = docs();
  for (const auto& r : fallback_rules()) {
    EXPECT_NE(d.find("`" + std::string(r.id) + "`"), std::string::npos) << r.id;
    const Signature* sig = nullptr;
    for (const auto& x : signatures())
      if (std::string(x.id) == r.signature) sig = &x;
    ASSERT_NE(sig, nullptr) << r.id << " -> " << r.signature;
    EXPECT_EQ(sig->severity, fabscope::Severity::Info) << "a fallback is a note: " << r.signature;
  }
  EXPECT_EQ(fallback_rules().size(), 2u) << "a new fallback rule needs its own test above";
}

TEST(Phases, EachPhaseHasANameAndARemedy) {
  for (Phase p : {Phase::Bootstrap, Phase::Topology, Phase::Connect, Phase::Running}) {
    EXPECT_EQ(phase_info(p).phase, p);
    EXPECT_NE(std::string(phase_info(p).remedy), "");
  }
  EXPECT_NE(std::string(phase_info(Phase::Bootstrap).remedy).find("RDMA is not used"), std::string::npos);
}

TEST(Phases, HintsFromTheLineItself) {
  EXPECT_EQ(phase_hint("ib_modify_qp_no_device", "misc/ibvwrap.cc:284"), Phase::Connect);
  EXPECT_EQ(phase_hint("shm_exhausted", "misc/shmutils.cc:112"), Phase::Connect);
  EXPECT_EQ(phase_hint("proxy_op_failed", "proxy.cc:1519"), Phase::Connect);
  EXPECT_EQ(phase_hint("unknown_warning", "transport/net_socket.cc:375"), Phase::Connect);
  EXPECT_EQ(phase_hint("ib_wc_local_protection", "transport/net_ib.cc:1"), Phase::Running);
  EXPECT_EQ(phase_hint("ib_collective_mismatch", "transport/net_ib.cc:1038"), Phase::Running);
  EXPECT_EQ(phase_hint("cuda_oom", "enqueue.cc:43"), Phase::Running);
  EXPECT_EQ(phase_hint("gpu_duplicate", "init.cc:497"), Phase::Topology);
  EXPECT_FALSE(phase_hint("socket_connection_refused", "include/socket.h:390").has_value());
  EXPECT_FALSE(phase_hint("cuda_oom", "include/alloc.h:178").has_value());
}

TEST(Phases, ProcessPhaseFollowsItsLines) {
  // From h200x2/socket-p2p-shm-disabled.log, rank 0's lines, cut after each phase's first line.
  const std::string start = "vm:767:767 [0] NCCL INFO Bootstrap : Using eth0:192.0.2.2<0>\n";
  const std::string info = "vm:767:767 [0] NCCL INFO comm 0xd60a470 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0\n";
  const std::string chan = "vm:767:767 [0] NCCL INFO Channel 00/0 : 1[1] -> 0[0] [receive] via NET/Socket/0\n";
  const std::string done = "vm:767:767 [0] NCCL INFO ncclCommInitRankConfig comm 0xd60a470 rank 0 nranks 2 cudaDev 0 "
                           "nvmlDev 0 busId 60 commId 0x6b36aa821378b89a - Init COMPLETE\n";
  EXPECT_EQ(summarize_text(start).processes[0].phase, Phase::Bootstrap);
  EXPECT_EQ(summarize_text(start + info).processes[0].phase, Phase::Topology);
  EXPECT_EQ(summarize_text(start + info + chan).processes[0].phase, Phase::Connect);
  EXPECT_EQ(summarize_text(start + info + chan + done).processes[0].phase, Phase::Running);
  // A WARN of that process takes the phase of its communicator at that point.
  LogSummary s = summarize_text(start + info + "vm:767:800 [0] misc/x.cc:1 NCCL WARN something failed\n");
  ASSERT_EQ(s.failures.size(), 1u);
  EXPECT_EQ(s.failures[0].phase, Phase::Topology);
  EXPECT_EQ(s.failures[0].rank, 0);
}

TEST(Interfaces, SuspiciousChoices) {
  EXPECT_EQ(suspicious_interface("veth25f2e72:fe80::380d:bfff:fe5b:54d2%veth25f2e72<0>"),
            "container/VM virtual interface veth*, IPv6 link-local address");
  EXPECT_EQ(suspicious_interface("docker0:172.17.0.1<0>"), "container/VM virtual interface docker*");
  EXPECT_EQ(suspicious_interface("lo:127.0.0.1<0>"), "loopback");
  EXPECT_EQ(suspicious_interface("ib1:fe80::966d:ae03:b2:62c4%ib1<0>"), "IPv6 link-local address");
  EXPECT_EQ(suspicious_interface("eth0:169.254.3.1<0>"), "IPv4 link-local address");
  EXPECT_FALSE(suspicious_interface("eno1:172.18.40.41<0>").has_value());
  EXPECT_FALSE(suspicious_interface("enp10s0:10.10.7.107<0>").has_value());
  EXPECT_EQ(interface_name("veth25f2e72:fe80::380d%veth25f2e72<0>"), "veth25f2e72");
  EXPECT_EQ(interface_name("mlx5_0:1"), "mlx5_0");
}

TEST(Interfaces, ChannelsMapToTheIndexOfTheUsingList) {
  bool socket = false;
  EXPECT_EQ(net_device_index("NET/Socket/1", socket), 1);
  EXPECT_TRUE(socket);
  EXPECT_EQ(net_device_index("NET/IB/3(1)/GDRDMA/Shared", socket), 3);
  EXPECT_FALSE(socket);
  EXPECT_EQ(net_device_index("NET/IBext_v8/0/GDRDMA", socket), 0);
  EXPECT_EQ(net_device_index("P2P/CUMEM", socket), -1);
  LogSummary s = summarize_files({std::string(FABSCOPE_SOURCE_DIR) +
                                  "/tests/fixtures/nccl-logs/public/oneflow-3586-socket-timeout.log"});
  ASSERT_EQ(s.processes.size(), 1u);
  EXPECT_EQ(s.processes[0].socket_dev_channels, (std::vector<long>{0, 2}));
  Diagnosis d = diagnose(s);
  EXPECT_NE(d.verdict.find("over veth25f2e72 (veth25f2e72: container/VM virtual interface veth*, IPv6 link-local"),
            std::string::npos)
      << d.verdict;
  auto f = std::find_if(d.findings.begin(), d.findings.end(),
                        [](const fabscope::Finding& x) { return x.id == "nccllog.suspicious_interface"; });
  ASSERT_NE(f, d.findings.end());
  EXPECT_NE(f->evidence.find("NET/Socket/1 of worker:101542 (2 channels)"), std::string::npos) << f->evidence;
  EXPECT_NE(f->remedy.find("NCCL_SOCKET_IFNAME=eno1"), std::string::npos);
}

TEST(Interfaces, RdmaChannelsNameTheirHca) {
  // The NIC list of public/nccl-tests-227-irdma-plugin-timeout.log with two channel lines added
  // in the form of public/nccl-1412-ib-no-gdrdma.log; an index beyond the list stays as printed.
  std::string text =
      "ai-worker01:5771:5783 [0] NCCL INFO NET/IB : Using [0]irdma0:1/RoCE [1]irdma3:1/RoCE [RO]; OOB "
      "eth0:172.16.121.86<0>\n"
      "ai-worker01:5771:5783 [0] NCCL INFO Channel 03/0 : 5[5] -> 12[4] [send] via NET/IBext_v8/1\n"
      "ai-worker01:5771:5783 [0] NCCL INFO Channel 07/0 : 5[5] -> 12[4] [send] via NET/IBext_v8/3\n";
  LogSummary s = summarize_text(text);
  ASSERT_EQ(s.processes.size(), 1u);
  EXPECT_EQ(s.processes[0].ib_dev_channels, (std::vector<long>{0, 1, 0, 1}));
  Diagnosis d = diagnose(s);
  EXPECT_NE(d.verdict.find("GPUDirect RDMA on 0/2 over irdma3:1,NET/IB/3"), std::string::npos) << d.verdict;
}

// Registered, every id is tested against docs/nccllog.md with every other finding id
// (tests/unit/cli/findings_docs_test.cpp); every registered id is a signature's or one
// diagnose() reports.
TEST(SummaryRules, EveryIdIsRegistered) {
  std::set<std::string> reported = {"nccllog.first_cause", "nccllog.no_transport_lines"};
  for (const auto& r : summary_rules()) {
    EXPECT_NE(fabscope::find_finding(finding_infos(), r.id), nullptr) << r.id;
    reported.insert(r.id);
  }
  for (const auto& s : signatures()) reported.insert("nccllog." + std::string(s.id));
  for (const auto& f : finding_infos()) EXPECT_TRUE(reported.count(f.id)) << f.id << " is never reported";
  for (const char* id : {"nccllog.first_cause", "nccllog.no_transport_lines"})
    EXPECT_NE(fabscope::find_finding(finding_infos(), id), nullptr) << id;
}

TEST(Reasoning, WarnSeverityFallbacksNeverFailTheJob) {
  // nccl-tests#227-style plugin fallback plus an async port event: the job still connected.
  std::string text =
      "h:1:1 [0] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : undefined symbol: x\n"
      "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\n"
      "h:1:2 [0] NCCL WARN NET/IB : mlx5_0:1 Got async event : port error\n";
  Diagnosis d = diagnose(summarize_text(text));
  EXPECT_EQ(d.verdict.find("NCCL failed"), std::string::npos) << d.verdict;
}

TEST(Reasoning, ConsequenceOnItsOwnProcessFollowsThatProcessCause) {
  // Two processes: A fails on /dev/shm, B on an IB completion; B's flush follows B's error.
  std::string text =
      "a:1:1 [0] misc/shmutils.cc:112 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-x (size 5)\n"
      "b:2:2 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.1<1> with status=12 opcode=0\n"
      "b:2:2 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.1<1> with status=5 opcode=0\n"
      "c:3:3 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer a<1>\n";
  LogSummary s = summarize_text(text);
  Causality c = reason(s);
  ASSERT_EQ(s.failures.size(), 4u);
  EXPECT_EQ(c.first_cause, 0u);
  EXPECT_EQ(c.follows[2], 1);  // b's flush follows b's retry-exceeded
  EXPECT_EQ(c.follows[3], 0);  // c has no cause of its own: the job's first cause
  EXPECT_EQ(c.consequences, 1);
  EXPECT_EQ(c.causes, 2);
}

TEST(Reasoning, TimestampsWinOverReadingOrder) {
  // Per-rank files read in the wrong order: the later file's failure happened first.
  std::string text =
      "[2024-05-01 10:00:05] b:2:2 [0] misc/socket.cc:49 NCCL WARN Net : Connection reset by peer\n"
      "[2024-05-01 10:00:07] b:2:2 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.1<1> with status=12\n"
      "[2024-05-01 10:00:03] a:1:1 [0] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'\n";
  LogSummary s = summarize_text(text);
  Causality c = reason(s);
  ASSERT_TRUE(c.first_cause.has_value());
  EXPECT_EQ(s.failures[*c.first_cause].id, "cuda_oom");
  EXPECT_EQ(c.order.front(), 2u);
}

TEST(Reasoning, UsageErrorsGetTheirOwnRemedyWithoutThePhaseAdvice) {
  // hybrik#47's line: NCCL notices the bad rank in init (init.cc), but the network is not the cause.
  Causality c = reason(summarize_text("h:6861:6861 [7] init.cc:981 NCCL WARN Invalid rank requested : 7/4\n"));
  ASSERT_TRUE(c.first_cause.has_value());
  const std::string remedy = fabscope::core::join(c.remedies, " ", 8);
  EXPECT_EQ(remedy.find(phase_info(Phase::Bootstrap).remedy), std::string::npos) << remedy;
  // A refused connection in bootstrap keeps it: there the phase is the advice.
  Causality net = reason(summarize_text(
      "h:1:1 [0] NCCL INFO Bootstrap: Using eth0:10.0.0.2<0>\n"
      "h:1:1 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.1<1234> failed : Connection refused\n"));
  ASSERT_TRUE(net.first_cause.has_value());
  EXPECT_NE(fabscope::core::join(net.remedies, " ", 8).find(phase_info(Phase::Bootstrap).remedy), std::string::npos);
  // The same line alone: nothing shows the phase, so no phase's advice is given.
  LogSummary alone = summarize_text(
      "h:1:1 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.1<1234> failed : Connection refused\n");
  Causality none = reason(alone);
  ASSERT_TRUE(none.first_cause.has_value());
  EXPECT_EQ(alone.failures[*none.first_cause].phase, Phase::Unknown);
  EXPECT_EQ(fabscope::core::join(none.remedies, " ", 8).find(phase_info(Phase::Bootstrap).remedy), std::string::npos);
  EXPECT_FALSE(phase_remedy_applies("rank_out_of_range"));
  EXPECT_TRUE(phase_remedy_applies("socket_connection_refused"));
}

TEST(Reasoning, OnlyConsequencesSaySoInTheVerdict) {
  Diagnosis d = diagnose(summarize_text("h:1:1 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by "
                                        "remote peer node2<42830>\n"));
  EXPECT_TRUE(d.causality.only_consequences);
  EXPECT_NE(d.verdict.find("not among the inputs"), std::string::npos) << d.verdict;
}

TEST(LineTime, ReadsTimeAndDateBeforeTheHost) {
  Line l;
  ASSERT_TRUE(parse_line("[2024-05-01 10:11:12.500] h:1:1 [0] NCCL INFO x", l));
  ASSERT_TRUE(line_time(l).has_value());
  EXPECT_DOUBLE_EQ(*line_time(l), 1714558272.5);
  ASSERT_TRUE(parse_line("Fri Aug 11 12:31:45 2023[1,0]<stdout>:tomte401:1:1 [0] x.cc:1 NCCL WARN y", l));
  EXPECT_DOUBLE_EQ(*line_time(l), 12 * 3600 + 31 * 60 + 45);
  ASSERT_TRUE(parse_line("h:1:1 [0] NCCL INFO at 10:11:12 nothing before the host", l));
  EXPECT_FALSE(line_time(l).has_value());
  ASSERT_TRUE(parse_line("99:99:99 h:1:1 [0] NCCL INFO not a time", l));
  EXPECT_FALSE(line_time(l).has_value());
}
