// NCCL's RAS report reader (src/job/ras.cpp): the text and JSON reports, hostile variants, the
// findings, and every real capture under tests/fixtures/ras-h200x4 when it is there.
//
// The reports written out below are CONSTRUCTED, not captured: each is laid out line by line as
// NCCL's RAS service prints it (the format strings of src/ras/client_support.cc at the tag
// v2.28.3-1, and for JSON at v2.28.7-1/v2.28.9-1), with values chosen for the case. Real captures
// replace them as evidence once they are in tests/fixtures/ras-h200x4 (the test at the end reads
// every file there).
#include "job/ras.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "core/error.hpp"
#include "support/fixtures.hpp"

using namespace fabscope;
using namespace fabscope::job;

namespace {

// CONSTRUCTED: a healthy single-node job of 4 processes with one GPU each (2.28.3 text).
const char* kHealthy =
    "NCCL version 2.28.3+cuda12.9 compiled with CUDA 12.9\n"
    "CUDA runtime version 12090, driver version 13000\n"
    "\n"
    "Job summary\n"
    "===========\n"
    "\n"
    "  Nodes  Processes         GPUs  Processes     GPUs\n"
    "(total)   per node  per process    (total)  (total)\n"
    "      1          4            1          4        4\n"
    "\n"
    "Communicators... (0.00s)\n"
    "=============\n"
    "\n"
    "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
    "    #  in group  per comm  per node  per comm  in group\n"
    "    0         1         1         4         4         4   RUNNING      OK\n"
    "\n"
    "Errors\n"
    "======\n"
    "\n"
    "Warnings\n"
    "========\n"
    "\n";

// CONSTRUCTED: rank 3's process stopped (its RAS thread with it): no data from it, a time-out.
const char* kStopped =
    "NCCL version 2.28.3+cuda12.9 compiled with CUDA 12.9\n"
    "CUDA runtime version 12090, driver version 13000\n"
    "\n"
    "Job summary\n"
    "===========\n"
    "\n"
    "  Nodes  Processes         GPUs  Processes     GPUs\n"
    "(total)   per node  per process    (total)  (total)\n"
    "      1          4            1          4        4\n"
    "\n"
    "Communicators... (5.01s)\n"
    "=============\n"
    "\n"
    "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
    "    #  in group  per comm  per node  per comm  in group\n"
    "    0         1         1         3         4         3   RUNNING  INCOMPLETE\n"
    "\n"
    "Errors\n"
    "======\n"
    "\n"
    "INCOMPLETE\n"
    "  Missing communicator data from 1 job process\n"
    "  Process 4243 on node 10.0.0.5 managing GPU 3\n"
    "\n"
    "#0-0 (7a3f0c2e9b1d4e55) INCOMPLETE\n"
    "  Missing communicator data from 1 rank\n"
    "  Rank 3 -- GPU 3 managed by process 4243 on node 10.0.0.5\n"
    "\n"
    "Warnings\n"
    "========\n"
    "\n"
    "TIMEOUT\n"
    "  Encountered 1 communication timeout while gathering communicator data\n"
    "\n";

// CONSTRUCTED: rank 2 behind in all-reduces; a second communicator with an asynchronous error,
// a status that differs and a dead process (two nodes, uneven summary).
const char* kTrouble =
    "NCCL version 2.28.3+cuda12.9 compiled with CUDA 12.9\n"
    "CUDA runtime version 12090, driver version 13000\n"
    "\n"
    "Job summary\n"
    "===========\n"
    "\n"
    "  Nodes  Processes\n"
    "          per node\n"
    "      1          4\n"
    "      1          3\n"
    "\n"
    "         Processes         GPUs\n"
    "                    per process\n"
    "                 7            1\n"
    "\n"
    "  Nodes  Processes         GPUs\n"
    "(total)    (total)      (total)\n"
    "      2          7            7\n"
    "\n"
    "Communicators... (10.00s)\n"
    "=============\n"
    "\n"
    "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
    "    #  in group  per comm  per node  per comm  in group\n"
    "    0         1         2       3-4         8         7   RUNNING  INCOMPLETE,MISMATCH\n"
    "    1         1         1         4         4         4     ABORT  ERROR,MISMATCH\n"
    "\n"
    "Errors\n"
    "======\n"
    "\n"
    "DEAD\n"
    "  1 job process is considered dead (unreachable via the RAS network)\n"
    "  Process 777 on node 10.0.0.6 managing GPU 0\n"
    "\n"
    "#0-0 (00000000000abcde) INCOMPLETE\n"
    "  Missing communicator data from 1 rank\n"
    "  Rank 4 -- [process information not found]\n"
    "\n"
    "#1-0 (1111222233334444) ERROR\n"
    "  Asynchronous errors on 2 ranks\n"
    "  Rank 1 reported Remote process error -- GPU 1 managed by process 4241 on node 10.0.0.5\n"
    "  Rank 3 reported System error -- GPU 3 (NVML 5) managed by process 4243 on node 10.0.0.5\n"
    "\n"
    "Warnings\n"
    "========\n"
    "\n"
    "#0-0 (00000000000abcde) MISMATCH\n"
    "  Communicator ranks have different AllReduce operation counts\n"
    "  6 ranks have launched up to operation 1200\n"
    "  Rank 2 has launched up to operation 1187 -- GPU 2 managed by process 4242 on node 10.0.0.5\n"
    "\n"
    "#1-0 (1111222233334444) MISMATCH\n"
    "  Communicator ranks have different status\n"
    "  3 ranks have status RUNNING\n"
    "  Rank 0 has status ABORT -- GPU 0 managed by process 4240 on node 10.0.0.5\n"
    "  Communicator ranks have different Broadcast operation counts\n"
    "  2 ranks have launched up to operation 9\n"
    "  Rank 0 -- GPU 0 managed by process 4240 on node 10.0.0.5\n"
    "  Rank 1 -- GPU 1 managed by process 4241 on node 10.0.0.5\n"
    "  2 ranks have not launched any operations\n"
    "  Rank 2 -- GPU 2 managed by process 4242 on node 10.0.0.5\n"
    "  Rank 3 -- GPU 3 (NVML 5) managed by process 4243 on node 10.0.0.5\n"
    "\n";

// CONSTRUCTED: the JSON of 2.28.9 for a 4-rank communicator with rank 3 unresponsive and rank 2
// behind; the missing rank printed without the comma after "nvml_dev", as 2.28.7-2.28.9 do.
std::string json_rank(int rank, int pid, long long ar) {
  std::string s =
      "        {\n"
      "          \"rank\": " +
      std::to_string(rank) +
      ",\n"
      "          \"host\": \"10.0.0.5\",\n"
      "          \"pid\": " +
      std::to_string(pid) +
      ",\n"
      "          \"cuda_dev\": " +
      std::to_string(rank) +
      ",\n"
      "          \"nvml_dev\": " +
      std::to_string(rank) +
      ",\n"
      "          \"status\": {\n"
      "            \"init_state\": 0,\n"
      "            \"async_error\": 0,\n"
      "            \"finalize_called\": false,\n"
      "            \"destroy_flag\": false,\n"
      "            \"abort_flag\": false\n"
      "          },\n"
      "          \"collective_counts\": {\n"
      "            \"Broadcast\": 1,\n"
      "            \"Reduce\": 0,\n"
      "            \"AllGather\": 0,\n"
      "            \"ReduceScatter\": 0,\n"
      "            \"AllReduce\": " +
      std::to_string(ar) +
      "\n"
      "          }\n"
      "        }";
  return s;
}

std::string json_report(bool missing_comma) {
  std::string s =
      "{\n"
      "  \"nccl_version\": \"2.28.9+cuda13.0\",\n"
      "  \"cuda_runtime_version\": 13000,\n"
      "  \"cuda_driver_version\": 13000,\n"
      "  \"timestamp\": \"2026-11-28 21:00:00\",\n"
      "  \"communicators_count\": 1,\n"
      "  \"communicators\": [\n"
      "    {\n"
      "      \"hash\": \"0xabcde\",\n"
      "      \"secondary_hash\": \"0x12:0x34\",\n"
      "      \"size\": 4,\n"
      "      \"ranks_count\": 3,\n"
      "      \"missing_ranks_count\": 1,\n"
      "      \"ranks\": [\n" +
      json_rank(0, 4240, 500) + ",\n" + json_rank(1, 4241, 500) + ",\n" + json_rank(2, 4242, 497) +
      "\n"
      "      ],\n"
      "      \"missing_ranks\": [\n"
      "        {\n"
      "          \"rank\": 3,\n"
      "          \"host\": \"10.0.0.5\",\n"
      "          \"pid\": 4243,\n"
      "          \"cuda_dev\": 3,\n" +
      (missing_comma ? "          \"nvml_dev\": 3\n" : "          \"nvml_dev\": 3,\n") +
      "          \"status\": {\n"
      "            \"unresponsive\": true,\n"
      "            \"considered_dead\": false\n"
      "          }\n"
      "        }\n"
      "      ]\n"
      "    }\n"
      "  ],\n"
      "  \"ras\": {\n"
      "    \"collection_time_sec\": 5.012,\n"
      "    \"timeouts_count\": 1\n"
      "  }\n"
      "}\n";
  return s;
}

int count_id(const std::vector<Finding>& f, const std::string& id) {
  return static_cast<int>(std::count_if(f.begin(), f.end(), [&](const Finding& x) { return x.id == id; }));
}
const Finding* find_id(const std::vector<Finding>& f, const std::string& id) {
  for (const auto& x : f)
    if (x.id == id) return &x;
  return nullptr;
}

}  // namespace

