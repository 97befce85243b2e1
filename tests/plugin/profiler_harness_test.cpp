// libnccl-profiler-fabscope.so driven through NCCL 2.28's event sequence (profiler_caller.hpp), each
// scenario in a process of its own (the plugin's state is per process, as in a job's rank), and
// what it published read back through the exporter's own reader.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "exporter/job_families.hpp"
#include "exporter/job_segment.hpp"
#include "exporter/job_source.hpp"
#include "core/metrics.hpp"
#include "profiler_caller.hpp"
#include "segment.h"

namespace fs = std::filesystem;
using fabscope::exporter::JobSegment;
using fabscope::testing::CollSpec;
using fabscope::testing::Comm5;
using fabscope::testing::ProfilerPlugin;

namespace {

class ProfilerHarness : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/fabscope-profiler-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs body in a child that loads the plugin afresh; returns the child's pid once it exited with
  // status 0 (the segment stays: FABSCOPE_PROFILER_KEEP=1 unless keep is false).
  pid_t run(const std::function<void(const ProfilerPlugin&)>& body, bool keep = true,
            const std::vector<std::pair<std::string, std::string>>& env = {}) {
    pid_t pid = fork();
    if (pid == 0) {
      setenv("FABSCOPE_PROFILER_DIR", dir_.c_str(), 1);
      if (keep) setenv("FABSCOPE_PROFILER_KEEP", "1", 1);
      for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
      try {
        ProfilerPlugin p(FABSCOPE_PROFILER_PLUGIN);
        body(p);
      } catch (...) {
        _exit(9);
      }
      _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "child status " << st;
    return pid;
  }

  std::string segment_file(pid_t pid) const { return dir_ + "/fabscope-job." + std::to_string(pid); }

  JobSegment read(pid_t pid) const {
    std::ifstream f(segment_file(pid), std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return fabscope::exporter::parse_job_segment(ss.str(), segment_file(pid));
  }

  std::string dir_;
};

const fabscope::exporter::JobAgg* find_agg(const fabscope::exporter::JobComm& c, const char* op) {
  for (const auto& a : c.aggs)
    if (std::string(fabscope::exporter::job_op_name(a.op)) == op) return &a;
  return nullptr;
}

}  // namespace

TEST_F(ProfilerHarness, ExportsV5AndV4AndNothingOlder) {
  ProfilerPlugin p(FABSCOPE_PROFILER_PLUGIN);
  ASSERT_NE(p.v5, nullptr);
  ASSERT_NE(p.v4, nullptr);
  EXPECT_STREQ(p.v5->name, "fabscope");
  EXPECT_EQ(dlsym(p.lib_, "ncclProfiler_v3"), nullptr);
}

TEST_F(ProfilerHarness, InitNamesItselfAndTheVersionNcclTook) {
  pid_t pid = run([](const ProfilerPlugin& p) {
    Comm5 c(p, 0xabcdef, 1, 4, 1, "trainer");
    if (c.rc != 0 || c.ctx == nullptr) _exit(2);
    if (!(c.mask & FSP_EV_COLL) || !(c.mask & FSP_EV_KERNEL_CH) || (c.mask & FSP_EV_PROXY_STEP)) _exit(3);
    bool said = false;
    for (const auto& l : fabscope::testing::profiler_log_lines())
      said = said || l.find("PROFILER/fabscope: loaded as v5") != std::string::npos;
    if (!said) _exit(4);
  });
  auto s = read(pid);
  EXPECT_EQ(s.api_version, 5u);
  EXPECT_EQ(s.pid, pid);
  ASSERT_EQ(s.comms.size(), 1u);
  EXPECT_EQ(s.comms[0].hash_hex(), "0000000000abcdef");
  EXPECT_EQ(s.comms[0].name, "trainer");
  EXPECT_EQ(s.comms[0].rank, 1);
  EXPECT_EQ(s.comms[0].nranks, 4);
}

TEST_F(ProfilerHarness, CollectivesCountBytesAndGpuTime) {
  pid_t pid = run([](const ProfilerPlugin& p) {
    Comm5 c(p, 7, 0, 4);
    for (std::uint64_t i = 0; i < 10; i++) {
      CollSpec s;  // 262144 floats = 1 MiB, 100 µs on the GPU
      s.seq = i;
      s.gpu_start = 1'000'000'000 + i * 1'000'000;
      c.collective(s);
    }
  });
  auto s = read(pid);
  ASSERT_EQ(s.comms.size(), 1u);
  const auto& c = s.comms[0];
  EXPECT_EQ(c.started, 10u);
  EXPECT_EQ(c.completed, 10u);
  EXPECT_EQ(c.op_done_seq[1], 10u);  // AllReduce: seq 9 completed
  const auto* a = find_agg(c, "AllReduce");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->count, 10u);
  EXPECT_EQ(a->bytes, 10u * 1048576u);
  EXPECT_EQ(a->size_lower_bytes(), 1048576u);
  EXPECT_EQ(a->time_ns_sum, 10u * 100'000u);  // first channel's start to last channel's stop
  EXPECT_EQ(a->gpu_timed, 10u);
  EXPECT_EQ(a->hist[7], 10u);  // 100 µs: 64 <= us < 128
  ASSERT_EQ(c.ring.size(), 10u);
  EXPECT_EQ(c.ring.back().seq, 9u);
  EXPECT_EQ(c.ring.back().gpu_ns(), 100'000u);
  EXPECT_EQ(std::string(fabscope::exporter::job_algo_name(c.ring.back().algo)), "RING");
  EXPECT_EQ(std::string(fabscope::exporter::job_proto_name(c.ring.back().proto)), "SIMPLE");
  EXPECT_FALSE(c.ring.back().in_flight());
}

TEST_F(ProfilerHarness, AnOperationCompletesOnlyWhenEveryChannelStopped) {
  pid_t pid = run([](const ProfilerPlugin& p) {
    Comm5 c(p, 7, 0, 2);
    CollSpec s;
    void* h = c.start_coll(s);
    c.stop(h);  // the host's stop comes right after the launch
    std::vector<void*> ch;
    for (int i = 0; i < 4; i++) ch.push_back(c.start_channel(h, i, 5000 + i));
    for (int i = 0; i < 3; i++) c.stop_channel(ch[i], 9000);
    // one channel still runs: in flight
  });
  auto s = read(pid);
  const auto& c = s.comms.at(0);
  EXPECT_EQ(c.started, 1u);
  EXPECT_EQ(c.completed, 0u);
  EXPECT_TRUE(c.aggs.empty());
  ASSERT_EQ(c.ring.size(), 1u);
  EXPECT_TRUE(c.ring[0].in_flight());
}

TEST_F(ProfilerHarness, ChannelsThatStopBeforeTheHostsStopStillComplete) {
  pid_t pid = run([](const ProfilerPlugin& p) {
    Comm5 c(p, 7, 0, 2);
    CollSpec s;
    s.nchannels = 2;
    void* h = c.start_coll(s);
    void* a = c.start_channel(h, 0, 1000);
    void* b = c.start_channel(h, 1, 1100);
    c.stop_channel(a, 3000);
    c.stop_channel(b, 2900);
    c.stop(h);
  });
  auto seg = read(pid);
  const auto& c = seg.comms.at(0);
  EXPECT_EQ(c.completed, 1u);
  EXPECT_EQ(find_agg(c, "AllReduce")->time_ns_sum, 2000u);
}

TEST_F(ProfilerHarness, AllGatherBytesAreNcclTestsSize) {
  pid_t pid = run([](const ProfilerPlugin& p) {
    Comm5 c(p, 7, 0, 8);
    CollSpec s;
    s.func = "AllGather";
    s.count = 1024;
    s.datatype = "ncclBfloat16";
    c.collective(s);
  });
  auto seg = read(pid);
  const auto* a = find_agg(seg.comms.at(0), "AllGather");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->bytes, 1024u * 2u * 8u);  // count is one rank's block; 8 ranks
}

TEST_F(ProfilerHarness, P2pCarriesItsPeer) {
  pid_t pid = run([](const ProfilerPlugin& p) {
    Comm5 c(p, 7, 0, 2);
    void* h = c.start_p2p("Send", 4096, 1, 1);
    c.stop(h);
    void* ch = c.start_channel(h, 0, 100);
    c.stop_channel(ch, 200);
  });
  auto seg = read(pid);
  const auto& c = seg.comms.at(0);
  const auto* a = find_agg(c, "Send");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->bytes, 4096u);
  ASSERT_EQ(c.ring.size(), 1u);
  EXPECT_EQ(c.ring[0].peer, 1);
}

