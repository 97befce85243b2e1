// Failures explained: completion statuses through the log analyzer's catalog, RDMA CM events,
// TCP errors, memlock, the watchdog.
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <set>
#include <thread>

#include "core/finding.hpp"
#include "core/finding_registry.hpp"
#include "rdma/findings.hpp"
#include "rdma/render.hpp"
#include "rdma/watchdog.hpp"

using namespace fabscope;
using namespace fabscope::rdma;

namespace {
Endpoint rxe1() {
  Endpoint e;
  e.device = "rxe1";
  e.port = 1;
  e.address = "10.9.0.2";
  e.netdev = "veth1";
  return e;
}
}  // namespace

TEST(RdmaFindings, CompletionError_UsesTheCatalogEntryOfTheStatus) {
  Finding f = completion_error({"client", "write bw 65536 B"}, 12, 0, 0x81, rxe1());
  EXPECT_EQ(f.id, "rdma.completion_error");
  EXPECT_EQ(f.severity, Severity::Fail);
  EXPECT_EQ(f.subject, "rxe1:1");
  EXPECT_NE(f.message.find("IBV_WC_RETRY_EXC_ERR"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("client, step write bw 65536 B"), std::string::npos) << f.message;
  EXPECT_NE(f.evidence.find("vendor_err=0x81"), std::string::npos) << f.evidence;
  EXPECT_NE(f.remedy.find("GID"), std::string::npos) << f.remedy;
  EXPECT_EQ(f.docs, "docs/rdma.md#rdma-completion_error");
}

TEST(RdmaFindings, CompletionError_UnknownStatusFallsBackToTheGenericEntry) {
  Finding f = completion_error({"server", "x"}, 19, 0, 0, rxe1());
  EXPECT_NE(f.message.find("IBV_WC_FATAL_ERR"), std::string::npos) << f.message;
  EXPECT_FALSE(f.remedy.empty());
}

TEST(RdmaFindings, CmEvents_EachHasItsIdAndRemedy) {
  struct Case {
    const char* event;
    const char* id;
    const char* remedy_part;
  } cases[] = {{"RDMA_CM_EVENT_ADDR_ERROR", "rdma.cm_addr_error", "ip route get"},
               {"RDMA_CM_EVENT_ROUTE_ERROR", "rdma.cm_route_error", "ping -I"},
               {"RDMA_CM_EVENT_UNREACHABLE", "rdma.cm_unreachable", "4791"},
               {"RDMA_CM_EVENT_REJECTED", "rdma.cm_rejected", "--server"},
               {"RDMA_CM_EVENT_CONNECT_ERROR", "rdma.cm_connect_error", "--oob tcp"}};
  for (const auto& c : cases) {
    Finding f = cm_event({"client", "rdma_connect"}, 0, c.event, -110, "10.9.0.1", rxe1());
    EXPECT_EQ(f.id, c.id) << c.event;
    EXPECT_NE(f.remedy.find(c.remedy_part), std::string::npos) << c.event << ": " << f.remedy;
    EXPECT_NE(f.evidence.find("status=-110"), std::string::npos) << f.evidence;
  }
}

TEST(RdmaFindings, TcpRefused_IsNoServerWithTheCommandToStartIt) {
  Finding f = tcp_connect("10.9.0.1", 18515, ECONNREFUSED);
  EXPECT_EQ(f.id, "rdma.no_server");
  EXPECT_NE(f.remedy.find("fabscope rdma --server --port 18515"), std::string::npos) << f.remedy;
  EXPECT_NE(f.evidence.find("ECONNREFUSED"), std::string::npos) << f.evidence;
}

TEST(RdmaFindings, TcpTimeout_NamesTheFirewallPort) {
  Finding f = tcp_connect("10.9.0.1", 18515, ETIMEDOUT);
  EXPECT_EQ(f.id, "rdma.tcp_timeout");
  EXPECT_NE(f.remedy.find("18515"), std::string::npos);
}

TEST(RdmaFindings, Memlock_QuotesNeedAndLimit) {
  Finding f = memlock({"client", "ibv_reg_mr"}, 1u << 20, 65536, ENOMEM);
  EXPECT_EQ(f.id, "rdma.memlock");
  EXPECT_NE(f.evidence.find("need=1048576 B memlock_soft=65536"), std::string::npos) << f.evidence;
  EXPECT_NE(f.remedy.find("ulimit -l"), std::string::npos);
}

TEST(RdmaFindings, ModifyQpInvalid_PointsAtTheGidIndex) {
  Finding f = verbs_call({"client", "ibv_modify_qp(RTR)"}, "ibv_modify_qp(RTR)", EINVAL, rxe1());
  EXPECT_EQ(f.id, "rdma.verbs_call");
  EXPECT_NE(f.remedy.find("GID index"), std::string::npos) << f.remedy;
}

// Every id a finding function can report is in finding_infos() (so its docs are tested with
// every registered id: tests/unit/cli/findings_docs_test.cpp), at most with its registered
// severity, linked to docs/rdma.md; and every registered id is one a function reports.
TEST(RdmaFindings, EveryReportedIdIsRegisteredAndEveryRegisteredIdIsReported) {
  const Where w{"client", "rdma_connect"};
  Finding peer = make_finding("rdma.memlock", Severity::Warn, "server", "m", "e", "r", "docs/rdma.md");
  Result r;
  r.local = rxe1();
  Endpoint here = rxe1(), there = rxe1();
  here.active_mtu = 4096;
  there.active_mtu = 1024;
  std::vector<Finding> all = {
      completion_error(w, 12, 0, 0, rxe1()),
      verbs_call(w, "ibv_modify_qp(RTR)", EINVAL, rxe1()),
      tcp_connect("h", 1, ECONNREFUSED),
      tcp_connect("h", 1, ETIMEDOUT),
      tcp_connect("h", 1, ENETUNREACH),
      tcp_resolve("h", "Name or service not known"),
      control_lost(w, "closed"),
      timeout(w, 5, "nothing"),
      memlock(w, 2 << 20, 1 << 16, ENOMEM),
      gid_index(rxe1(), 3, "fe80::1", "RoCE v2", "1"),
      port_not_active(rxe1(), "DOWN", "Disabled"),
      no_device("no RDMA device", "install rdma-core"),
      mtu_mismatch(here, there),
      low_bandwidth(r, 1.0),
      from_peer(peer, "server"),
      peer_note(peer, "server"),
      auth_refused(w),
  };
  for (const char* ev : {"RDMA_CM_EVENT_ADDR_ERROR", "RDMA_CM_EVENT_ROUTE_ERROR", "RDMA_CM_EVENT_UNREACHABLE",
                         "RDMA_CM_EVENT_REJECTED", "RDMA_CM_EVENT_CONNECT_ERROR", "RDMA_CM_EVENT_DISCONNECTED"})
    all.push_back(cm_event(w, 0, ev, -110, "10.9.0.1", rxe1()));
  std::set<std::string> reported;
  for (const auto& f : all) {
    const FindingInfo* info = find_finding(finding_infos(), f.id);
    ASSERT_NE(info, nullptr) << f.id << " is not in rdma::finding_infos()";
    EXPECT_EQ(info->family, "rdma");
    EXPECT_LE(f.severity, info->severity) << f.id;
    EXPECT_EQ(f.docs, docs_anchor(f.id, info->docs)) << f.id;
    reported.insert(f.id);
  }
  for (const auto& info : finding_infos()) EXPECT_TRUE(reported.count(info.id)) << info.id << " is never reported";
  EXPECT_GE(reported.size(), 15u);
}

TEST(RdmaFindings, Watchdog_ThrowsTimeoutNamingSideAndStep) {
  Watchdog wd("server", 0.5);
  // A check within the timeout passes. Judged only when the test itself saw less than the
  // timeout go by: a loaded machine may stall this thread past it, and then throwing is right.
  auto before = std::chrono::steady_clock::now();
  wd.begin("waiting for the next size");
  wd.note("12 of 20 sends complete");
  bool threw = false;
  try {
    wd.check();
  } catch (const Failure&) {
    threw = true;
  }
  if (std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count() < 0.5) {
    EXPECT_FALSE(threw);
  }
  while (wd.remaining_s() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  try {
    wd.check();
    FAIL() << "no throw";
  } catch (const Failure& e) {
    EXPECT_EQ(e.finding.id, "rdma.timeout");
    EXPECT_NE(e.finding.message.find("server, step waiting for the next size"), std::string::npos)
        << e.finding.message;
    EXPECT_EQ(e.finding.evidence, "12 of 20 sends complete");
  }
}

// A peer's names and whatever it said reach the server's terminal: as text, never as escape
// sequences (ESC ] 0 ; sets the window title, ESC [ 2 J clears the screen, BEL rings).
TEST(RdmaText, NothingFromThePeerReachesTheTerminalAsAControlSequence) {
  Result r;
  r.role = "server";
  r.local = rxe1();
  r.remote = rxe1();
  r.remote.host = "evil\x1b]0;owned\x07host";
  r.remote.device = "rxe\x1b[2J";
  r.verdict = "failed";
  r.findings.push_back(make_finding("rdma.peer_error", Severity::Fail, "peer",
                                    "the peer said: \x1b[31mstop\x1b[0m", "text=\x9b" "31m", "none"));
  const std::string text = render_text(r);
  for (char c : text) {
    const auto b = static_cast<unsigned char>(c);
    EXPECT_TRUE(b >= 0x20 || c == '\n') << "control byte " << int(b) << " in:\n" << text;
  }
  EXPECT_NE(text.find("evil?]0;owned?host"), std::string::npos) << text;
  EXPECT_NE(text.find("the peer said: ?[31mstop?[0m"), std::string::npos) << text;
}