TEST(RasText, HealthyReportReadsTheSummaryAndNamesNothing) {
  RasReport r = parse_ras_report(kHealthy, "test");
  EXPECT_EQ(r.format, "text");
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.nccl_version, "2.28.3+cuda12.9");
  EXPECT_EQ(r.cuda_compiled, "12.9");
  EXPECT_EQ(r.cuda_runtime, 12090);
  EXPECT_EQ(r.cuda_driver, 13000);
  EXPECT_EQ(r.nodes, 1);
  EXPECT_EQ(r.processes, 4);
  EXPECT_EQ(r.gpus, 4);
  EXPECT_DOUBLE_EQ(r.collection_s, 0.0);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].ranks_per_comm, 4);
  EXPECT_EQ(r.groups[0].status, "RUNNING");
  EXPECT_EQ(r.groups[0].errors, "OK");
  EXPECT_EQ(r.comms_total, 1);
  EXPECT_TRUE(r.comms.empty());
  EXPECT_TRUE(r.other.empty()) << r.other.front();
  EXPECT_TRUE(ras_findings(r).empty());
}

TEST(RasText, StoppedRankIsMissingWithItsProcessAndHost) {
  RasReport r = parse_ras_report(kStopped, "test");
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.processes_missing, 1);
  ASSERT_EQ(r.missing_processes.size(), 1u);
  EXPECT_EQ(r.missing_processes[0].pid, 4243);
  EXPECT_EQ(r.missing_processes[0].host, "10.0.0.5");
  EXPECT_EQ(r.missing_processes[0].gpus, "3");
  EXPECT_EQ(r.timeouts, 1);
  EXPECT_DOUBLE_EQ(r.collection_s, 5.01);
  ASSERT_EQ(r.comms.size(), 1u);
  const RasComm& c = r.comms[0];
  EXPECT_EQ(c.hash, "7a3f0c2e9b1d4e55");
  EXPECT_EQ(c.label, "#0-0");
  EXPECT_EQ(c.size, 4);
  EXPECT_EQ(c.missing, 1);
  ASSERT_EQ(c.missing_ranks.size(), 1u);
  EXPECT_EQ(c.missing_ranks[0].rank, 3);
  EXPECT_EQ(c.missing_ranks[0].gpu, "3");
  EXPECT_EQ(c.missing_ranks[0].pid, 4243);
  EXPECT_EQ(c.missing_ranks[0].host, "10.0.0.5");
  EXPECT_TRUE(r.other.empty()) << r.other.front();

  auto f = ras_findings(r);
  EXPECT_EQ(count_id(f, "job.ras_missing"), 2);  // the job's process and the communicator's rank
  EXPECT_EQ(count_id(f, "job.ras_error"), 1);    // the time-out
  const Finding* m = nullptr;
  for (const auto& x : f)
    if (x.id == "job.ras_missing" && x.subject == "comm 7a3f0c2e9b1d4e55") m = &x;
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->severity, Severity::Fail);
  EXPECT_NE(m->evidence.find("1 of 4 ranks without data"), std::string::npos) << m->evidence;
  EXPECT_NE(m->evidence.find("rank 3 (GPU 3 pid 4243 on 10.0.0.5)"), std::string::npos) << m->evidence;
  EXPECT_NE(m->remedy.find("pid 4243 on 10.0.0.5"), std::string::npos) << m->remedy;
  EXPECT_NE(m->remedy.find("dmesg"), std::string::npos);
  EXPECT_EQ(m->docs, "docs/job.md#job-ras_missing");
}