TEST_F(ProfilerHarness, HostileSequencesAreCountedNotTrusted) {
  pid_t pid = run([](const ProfilerPlugin& p) {
    Comm5 c(p, 7, 0, 2);
    p.v5->stopEvent(nullptr);  // stop without start
    static char not_ours[64];
    p.v5->stopEvent(not_ours);                                   // a handle never given
    p.v5->recordEventState(not_ours, FSP_STATE_KERNEL_CH_STOP, nullptr);
    void* orphan = c.start_channel(not_ours, 0, 1);  // a parent that is not ours
    if (orphan != nullptr) _exit(2);
    fsp_descr_v5 unknown{};
    unknown.type = 1ull << 40;  // an event type of a later NCCL
    void* h = &unknown;
    p.v5->startEvent(c.ctx, &h, &unknown);
    if (h != nullptr) _exit(3);
    CollSpec s;
    s.nchannels = 1;
    void* coll = c.start_coll(s);
    c.stop(coll);
    void* ch = c.start_channel(coll, 0, 10);
    c.stop_channel(ch, 20);
    c.stop(coll);  // stopped twice: the pool entry is free again
    p.v5->startEvent(nullptr, &h, &unknown);  // a context NCCL kept from a failed init
    p.v5->recordEventState(nullptr, FSP_STATE_SEND_WAIT, nullptr);
  });
  auto s = read(pid);
  EXPECT_GE(s.events_invalid, 4u);
  EXPECT_EQ(s.comms.at(0).completed, 1u);
}