TEST(RasText, MismatchErrorsDeadAndStatusAreRead) {
  RasReport r = parse_ras_report(kTrouble, "test");
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.nodes, 2);
  EXPECT_EQ(r.processes, 7);
  EXPECT_EQ(r.gpus, 7);
  EXPECT_EQ(r.processes_dead, 1);
  ASSERT_EQ(r.dead_processes.size(), 1u);
  EXPECT_EQ(r.dead_processes[0].pid, 777);
  ASSERT_EQ(r.groups.size(), 2u);
  EXPECT_EQ(r.groups[0].ranks_per_node, "3-4");
  EXPECT_EQ(r.groups[1].errors, "ERROR,MISMATCH");
  ASSERT_EQ(r.comms.size(), 2u);
  const RasComm& a = r.comms[0];
  EXPECT_EQ(a.hash, "00000000000abcde");
  EXPECT_EQ(a.size, 8);
  EXPECT_EQ(a.missing, 1);
  ASSERT_EQ(a.missing_ranks.size(), 1u);
  EXPECT_EQ(a.missing_ranks[0].rank, 4);
  EXPECT_EQ(a.missing_ranks[0].pid, -1);  // "[process information not found]"
  ASSERT_EQ(a.op_mismatches.size(), 1u);
  const RasOpMismatch& m = a.op_mismatches[0];
  EXPECT_EQ(m.op, "AllReduce");
  ASSERT_EQ(m.groups.size(), 2u);
  EXPECT_EQ(m.groups[0].count, 1200u);
  EXPECT_EQ(m.groups[0].nranks, 6);
  EXPECT_EQ(m.groups[1].count, 1187u);
  ASSERT_EQ(m.groups[1].ranks.size(), 1u);
  EXPECT_EQ(m.groups[1].ranks[0].rank, 2);
  EXPECT_EQ(m.groups[1].ranks[0].pid, 4242);
  EXPECT_EQ(m.max_count(), 1200u);
  EXPECT_EQ(m.ranks_behind(), 1);

  const RasComm& b = r.comms[1];
  EXPECT_EQ(b.async_errors, 2);
  ASSERT_EQ(b.error_ranks.size(), 2u);
  EXPECT_EQ(b.error_ranks[0].state, "asynchronous: Remote process error");
  EXPECT_EQ(b.error_ranks[1].gpu, "3 (NVML 5)");
  EXPECT_TRUE(b.status_differs);
  ASSERT_EQ(b.status_ranks.size(), 1u);
  EXPECT_EQ(b.status_ranks[0].state, "ABORT");
  ASSERT_EQ(b.op_mismatches.size(), 1u);
  ASSERT_EQ(b.op_mismatches[0].groups.size(), 2u);
  EXPECT_EQ(b.op_mismatches[0].groups[1].count, 0u);
  EXPECT_EQ(b.op_mismatches[0].groups[1].ranks.size(), 2u);
  EXPECT_EQ(b.op_mismatches[0].ranks_behind(), 2);
  EXPECT_TRUE(r.other.empty()) << r.other.front();

  auto f = ras_findings(r);
  EXPECT_EQ(count_id(f, "job.ras_mismatch"), 2);
  EXPECT_EQ(count_id(f, "job.ras_error"), 1);
  EXPECT_EQ(count_id(f, "job.ras_missing"), 2);  // the dead process, the missing rank
  const Finding* mm = find_id(f, "job.ras_mismatch");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->severity, Severity::Warn);
  EXPECT_NE(mm->evidence.find("AllReduce launched: 6 ranks at 1200, 1 rank at 1187 (rank 2"), std::string::npos)
      << mm->evidence;
  EXPECT_NE(mm->remedy.find("pid 4242 on 10.0.0.5"), std::string::npos) << mm->remedy;
  const Finding* e = find_id(f, "job.ras_error");
  ASSERT_NE(e, nullptr);
  EXPECT_NE(e->evidence.find("System error"), std::string::npos) << e->evidence;
  EXPECT_NE(e->remedy.find("pid 4241 on 10.0.0.5"), std::string::npos) << e->remedy;
}