TEST_F(ProfilerHarness, ProxyStepsTimedPerPeerWhenAsked) {
  pid_t pid = run(
      [](const ProfilerPlugin& p) {
        Comm5 c(p, 7, 0, 4, 2);
        if (!(c.mask & FSP_EV_PROXY_STEP)) _exit(2);
        c.network(1, true, 8, 65536);
        c.network(3, false, 4, 65536);
      },
      true, {{"FABSCOPE_PROFILER_PROXY", "1"}});
  auto s = read(pid);
  EXPECT_TRUE(s.proxy);
  const auto& c = s.comms.at(0);
  ASSERT_EQ(c.peers.size(), 2u);
  for (const auto& e : c.peers) {
    if (e.send) {
      EXPECT_EQ(e.peer, 1);
      EXPECT_EQ(e.steps, 8u);
      EXPECT_EQ(e.bytes, 8u * 65536u);
    } else {
      EXPECT_EQ(e.peer, 3);
      EXPECT_EQ(e.steps, 4u);
    }
  }
}

TEST_F(ProfilerHarness, V4InterfaceRecordsTheSame) {
  pid_t pid = run([](const ProfilerPlugin& p) {
    void* ctx = nullptr;
    int mask = 0;
    if (p.v4->init(&ctx, &mask, "old", 0x42, 1, 2, 1, fabscope::testing::profiler_logger) != 0) _exit(2);
    fsp_descr_v4 d{};
    d.type = FSP_EV_COLL;
    d.coll.func = "Broadcast";
    d.coll.count = 100;
    d.coll.datatype = "ncclUint8";
    d.coll.nChannels = 1;
    void* h = nullptr;
    p.v4->startEvent(ctx, &h, &d);
    p.v4->stopEvent(h);
    fsp_descr_v4 k{};
    k.type = FSP_EV_KERNEL_CH;
    k.parentObj = h;
    k.kernelCh.pTimer = 500;
    void* ch = nullptr;
    p.v4->startEvent(ctx, &ch, &k);
    fsp_state_args a{};
    a.kernelCh.pTimer = 800;
    p.v4->recordEventState(ch, FSP_STATE_KERNEL_CH_STOP, &a);
    p.v4->stopEvent(ch);
  });
  auto s = read(pid);
  EXPECT_EQ(s.api_version, 4u);
  const auto& c = s.comms.at(0);
  EXPECT_EQ(c.hash, 0x42u);
  EXPECT_EQ(c.rank, 1);
  const auto* a = find_agg(c, "Broadcast");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->time_ns_sum, 300u);
}