TEST(RasText, ReportOfNccl224IsRead) {
  // CONSTRUCTED: NCCL 2.24 listed missing and unknown ranks on one line and counted every
  // collective kind together.
  std::string t = std::string(kHealthy);
  t.replace(t.find("Warnings"), 0,
            "#0-0 (0000000000000001) INCOMPLETE\n  Missing communicator data from 2 ranks\n"
            "  The missing ranks: 1,3\n\n");
  t += "#0-0 (0000000000000001) MISMATCH\n  Communicator ranks have different status\n"
       "  2 ranks have status RUNNING\n  2 ranks have status UNKNOWN\n  The unknown ranks: 1,3\n"
       "  Communicator ranks have different collective operation counts\n"
       "  Rank 0 has launched up to operation 12 -- GPU 0 managed by process 10 on node 10.0.0.1\n"
       "  Rank 2 has launched up to operation 11 -- GPU 2 managed by process 12 on node 10.0.0.1\n\n";
  RasReport r = parse_ras_report(t, "t");
  ASSERT_EQ(r.comms.size(), 1u);
  EXPECT_EQ(r.comms[0].missing, 2);
  ASSERT_EQ(r.comms[0].missing_ranks.size(), 2u);
  EXPECT_EQ(r.comms[0].missing_ranks[1].rank, 3);
  ASSERT_EQ(r.comms[0].status_ranks.size(), 2u);
  EXPECT_EQ(r.comms[0].status_ranks[0].state, "UNKNOWN");
  ASSERT_EQ(r.comms[0].op_mismatches.size(), 1u);
  EXPECT_EQ(r.comms[0].op_mismatches[0].op, "collective");  // 2.24 counted all kinds together
  EXPECT_EQ(r.comms[0].op_mismatches[0].ranks_behind(), 1);
  EXPECT_TRUE(r.other.empty()) << r.other.front();
}

TEST(RasText, CutReportIsIncompleteAndSaysSo) {
  std::string t(kStopped);
  t.resize(t.find("Warnings"));
  RasReport r = parse_ras_report(t, "t");
  EXPECT_FALSE(r.complete);
  auto f = ras_findings(r);
  bool said = false;
  for (const auto& x : f) said |= x.id == "job.ras_error" && x.message.find("ended before") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(RasText, HostileLinesAreKeptPrintableAndBounded) {
  std::string t = "\x1b[2JNCCL version \x1b]0;pwn\x07 compiled with CUDA 9\n";
  t += std::string(100000, 'A') + "\n";
  t += "Communicators... (nan s)\n";
  t += "    0  99999999999999999999  1  1  1  1  RUNNING  OK\n";
  t += "Errors\n======\n";
  t += "#0-0 (zzzz) INCOMPLETE\n";
  t += "#0-0 (0123456789abcdef0123) INCOMPLETE\n";
  t += "#0-1 (00000000000000ff) INCOMPLETE\n  Missing communicator data from 99999999999999999999 ranks\n";
  t += "  Rank 99999999999 -- GPU 1 managed by process 1 on node x\n";
  t += "  Rank 1 -- GPU 1 managed by process -5 on node \x1b[31mred\n";
  t += std::string("  Rank 2 -- GPU ") + '\0' + " managed by process 3 on node h\n";
  for (int i = 0; i < 5000; i++) t += "  Rank " + std::to_string(i) + " -- GPU 0 managed by process 1 on node h\n";
  for (int i = 0; i < 5000; i++) t += "junk line " + std::to_string(i) + "\n";
  RasReport r = parse_ras_report(t, "hostile");
  EXPECT_EQ(r.nccl_version.find('\x1b'), std::string::npos);
  EXPECT_LE(r.nccl_version.size(), 63u);
  EXPECT_LT(r.collection_s, 0);
  EXPECT_TRUE(r.groups.empty());
  ASSERT_EQ(r.comms.size(), 1u);     // the two bad hashes are not communicators
  EXPECT_EQ(r.comms[0].missing, 0);  // the count out of range is dropped
  EXPECT_LE(r.comms[0].missing_ranks.size(), 256u);
  for (const auto& x : r.comms[0].missing_ranks) {
    EXPECT_GE(x.rank, 0);
    EXPECT_EQ(x.host.find('\x1b'), std::string::npos);
  }
  EXPECT_LE(r.other.size(), 200u);
  EXPECT_LE(r.warnings.size(), 2000u);
  for (const auto& o : r.other) EXPECT_LE(o.size(), 203u);
  (void)ras_findings(r);
  (void)dump_json(ras_report_to_json(r));
}

TEST(RasJson, ReportWithTheMissingCommaIsRepairedAndRead) {
  RasReport r = parse_ras_report(json_report(true), "json");
  EXPECT_EQ(r.format, "json");
  EXPECT_TRUE(r.complete);
  EXPECT_TRUE(r.json_repaired);
  EXPECT_EQ(r.nccl_version, "2.28.9+cuda13.0");
  EXPECT_EQ(r.cuda_runtime, 13000);
  EXPECT_EQ(r.comms_total, 1);
  EXPECT_EQ(r.timeouts, 1);
  EXPECT_DOUBLE_EQ(r.collection_s, 5.012);
  ASSERT_EQ(r.comms.size(), 1u);
  const RasComm& c = r.comms[0];
  EXPECT_EQ(c.hash, "00000000000abcde");  // as the text report prints it
  EXPECT_EQ(c.size, 4);
  EXPECT_EQ(c.ranks_reported, 3);
  EXPECT_EQ(c.missing, 1);
  ASSERT_EQ(c.missing_ranks.size(), 1u);
  EXPECT_EQ(c.missing_ranks[0].pid, 4243);
  EXPECT_EQ(c.missing_ranks[0].state, "not responding");
  ASSERT_EQ(c.op_mismatches.size(), 1u);
  EXPECT_EQ(c.op_mismatches[0].op, "AllReduce");
  EXPECT_EQ(c.op_mismatches[0].max_count(), 500u);
  EXPECT_EQ(c.op_mismatches[0].ranks_behind(), 1);
  EXPECT_EQ(c.op_mismatches[0].groups[1].ranks[0].rank, 2);
  EXPECT_FALSE(c.status_differs);
  auto f = ras_findings(r);
  EXPECT_EQ(count_id(f, "job.ras_missing"), 1);
  EXPECT_EQ(count_id(f, "job.ras_mismatch"), 1);
  EXPECT_EQ(count_id(f, "job.ras_error"), 1);
}

TEST(RasJson, WellFormedReportNeedsNoRepair) {
  RasReport r = parse_ras_report(json_report(false), "json");
  EXPECT_TRUE(r.complete);
  EXPECT_FALSE(r.json_repaired);
  EXPECT_EQ(r.comms.size(), 1u);
}

TEST(RasJson, HostileDocumentsAreRefusedOrBounded) {
  for (std::string doc : {std::string("{"), std::string(100000, '['), std::string("{\"communicators\": 5}"),
                          std::string("{\"communicators\": [1, \"x\", {\"hash\": 7, \"size\": -1, \"ranks\": {}}]}"),
                          std::string("{\"nccl_version\": \"\\u001b[31m\", \"cuda_runtime_version\": 1e308}"),
                          std::string("{\"communicators\": [{\"ranks\": [{\"rank\": 18446744073709551615, "
                                      "\"collective_counts\": {\"AllReduce\": -1}}]}]}")}) {
    std::string in = doc;
    if (in[0] == '[') in.insert(0, "{\"a\":");
    RasReport r = parse_ras_report(in, "hostile");
    EXPECT_EQ(r.format, "json");
    EXPECT_EQ(r.nccl_version.find('\x1b'), std::string::npos);
    EXPECT_EQ(r.cuda_runtime, -1);
    for (const auto& c : r.comms) EXPECT_TRUE(c.op_mismatches.empty());
    (void)ras_findings(r);
    (void)dump_json(ras_report_to_json(r));
  }
  EXPECT_FALSE(parse_ras_report("{", "t").complete);
}

TEST(RasJson, LargeJobKeepsTheRankBehindAndStaysBounded) {
  // 5,000 ranks, rank 4321 one all-reduce behind; two other kinds in step.
  std::string doc =
      "{\"nccl_version\": \"2.28.9\", \"communicators\": [{\"hash\": \"0x1\", \"size\": 5000, \"ranks\": [";
  for (int i = 0; i < 5000; i++) {
    if (i) doc += ",";
    doc += "{\"rank\": " + std::to_string(i) + ", \"host\": \"10.0." + std::to_string(i / 8) +
           ".1\", \"pid\": " + std::to_string(1000 + i) + ", \"cuda_dev\": " + std::to_string(i % 8) +
           ", \"nvml_dev\": " + std::to_string(i % 8) +
           ", \"collective_counts\": {\"Broadcast\": 1, \"AllGather\": 7, \"AllReduce\": " +
           std::to_string(i == 4321 ? 99 : 100) + "}}";
  }
  doc += "], \"missing_ranks\": []}]}";
  RasReport r = parse_ras_report(doc, "big");
  ASSERT_EQ(r.comms.size(), 1u);
  ASSERT_EQ(r.comms[0].op_mismatches.size(), 1u);
  const RasOpMismatch& m = r.comms[0].op_mismatches[0];
  EXPECT_EQ(m.op, "AllReduce");
  ASSERT_EQ(m.groups.size(), 2u);
  EXPECT_EQ(m.groups[0].nranks, 4999);
  EXPECT_LE(m.groups[0].ranks.size(), 16u);
  EXPECT_EQ(m.ranks_behind(), 1);
  ASSERT_EQ(m.groups[1].ranks.size(), 1u);
  EXPECT_EQ(m.groups[1].ranks[0].rank, 4321);
  EXPECT_EQ(m.groups[1].ranks[0].host, "10.0.540.1");
  auto f = ras_findings(r);
  ASSERT_EQ(count_id(f, "job.ras_mismatch"), 1);
  EXPECT_NE(find_id(f, "job.ras_mismatch")->remedy.find("pid 5321 on 10.0.540.1"), std::string::npos);
  EXPECT_LT(dump_json(ras_report_to_json(r)).size(), 64u * 1024);
}

TEST(RasJson, DeadAndNocommRanksAreToldApart) {
  std::string j = json_report(false);
  j.replace(j.find("\"considered_dead\": false"), 24, "\"considered_dead\": true");
  RasReport r = parse_ras_report(j, "j");
  ASSERT_EQ(r.dead_processes.size(), 1u);
  EXPECT_EQ(r.dead_processes[0].pid, 4243);
  EXPECT_EQ(r.comms[0].missing_ranks[0].state, "considered dead");
  j = json_report(false);
  j.replace(j.find("\"unresponsive\": true"), 20, "\"unresponsive\": false");
  r = parse_ras_report(j, "j");
  EXPECT_EQ(r.comms[0].missing, 0);
  EXPECT_EQ(r.comms[0].nocomm, 1);
  EXPECT_TRUE(r.comms[0].status_differs);
  EXPECT_EQ(count_id(ras_findings(r), "job.ras_missing"), 0);
  EXPECT_EQ(count_id(ras_findings(r), "job.ras_mismatch"), 1);
}

TEST(RasJsonOut, SchemaAndFindingsAreThere) {
  json j = ras_report_to_json(parse_ras_report(kStopped, "localhost:28028"));
  EXPECT_EQ(j["schema"], "fabscope.job-ras");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["processes"], 4);
  EXPECT_EQ(j["communicators"][0]["missing_ranks"][0]["pid"], 4243);
  EXPECT_EQ(j["findings"].size(), 3u);
  EXPECT_TRUE(j["cuda_driver"].is_number());
}