TEST_F(ProfilerHarness, FullPoolsDropAndCountNeverBlock) {
  pid_t pid = run([](const ProfilerPlugin& p) {
    Comm5 c(p, 7, 0, 2);
    CollSpec s;
    for (int i = 0; i < 5000; i++) c.start_coll(s);  // never completed: 4096 fit
  });
  auto s = read(pid);
  EXPECT_GT(s.events_dropped, 0u);
  EXPECT_LE(s.comms.at(0).started, 4096u);
}

TEST_F(ProfilerHarness, CommunicatorsBeyondTheSlotsAreCounted) {
  pid_t pid = run([](const ProfilerPlugin& p) {
    std::vector<std::unique_ptr<Comm5>> comms;
    for (int i = 0; i < 17; i++) comms.push_back(std::make_unique<Comm5>(p, 100 + i, 0, 2));
    CollSpec s;
    comms.back()->collective(s);  // the 17th: not recorded, no crash
  });
  auto s = read(pid);
  EXPECT_EQ(s.comms.size(), 16u);
  EXPECT_EQ(s.comms_overflow, 1u);
}

TEST_F(ProfilerHarness, LastFinalizeRemovesTheSegmentUnlessKept) {
  pid_t pid = run(
      [](const ProfilerPlugin& p) {
        Comm5 a(p, 1, 0, 2);
        Comm5 b(p, 2, 0, 2);
        std::string path = p.segment_path();
        a.finalize();
        if (access(path.c_str(), F_OK) != 0) _exit(2);  // b still active
        b.finalize();
        if (access(path.c_str(), F_OK) == 0) _exit(3);
      },
      false);
  EXPECT_FALSE(fs::exists(segment_file(pid)));
}

TEST_F(ProfilerHarness, SegmentIsReadableByOthersButOnlyWritableByItsOwner) {
  pid_t pid = run([](const ProfilerPlugin& p) { Comm5 c(p, 1, 0, 2); });
  struct stat st {};
  ASSERT_EQ(stat(segment_file(pid).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  EXPECT_EQ(st.st_uid, getuid());
}

TEST_F(ProfilerHarness, NewProcessRemovesSegmentsOfDeadProcessesOfItsUser) {
  pid_t dead = run([](const ProfilerPlugin& p) { Comm5 c(p, 1, 0, 2); });
  ASSERT_TRUE(fs::exists(segment_file(dead)));
  run([](const ProfilerPlugin& p) { Comm5 c(p, 2, 0, 2); });
  EXPECT_FALSE(fs::exists(segment_file(dead)));
}

// Several ranks in several processes, one killed mid-collective; the exporter's source reads the
// live ones and keeps the dead one's series for the grace period only.
TEST_F(ProfilerHarness, ExporterReadsEveryRankAndDropsADeadOneAfterGrace) {
  constexpr int kRanks = 4;
  std::vector<pid_t> pids;
  std::vector<int> release;
  for (int r = 0; r < kRanks; r++) {
    int ready[2], go[2];
    ASSERT_EQ(pipe(ready), 0);
    ASSERT_EQ(pipe(go), 0);
    pid_t pid = fork();
    if (pid == 0) {
      setenv("FABSCOPE_PROFILER_DIR", dir_.c_str(), 1);
      setenv("FABSCOPE_JOB_ID", "harness-job", 1);
      ProfilerPlugin p(FABSCOPE_PROFILER_PLUGIN);
      Comm5 c(p, 0x5eed, r, kRanks, 2, "world");
      for (std::uint64_t i = 0; i < 20; i++) {
        CollSpec s;
        s.seq = i;
        s.gpu_ns = 200'000 + 50'000 * static_cast<std::uint64_t>(r);
        c.collective(s);
      }
      if (r == 3) c.start_coll(CollSpec{.seq = 20});  // in flight when killed
      char b = 1;
      (void)!write(ready[1], &b, 1);
      (void)!::read(go[0], &b, 1);
      _exit(0);
    }
    close(ready[1]);
    close(go[0]);
    char b;
    ASSERT_EQ(::read(ready[0], &b, 1), 1);
    close(ready[0]);
    pids.push_back(pid);
    release.push_back(go[1]);
  }
  fabscope::exporter::JobSourceOptions o;
  o.dir = dir_;
  o.grace_seconds = 30;
  fabscope::exporter::JobSource src(o);
  auto t0 = std::chrono::steady_clock::now();
  auto procs = src.read(t0);
  ASSERT_EQ(procs.size(), 4u);
  for (const auto& p : procs) {
    EXPECT_TRUE(p.alive);
    EXPECT_EQ(p.segment.job_id, "harness-job");
    EXPECT_EQ(p.segment.job_source, "env");
    ASSERT_EQ(p.segment.comms.size(), 1u);
    EXPECT_EQ(p.segment.comms[0].aggs.at(0).count, 20u);
  }
  auto fams = fabscope::exporter::job_families(procs, src.stats(), 4096);
  std::string text = fabscope::render_text(fams);
  EXPECT_NE(text.find("fabscope_job_operations_total{job_id=\"harness-job\""), std::string::npos);
  EXPECT_NE(text.find("fabscope_job_operations_in_flight{job_id=\"harness-job\",host="), std::string::npos);

  kill(pids[3], SIGKILL);  // the rank with an operation in flight
  waitpid(pids[3], nullptr, 0);
  procs = src.read(t0 + std::chrono::seconds(1));
  ASSERT_EQ(procs.size(), 4u);
  int ended = 0;
  for (const auto& p : procs)
    if (!p.alive) {
      ended++;
      EXPECT_EQ(p.segment.pid, pids[3]);
      EXPECT_EQ(p.segment.comms[0].started - p.segment.comms[0].completed, 1u);
    }
  EXPECT_EQ(ended, 1);
  procs = src.read(t0 + std::chrono::seconds(40));
  EXPECT_EQ(procs.size(), 3u);
  EXPECT_FALSE(fs::exists(segment_file(pids[3])));
  EXPECT_EQ(src.stats().removed_total, 1u);
  for (int r = 0; r < 3; r++) {
    char b = 1;
    (void)!write(release[r], &b, 1);
    waitpid(pids[r], nullptr, 0);
  }
}

// What the exporter refuses in the directory: every kind is skipped, counted, and the rest served.
TEST_F(ProfilerHarness, ExporterSkipsLinksWrongSizesForeignNamesAndGarbage) {
  pid_t pid = run([](const ProfilerPlugin& p) {
    Comm5 c(p, 9, 0, 2);
    c.collective(CollSpec{});
  });
  const std::string good = segment_file(pid);
  std::string bytes;
  {
    std::ifstream f(good, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    bytes = ss.str();
  }
  auto write = [&](const std::string& name, const std::string& b) {
    std::ofstream(dir_ + "/" + name, std::ios::binary) << b;
  };
  fs::create_symlink(good, dir_ + "/fabscope-job.1");                 // a link
  write("fabscope-job.2", bytes.substr(0, bytes.size() / 2));          // truncated
  write("fabscope-job.3", bytes);                                      // header says another pid
  std::string garbled = bytes;
  garbled[0] ^= 0x5a;                                                  // magic
  write("fabscope-job.4", garbled);
  std::string bad_rank = bytes;                                        // rank beyond nranks
  const std::size_t rank_off = sizeof(fsp_header) + offsetof(fsp_comm, rank);
  std::int32_t r = 7;
  std::memcpy(bad_rank.data() + rank_off, &r, sizeof r);
  write("fabscope-job." + std::to_string(pid + 100000), bad_rank);
  fabscope::exporter::JobSourceOptions o;
  o.dir = dir_;
  fabscope::exporter::JobSource src(o);
  auto procs = src.read(std::chrono::steady_clock::now());
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(procs[0].segment.pid, pid);
  EXPECT_FALSE(procs[0].alive);  // it exited: no lock held
  auto st = src.stats();
  EXPECT_EQ(st.skipped_total["not_regular"], 1u);
  EXPECT_EQ(st.skipped_total["size"], 1u);
  EXPECT_EQ(st.skipped_total["foreign"], 1u);
  EXPECT_EQ(st.skipped_total["format"], 2u);
}

TEST_F(ProfilerHarness, ExporterSeesAWriterAliveByItsLockNotItsPid) {
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t pid = fork();
  if (pid == 0) {
    setenv("FABSCOPE_PROFILER_DIR", dir_.c_str(), 1);
    ProfilerPlugin p(FABSCOPE_PROFILER_PLUGIN);
    Comm5 c(p, 9, 0, 2);
    char b = 1;
    (void)!write(ready[1], &b, 1);
    (void)!::read(go[0], &b, 1);
    _exit(0);
  }
  char b;
  ASSERT_EQ(::read(ready[0], &b, 1), 1);
  fabscope::exporter::JobSourceOptions o;
  o.dir = dir_;
  fabscope::exporter::JobSource src(o);
  auto procs = src.read(std::chrono::steady_clock::now());
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_TRUE(procs[0].alive);
  procs = src.read(std::chrono::steady_clock::now());  // reading did not take the writer's lock away
  EXPECT_TRUE(procs.at(0).alive);
  (void)!write(go[1], &b, 1);
  waitpid(pid, nullptr, 0);
  procs = src.read(std::chrono::steady_clock::now());
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_FALSE(procs[0].alive);
}

// A writer stopped by a signal is said to be stopped (state T, its start time matching the
// header's), running again once continued; a stat file of another process (another start time, as
// a pid of another namespace would show) says nothing.
TEST_F(ProfilerHarness, ExporterSaysAStoppedWriterIsStopped) {
  int go[2], ready[2];
  ASSERT_EQ(pipe(go), 0);
  ASSERT_EQ(pipe(ready), 0);
  pid_t pid = fork();
  if (pid == 0) {
    setenv("FABSCOPE_PROFILER_DIR", dir_.c_str(), 1);
    setenv("FABSCOPE_JOB_ID", "stop-job", 1);
    ProfilerPlugin p(FABSCOPE_PROFILER_PLUGIN);
    Comm5 c(p, 11, 1, 2);
    c.start_coll(CollSpec{.seq = 0});
    char b = 1;
    (void)!write(ready[1], &b, 1);
    (void)!::read(go[0], &b, 1);
    _exit(0);
  }
  char b;
  ASSERT_EQ(::read(ready[0], &b, 1), 1);
  fabscope::exporter::JobSourceOptions o;
  o.dir = dir_;
  fabscope::exporter::JobSource src(o);
  auto procs = src.read(std::chrono::steady_clock::now());
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_TRUE(procs[0].state == 'S' || procs[0].state == 'R') << int(procs[0].state);
  EXPECT_FALSE(procs[0].stopped());
  kill(pid, SIGSTOP);
  int st = 0;
  ASSERT_EQ(waitpid(pid, &st, WUNTRACED), pid);
  ASSERT_TRUE(WIFSTOPPED(st));
  procs = src.read(std::chrono::steady_clock::now());
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(procs[0].state, 'T');
  EXPECT_TRUE(procs[0].stopped());
  std::string text = fabscope::render_text(fabscope::exporter::job_families(procs, src.stats(), 4096));
  EXPECT_NE(text.find("state=\"stopped\""), std::string::npos) << text.substr(0, 600);
  auto snap = src.records("test");
  ASSERT_EQ(snap.ranks.size(), 1u);
  EXPECT_EQ(snap.ranks[0].process_state, "stopped");
  EXPECT_TRUE(snap.ranks[0].stopped());
  // The same pid seen through a /proc whose stat names another start time: not known.
  fabscope::exporter::JobSourceOptions other = o;
  other.proc_dir = dir_ + "/proc";
  fs::create_directories(other.proc_dir + "/" + std::to_string(pid));
  std::ofstream(other.proc_dir + "/" + std::to_string(pid) + "/stat")
      << pid << " (python3) T 1 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 9 0 12345 1 1\n";
  auto foreign = fabscope::exporter::JobSource(other).read(std::chrono::steady_clock::now());
  ASSERT_EQ(foreign.size(), 1u);
  EXPECT_EQ(foreign[0].state, 0);
  EXPECT_FALSE(foreign[0].stopped());
  kill(pid, SIGCONT);
  ASSERT_EQ(waitpid(pid, &st, WCONTINUED), pid);
  procs = src.read(std::chrono::steady_clock::now());
  EXPECT_FALSE(procs.at(0).stopped());
  (void)!write(go[1], &b, 1);
  waitpid(pid, nullptr, 0);
  procs = src.read(std::chrono::steady_clock::now());
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_FALSE(procs[0].alive);
  EXPECT_FALSE(procs[0].stopped());
}

TEST(JobProcessState, StatLinesAreReadByTheirLastParenthesis) {
  using fabscope::exporter::stat_state_if_started;
  const std::string tail = " 1 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 9 0 777 1 1";
  EXPECT_EQ(stat_state_if_started("42 (python3) T" + tail, 777), 'T');
  EXPECT_EQ(stat_state_if_started("42 (a) b) (c) t" + tail, 777), 't');
  EXPECT_EQ(stat_state_if_started("42 (python3) S" + tail, 778), 0);  // another process
  EXPECT_EQ(stat_state_if_started("42 (python3) S 1 1", 777), 0);     // cut short
  EXPECT_EQ(stat_state_if_started("", 777), 0);
  EXPECT_EQ(stat_state_if_started("42 python3 S" + tail, 777), 0);
  EXPECT_EQ(stat_state_if_started("42 (p) S 1 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 9 0 99999999999999999999999 1", 777), 0);
  EXPECT_STREQ(fabscope::exporter::job_process_state_word('T'), "stopped");
  EXPECT_STREQ(fabscope::exporter::job_process_state_word('t'), "traced");
  EXPECT_STREQ(fabscope::exporter::job_process_state_word('S'), "running");
  EXPECT_STREQ(fabscope::exporter::job_process_state_word(0), "");
}

// Ranks of one node start together: one's sweep of dead segments must never take another's that
// is being created (seen on 4 GPUs: a rank lost its segment to a neighbour's sweep).
TEST_F(ProfilerHarness, RanksStartingTogetherEachKeepTheirSegment) {
  constexpr int kProcs = 16;
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  std::vector<pid_t> pids;
  for (int r = 0; r < kProcs; r++) {
    pid_t pid = fork();
    if (pid == 0) {
      close(go[1]);
      char b;
      (void)!::read(go[0], &b, 1);  // every child starts at once: the write end closes
      setenv("FABSCOPE_PROFILER_DIR", dir_.c_str(), 1);
      setenv("FABSCOPE_PROFILER_KEEP", "1", 1);
      ProfilerPlugin p(FABSCOPE_PROFILER_PLUGIN);
      for (int i = 0; i < 20; i++) {  // and sweep while the others create
        Comm5 c(p, 100 + i, r, kProcs);
        if (c.rc != 0) _exit(2);
      }
      _exit(0);
    }
    pids.push_back(pid);
  }
  close(go[0]);
  close(go[1]);
  for (pid_t pid : pids) {
    int st = 0;
    waitpid(pid, &st, 0);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "pid " << pid;
  }
  // each ended after its last finalize with KEEP: its segment stays until someone sweeps it
  int segments = 0;
  for (const auto& e : fs::directory_iterator(dir_)) segments += e.path().filename().string().rfind("fabscope-job.", 0) == 0;
  EXPECT_GE(segments, 1);
}

TEST_F(ProfilerHarness, TorchrunWithoutRunIdIsNamedByItsRendezvous) {
  pid_t pid = run([](const ProfilerPlugin& p) { Comm5 c(p, 1, 0, 2); }, true,
                  {{"TORCHELASTIC_RUN_ID", "none"}, {"MASTER_ADDR", "10.0.0.5"}, {"MASTER_PORT", "29500"}});
  auto s = read(pid);
  EXPECT_EQ(s.job_id, "torchrun-10.0.0.5:29500");
  EXPECT_EQ(s.job_source, "torchrun");
}

TEST_F(ProfilerHarness, WithoutKernelEventsOperationsAreCountedNotTimed) {
  pid_t pid = run(
      [](const ProfilerPlugin& p) {
        Comm5 c(p, 7, 0, 2);
        if (c.mask & FSP_EV_KERNEL_CH) _exit(2);
        for (int i = 0; i < 3; i++) {
          void* h = c.start_coll(CollSpec{});
          c.stop(h);  // no channel events come: complete at the host's stop
        }
      },
      true, {{"FABSCOPE_PROFILER_KERNEL", "0"}});
  auto seg = read(pid);
  const auto* a = find_agg(seg.comms.at(0), "AllReduce");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->count, 3u);
  EXPECT_EQ(a->time_ns_sum, 0u);
  std::uint64_t bucketed = 0;
  for (auto n : a->hist) bucketed += n;
  EXPECT_EQ(bucketed, 0u);
}

// The scrape's text path and the metric model are one walk: their expositions are equal, byte for
// byte, on segments with collectives, p2p, network steps, an operation in flight and the cap hit.
TEST_F(ProfilerHarness, ScrapeTextEqualsTheRenderedModel) {
  pid_t a = run([](const ProfilerPlugin& p) {
    Comm5 c(p, 7, 1, 4, 2, "wor\"ld\\");
    for (std::uint64_t i = 0; i < 12; i++) {
      CollSpec s;
      s.seq = i;
      s.count = 256u << i;
      c.collective(s);
    }
    void* h = c.start_p2p("Recv", 100, 3, 1);
    c.stop(h);
    c.stop_channel(c.start_channel(h, 0, 10), 20);
    c.start_coll(CollSpec{.seq = 12});
    c.network(2, true, 3, 1000);
  }, true, {{"FABSCOPE_PROFILER_PROXY", "1"}});
  auto seg_a = read(a);  // before b starts: a starting process removes the dead segments of its user
  pid_t b = run([](const ProfilerPlugin& p) { Comm5 c(p, 8, 0, 2); c.collective(CollSpec{}); });
  std::vector<fabscope::exporter::JobProcess> procs{{seg_a, true}, {read(b), false}};
  fabscope::exporter::JobScrapeStats st;
  st.skipped_total["size"] = 3;
  st.removed_total = 2;
  for (std::size_t cap : {std::size_t{4096}, std::size_t{5}}) {
    std::string text;
    fabscope::exporter::job_text(procs, st, cap, text);
    EXPECT_EQ(text, fabscope::render_text(fabscope::exporter::job_families(procs, st, cap))) << "cap " << cap;
  }
}

// FABSCOPE_PROFILER_SAMPLE=4: NCCL gives channel events for the operations enqueued while the
// mask asked for them; the others complete when a later operation's first channel starts.
TEST_F(ProfilerHarness, SamplingTimesOneInNAndCountsEveryOperation) {
  pid_t pid = run(
      [](const ProfilerPlugin& p) {
        Comm5 c(p, 7, 0, 2);
        std::uint64_t t = 1000;
        for (std::uint64_t i = 0; i < 16; i++) {
          // as NCCL: the mask is read when the operation is enqueued, before its start event
          const bool timed = (c.mask_ptr_value() & FSP_EV_KERNEL_CH) != 0;
          CollSpec s;
          s.seq = i;
          s.nchannels = 2;
          void* h = c.start_coll(s);
          c.stop(h);
          if (timed) {
            void* a = c.start_channel(h, 0, t);
            void* b = c.start_channel(h, 1, t + 10);
            c.stop_channel(a, t + 500);
            c.stop_channel(b, t + 490);
          }
          t += 1000;
        }
        c.finalized = true;  // read as a running process's: no finalize
      },
      true, {{"FABSCOPE_PROFILER_SAMPLE", "4"}});
  auto seg = read(pid);
  const auto& c = seg.comms.at(0);
  EXPECT_EQ(c.started, 16u);
  // the last timed one is op 12 (the mask turned on by op 11's start); ops 13-15 wait for the
  // next timed operation's first channel: still in flight
  EXPECT_EQ(c.completed, 13u);
  const auto* a = find_agg(c, "AllReduce");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->count, 13u);
  EXPECT_EQ(a->gpu_timed, 4u);  // ops 0, 4, 8, 12
  EXPECT_EQ(a->time_ns_sum, 4u * 500u);
  EXPECT_EQ(a->bytes, 13u * 1048576u);
  EXPECT_EQ(a->timed_bytes, 4u * 1048576u);  // busbw: the timed operations' bytes over their time
}

TEST_F(ProfilerHarness, SamplingFinalizeCompletesTheOperationsStillWaiting) {
  pid_t pid = run(
      [](const ProfilerPlugin& p) {
        Comm5 c(p, 7, 0, 2);
        for (std::uint64_t i = 0; i < 6; i++) {
          const bool timed = (c.mask_ptr_value() & FSP_EV_KERNEL_CH) != 0;
          CollSpec s;
          s.seq = i;
          s.nchannels = 1;
          void* h = c.start_coll(s);
          c.stop(h);
          if (timed) c.stop_channel(c.start_channel(h, 0, 100), 200);
        }
        c.finalize();
      },
      true, {{"FABSCOPE_PROFILER_SAMPLE", "4"}});
  auto seg = read(pid);
  ASSERT_EQ(seg.comms.size(), 1u);
  EXPECT_EQ(seg.comms[0].completed, 6u);
  EXPECT_TRUE(seg.comms[0].finalized);
}