TEST(RasAddress, FormsAreParsed) {
  EXPECT_EQ(parse_ras_address("localhost:28028").host, "localhost");
  EXPECT_EQ(parse_ras_address("10.1.2.3:9").port, 9);
  auto v6 = parse_ras_address("[::1]:28029");
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.port, 28029);
  EXPECT_EQ(parse_ras_address("[fe80::1%eth0]").port, kRasDefaultPort);
  auto bare = parse_ras_address("28030");
  EXPECT_EQ(bare.host, "localhost");
  EXPECT_EQ(bare.port, 28030);
  EXPECT_EQ(parse_ras_address("node7").port, kRasDefaultPort);
  EXPECT_EQ(parse_ras_address("fd00::5").host, "fd00::5");
  for (const char* bad : {"", "host:0", "host:65536", "host:x", "[::1", "[::1]x", ":28028", "a b:1", "[]:1", "h:-1"})
    EXPECT_THROW(parse_ras_address(bad), Error) << bad;
}

TEST(RasFetch, RefusedPortIsAClearError) {
  // A port nobody listens on: a listener bound then closed gives one.
  RasQueryOptions o;
  o.address = "127.0.0.1:1";
  o.timeout_s = 2;
  try {
    (void)ras_fetch(o);
    FAIL() << "no error";
  } catch (const Error& e) {
    std::string w = e.what();
    EXPECT_NE(w.find("NCCL RAS at 127.0.0.1:1"), std::string::npos) << w;
    EXPECT_NE(w.find("refused"), std::string::npos) << w;
  }
}

TEST(RasFetch, BadOptionsAreRefused) {
  RasQueryOptions o;
  o.timeout_s = 0;
  EXPECT_THROW(ras_fetch(o), Error);
  o = {};
  o.format = "xml";
  EXPECT_THROW(ras_fetch(o), Error);
  o = {};
  o.collective_timeout_s = -1;
  EXPECT_THROW(ras_fetch(o), Error);
}

// ras_fetch against servers on loopback, each a thread of this test that does one thing.
namespace {
class LoopServer {
 public:
  // handler(fd, connection number) runs for each connection accepted; the fd is closed after.
  explicit LoopServer(std::function<void(int, int)> handler) : handler_(std::move(handler)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 16);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      for (int n = 0;; n++) {
        pollfd p{fd_, POLLIN, 0};
        while (!stop_ && ::poll(&p, 1, 50) == 0) {
        }
        if (stop_) return;
        int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0) return;
        conns_.emplace_back([this, c, n] {
          handler_(c, n);
          ::close(c);
        });
      }
    });
  }
  ~LoopServer() {
    stop_ = true;
    thread_.join();
    for (auto& t : conns_) t.join();
    ::close(fd_);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  bool stopping() const { return stop_; }

 private:
  std::function<void(int, int)> handler_;
  int fd_ = -1, port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<std::thread> conns_;
};

std::string read_line_from(int fd) {
  std::string l;
  char ch;
  while (::recv(fd, &ch, 1, 0) == 1 && ch != '\n') l += ch;
  return l;
}
void say(int fd, const std::string& s) { (void)::send(fd, s.data(), s.size(), MSG_NOSIGNAL); }
// Waits (bounded) for the client to close.
void until_closed(int fd) {
  char b[256];
  pollfd p{fd, POLLIN, 0};
  for (int i = 0; i < 200 && ::poll(&p, 1, 50) >= 0; i++)
    if ((p.revents & POLLIN) && ::recv(fd, b, sizeof b, 0) <= 0) return;
}

// A text server as NCCL's: protocol, OK to TIMEOUT, ERROR to SET FORMAT, the report to STATUS.
// The commands it got are appended to `got`.
std::function<void(int, int)> text_server(const std::string& report, std::shared_ptr<std::vector<std::string>> got) {
  return [report, got](int fd, int) {
    while (true) {
      std::string cmd = read_line_from(fd);
      if (cmd.empty()) return;
      got->push_back(cmd);
      if (cmd.rfind("CLIENT PROTOCOL ", 0) == 0)
        say(fd, "SERVER PROTOCOL 2\n");
      else if (cmd.rfind("TIMEOUT ", 0) == 0)
        say(fd, "OK\n");
      else if (cmd == "STATUS" || cmd == "VERBOSE STATUS") {
        say(fd, report);
        return;
      } else
        say(fd, "ERROR: Unknown command " + cmd + "\n");
    }
  };
}

std::string fetch_error(const RasQueryOptions& o) {
  try {
    (void)ras_fetch(o);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(RasFetch, SpeaksTheProtocolAndReturnsTheReport) {
  auto got = std::make_shared<std::vector<std::string>>();
  LoopServer srv(text_server(kHealthy, got));
  RasQueryOptions o;
  o.address = srv.address();
  o.timeout_s = 10;
  o.verbose = true;
  o.collective_timeout_s = 3;
  o.format = "auto";
  EXPECT_EQ(ras_fetch(o), kHealthy);
  std::vector<std::string> want = {"CLIENT PROTOCOL 2", "TIMEOUT 3", "SET FORMAT json", "VERBOSE STATUS"};
  EXPECT_EQ(*got, want);
}

TEST(RasFetch, JsonAskedOfAServerWithoutItIsAnError) {
  auto got = std::make_shared<std::vector<std::string>>();
  LoopServer srv(text_server(kHealthy, got));
  RasQueryOptions o;
  o.address = srv.address();
  o.format = "json";
  std::string e = fetch_error(o);
  EXPECT_NE(e.find("does not write JSON"), std::string::npos) << e;
  EXPECT_NE(e.find("ERROR: Unknown command SET FORMAT json"), std::string::npos) << e;
}

TEST(RasFetch, HostileServersAreClearErrors) {
  struct Case {
    const char* name;
    std::function<void(int, int)> handler;
    const char* words;
  };
  std::vector<Case> cases = {
      {"silent", [](int fd, int) { until_closed(fd); }, "no answer to the handshake"},
      {"garbage",
       [](int fd, int) {
         (void)read_line_from(fd);
         say(fd, std::string("HTTP/1.1 400 Bad\x1b[31m\r\n") + '\0' + "\xff\n");
         until_closed(fd);
       },
       "not a RAS server: its first line is \"HTTP/1.1 400 Bad?[31m\""},
      {"wrongproto",
       [](int fd, int) {
         (void)read_line_from(fd);
         say(fd, "SERVER PROTOCOL banana\n");
         until_closed(fd);
       },
       "not a RAS server"},
      {"closes at once", [](int, int) {}, "closed the connection without a word"},
      {"trickle",
       [](int fd, int) {
         (void)read_line_from(fd);
         for (char ch : std::string("SERVER PROTOCOL 2\n")) {
           say(fd, std::string(1, ch));
           pollfd p{fd, POLLIN, 0};
           if (::poll(&p, 1, 1000) > 0) return;  // the client gave up
         }
       },
       "timed out after"},
      {"midclose",
       [](int fd, int) {
         (void)read_line_from(fd);
         say(fd, "SERVER PROTOCOL 2\n");
         (void)read_line_from(fd);
         say(fd, std::string(kStopped).substr(0, 300));
       },
       "before the report's end"},
      {"endless",
       [](int fd, int) {
         (void)read_line_from(fd);
         say(fd, "SERVER PROTOCOL 2\n");
         (void)read_line_from(fd);
         std::string chunk(65536, 'x');
         for (int i = 0; i < 64; i++)
           if (::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL) < 0) return;
       },
       "exceeds 1048576 bytes"},
      {"silent report",
       [](int fd, int) {
         (void)read_line_from(fd);
         say(fd, "SERVER PROTOCOL 2\n");
         (void)read_line_from(fd);
         say(fd, "NCCL version 2.28.3 compiled with CUDA 12.9\n");
         until_closed(fd);
       },
       "timed out after"},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    LoopServer srv(c.handler);
    RasQueryOptions o;
    o.address = srv.address();
    o.timeout_s = 3;
    o.max_bytes = 1 << 20;
    std::string e = fetch_error(o);
    EXPECT_NE(e.find("NCCL RAS at " + srv.address()), std::string::npos) << e;
    EXPECT_NE(e.find(c.words), std::string::npos) << e;
    EXPECT_EQ(e.find('\x1b'), std::string::npos) << e;
  }
}

TEST(RasFetch, ASilentFirstConnectionIsTriedAgain) {
  // Processes sharing the port (SO_REUSEPORT): the first connection reaches a stopped one.
  auto got = std::make_shared<std::vector<std::string>>();
  auto replay = text_server(kHealthy, got);
  LoopServer srv([&](int fd, int n) {
    if (n == 0)
      until_closed(fd);
    else
      replay(fd, n);
  });
  RasQueryOptions o;
  o.address = srv.address();
  o.timeout_s = 10;
  EXPECT_EQ(ras_fetch(o), kHealthy);
}

// Every real capture (scripts/device-ras-capture.py) under tests/fixtures/ras-h200x4: the report
// of each transcript is read whole, with nothing left not understood.
namespace {
// A transcript: "#" lines, then records "> N" (the client sent N bytes) or "< N" (the server sent
// N bytes), each followed by exactly N bytes and a newline. The report: the server's bytes after
// the client's STATUS line.
std::string transcript_report(const std::string& t) {
  std::size_t pos = 0;
  bool after_status = false;
  std::string report;
  while (pos < t.size()) {
    auto nl = t.find('\n', pos);
    if (nl == std::string::npos) break;
    std::string head = t.substr(pos, nl - pos);
    pos = nl + 1;
    if (head.empty() || head[0] == '#') continue;
    if (head.size() < 3 || (head[0] != '>' && head[0] != '<') || head[1] != ' ') throw Error("bad record: " + head);
    std::size_t n = std::stoul(head.substr(2));
    if (pos + n > t.size()) throw Error("record beyond the end");
    std::string bytes = t.substr(pos, n);
    pos += n + 1;
    if (head[0] == '>' && bytes.find("STATUS") != std::string::npos)
      after_status = true;
    else if (head[0] == '<' && after_status)
      report += bytes;
  }
  return report;
}
}  // namespace

std::string capture_report(const std::string& dir, const std::string& name) {
  std::ifstream in(fabscope::testing::fixture(dir) / name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return transcript_report(ss.str());
}

// Every folder tests/fixtures/ras-* (ras-h200x2 and, once captured, ras-h200x4).
TEST(RasCaptures, EveryRealCaptureIsReadWhole) {
  int read = 0;
  for (const auto& d : std::filesystem::directory_iterator(fabscope::testing::fixture(""))) {
    if (!d.is_directory() || d.path().filename().string().rfind("ras-", 0) != 0) continue;
    for (const auto& e : std::filesystem::directory_iterator(d.path())) {
      if (e.path().extension() != ".txt") continue;
      std::ifstream in(e.path(), std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      std::string report = transcript_report(ss.str());
      if (report.empty()) continue;  // a refused variant (an older server without JSON)
      SCOPED_TRACE(e.path().string());
      RasReport r = parse_ras_report(report, e.path().filename().string());
      EXPECT_TRUE(r.complete);
      EXPECT_FALSE(r.nccl_version.empty());
      EXPECT_TRUE(r.other.empty()) << r.other.front();
      EXPECT_TRUE(r.processes > 0 || !r.comms.empty());
      for (const auto& c : r.comms) EXPECT_EQ(c.hash.size(), 16u) << c.hash;
      auto f = ras_findings(r);
      const std::string name = e.path().filename().string();
      if (name.rfind("healthy", 0) == 0) {
        EXPECT_EQ(count_id(f, "job.ras_missing"), 0);
        EXPECT_EQ(count_id(f, "job.ras_error"), 0);
      }
      if (name.rfind("stopped", 0) == 0) {
        EXPECT_GE(count_id(f, "job.ras_missing"), 1);
      }
      read++;
    }
  }
  EXPECT_GT(read, 0);
}

TEST(RasCaptures, StoppedRankOfTheRealJobIsNamed) {
  RasReport r = parse_ras_report(capture_report("ras-h200x2", "stopped-rank1-status.txt"), "x2");
  EXPECT_EQ(r.nccl_version, "2.28.9");
  EXPECT_EQ(r.processes, 2);
  EXPECT_EQ(r.processes_missing, 1);
  ASSERT_EQ(r.comms.size(), 1u);
  EXPECT_EQ(r.comms[0].hash, "15d26ffbe2bc7314");
  EXPECT_EQ(r.comms[0].size, 2);
  ASSERT_EQ(r.comms[0].missing_ranks.size(), 1u);
  EXPECT_EQ(r.comms[0].missing_ranks[0].rank, 1);
  EXPECT_EQ(r.comms[0].missing_ranks[0].pid, 719);
  EXPECT_EQ(r.comms[0].missing_ranks[0].host, "192.0.2.2");
  auto f = ras_findings(r);
  EXPECT_EQ(count_id(f, "job.ras_missing"), 2);
  EXPECT_EQ(worst(f), Severity::Fail);

  // The same moment in JSON (NCCL 2.28.9's, without a comma): the same rank, and the hash as text prints it.
  RasReport j = parse_ras_report(capture_report("ras-h200x2", "stopped-rank1-json.txt"), "x2");
  EXPECT_TRUE(j.complete);
  EXPECT_TRUE(j.json_repaired);
  ASSERT_EQ(j.comms.size(), 1u);
  EXPECT_EQ(j.comms[0].hash, "15d26ffbe2bc7314");
  ASSERT_EQ(j.comms[0].missing_ranks.size(), 1u);
  EXPECT_EQ(j.comms[0].missing_ranks[0].pid, 719);

  // A minute later RAS calls it dead.
  RasReport d = parse_ras_report(capture_report("ras-h200x2", "stopped-rank1-65s-status.txt"), "x2");
  ASSERT_EQ(d.dead_processes.size(), 1u);
  EXPECT_EQ(d.dead_processes[0].pid, 719);
  EXPECT_EQ(d.processes_dead, 1);
}

TEST(RasSummary, OneLineOfWhatTheReportHad) {
  EXPECT_EQ(ras_summary(parse_ras_report(capture_report("ras-h200x2", "healthy-status.txt"), "x2")),
            "NCCL 2.28.9 (text report): 1 node, 2 processes, 2 GPUs, 1 communicator, gathered in 0.000 s");
  EXPECT_EQ(ras_summary(parse_ras_report(capture_report("ras-h200x2", "healthy-json.txt"), "x2")),
            "NCCL 2.28.9 (json report): 1 communicator, gathered in 0.000 s");
  EXPECT_EQ(ras_summary(parse_ras_report("", "x")), "NCCL ? (text report, cut short): 0 communicators");
}

TEST(RasCaptures, HealthyRealJobHasNoMissingRank) {
  for (const char* name : {"healthy-status.txt", "healthy-verbose.txt", "healthy-json.txt"}) {
    SCOPED_TRACE(name);
    RasReport r = parse_ras_report(capture_report("ras-h200x2", name), "x2");
    EXPECT_TRUE(r.complete);
    for (const auto& c : r.comms) EXPECT_EQ(c.missing, 0);
    EXPECT_EQ(r.processes_missing, 0);
  }
}
