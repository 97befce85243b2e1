// The job analysis on synthetic records: ranks over several hosts whose clocks disagree by
// seconds, a straggler of a chosen delay, healthy runs, hangs, an ended process, a slow connection.
#include "job/analysis.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <set>

#include "core/error.hpp"
#include "job/registry.hpp"
#include "job/sources.hpp"

using namespace fabscope;
using namespace fabscope::job;

namespace {

struct Spec {
  int ranks = 4, per_host = 2, ops = 64;
  int slow = -1;             // the rank that arrives late
  double delay_ns = 0;       // by this much in every collective
  double base_ns = 2e6;      // time inside a collective once everyone is there
  double jitter_ns = 3e5;    // each rank's arrival jitter
  double step_ns = 50e6;     // time between collectives
  std::uint64_t seed = 1;
};

// Every rank's record: rank r of host r/per_host; host h's clocks (host and GPU) are off by h*7.3 s.
Snapshot make_job(const Spec& s) {
  std::mt19937_64 rng(s.seed);
  std::uniform_real_distribution<double> jit(0, s.jitter_ns);
  Snapshot snap;
  snap.source = "synthetic";
  std::vector<RankRecord> recs(s.ranks);
  const std::uint64_t t0 = 1'800'000'000'000'000'000ull;
  for (int r = 0; r < s.ranks; r++) {
    auto& rec = recs[r];
    rec.job_id = "j1";
    rec.host = "node" + std::to_string(r / s.per_host);
    rec.pid = 1000 + r;
    rec.comm = "00000000000000aa";
    rec.rank = r;
    rec.nranks = s.ranks;
    rec.gpu = r % s.per_host;
  }
  for (int i = 0; i < s.ops; i++) {
    double start = static_cast<double>(i) * s.step_ns;
    std::vector<double> arrive(s.ranks);
    double last = 0;
    for (int r = 0; r < s.ranks; r++) {
      arrive[r] = start + jit(rng) + (r == s.slow ? s.delay_ns : 0);
      last = std::max(last, arrive[r]);
    }
    double end = last + s.base_ns;
    for (int r = 0; r < s.ranks; r++) {
      const std::uint64_t off = static_cast<std::uint64_t>(r / s.per_host) * 7'300'000'000ull;
      OpRecord o;
      o.seq = static_cast<std::uint64_t>(i);
      o.op = "AllReduce";
      o.bytes = 1 << 20;
      // The CPU start may precede t0 (a negative offset): through int64, since a negative double
      // converted to an unsigned integer is undefined behaviour.
      o.cpu_start_unix_ns = t0 + off + static_cast<std::uint64_t>(static_cast<std::int64_t>(arrive[r] - 20000));
      o.gpu_start_ns = t0 + off + static_cast<std::uint64_t>(arrive[r]);
      o.gpu_stop_ns = t0 + off + static_cast<std::uint64_t>(end);
      o.done_unix_ns = t0 + off + static_cast<std::uint64_t>(end + 30000);
      recs[r].ops.push_back(o);
      recs[r].started = recs[r].completed = static_cast<std::uint64_t>(i + 1);
      recs[r].last_start_unix_ns = o.cpu_start_unix_ns;
      recs[r].last_done_unix_ns = o.done_unix_ns;
      recs[r].now_unix_ns = o.done_unix_ns + 1'000'000;
    }
  }
  snap.ranks = std::move(recs);
  return snap;
}

const Finding* find(const Analysis& a, const std::string& id) {
  for (const auto& f : a.findings)
    if (f.id == id) return &f;
  return nullptr;
}

}  // namespace

TEST(JobAnalysis, NamesTheLateRankAcrossHostsWithDifferentClocks) {
  for (int slow = 0; slow < 8; slow++) {
    Spec s;
    s.ranks = 8;
    s.slow = slow;
    s.delay_ns = 5e6;  // 10% of a 50 ms step
    s.seed = 10 + static_cast<std::uint64_t>(slow);
    auto a = analyze(make_job(s));
    ASSERT_EQ(a.comms.size(), 1u);
    EXPECT_EQ(a.comms[0].straggler, slow);
    EXPECT_EQ(a.comms[0].compared, 64u);
    const auto* f = find(a, "job.straggler");
    ASSERT_NE(f, nullptr);
    EXPECT_NE(f->message.find("rank " + std::to_string(slow) + " (host node" + std::to_string(slow / 2)),
              std::string::npos)
        << f->message;
    EXPECT_EQ(f->docs, "docs/job.md#job-straggler");
    // The GPU start skew against its host's other rank is the delay, a second witness.
    const auto& r = a.comms[0].ranks[static_cast<std::size_t>(slow)];
    EXPECT_TRUE(r.has_skew);
    EXPECT_NEAR(r.skew_ns, 5e6, 6e5);
  }
}

TEST(JobAnalysis, HealthyRunsNameNobody) {
  for (std::uint64_t seed = 1; seed <= 50; seed++) {
    Spec s;
    s.seed = seed;
    s.ranks = 2 + static_cast<int>(seed % 7);
    auto a = analyze(make_job(s));
    EXPECT_EQ(a.comms[0].straggler, -1) << "seed " << seed;
    EXPECT_EQ(find(a, "job.straggler"), nullptr);
    EXPECT_EQ(a.comms[0].verdict, "ok: no rank holds the others back");
  }
}

TEST(JobAnalysis, AConsistentButTinyLeadIsNotNamed) {
  // Always last, but by 0.3% of the step: below the wait share worth naming.
  Spec s;
  s.slow = 1;
  s.jitter_ns = 0;
  s.delay_ns = 150e3;
  auto a = analyze(make_job(s));
  EXPECT_EQ(a.comms[0].straggler, -1);
  EXPECT_EQ(a.comms[0].ranks[1].least, 64u);  // it is the least every time, the rule says "not worth naming"
}

TEST(JobAnalysis, TooFewCollectivesWaits) {
  Spec s;
  s.slow = 1;
  s.delay_ns = 20e6;
  s.ops = 8;
  auto a = analyze(make_job(s));
  EXPECT_EQ(a.comms[0].straggler, -1);
  EXPECT_NE(a.comms[0].verdict.find("waiting: 8 collectives compared"), std::string::npos);
}

TEST(JobAnalysis, OnlyCollectivesEveryRankCompletedAreCompared) {
  Spec s;
  s.slow = 2;
  s.delay_ns = 10e6;
  auto snap = make_job(s);
  // rank 0's ring lost its 10 oldest entries; rank 3's newest is still in flight.
  snap.ranks[0].ops.erase(snap.ranks[0].ops.begin(), snap.ranks[0].ops.begin() + 10);
  snap.ranks[3].ops.back().done_unix_ns = 0;
  auto a = analyze(snap);
  EXPECT_EQ(a.comms[0].compared, 53u);
  EXPECT_EQ(a.comms[0].straggler, 2);
}

TEST(JobAnalysis, HangNamesTheRankThatNeverStarted) {
  Spec s;
  auto snap = make_job(s);
  // Ranks 0, 1, 3 started op 64 and wait in it for 25 s; rank 2 stopped before it.
  for (auto& r : snap.ranks) {
    r.now_unix_ns += 25'000'000'000ull;
    if (r.rank == 2) continue;
    OpRecord o = r.ops.back();
    o.seq++;
    o.cpu_start_unix_ns = r.ops.back().done_unix_ns + 1000;
    o.gpu_start_ns = o.gpu_stop_ns = o.done_unix_ns = 0;
    r.ops.push_back(o);
    r.started++;
  }
  auto a = analyze(snap);
  ASSERT_TRUE(a.comms[0].hung);
  const auto* f = find(a, "job.hang");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::Fail);
  EXPECT_NE(f->message.find("behind: rank 2 (host node1, GPU 0, pid 1002) at 64 started"), std::string::npos)
      << f->message;
  EXPECT_NE(f->remedy.find("py-spy dump --pid 1002"), std::string::npos);
  EXPECT_EQ(a.findings.front().id, "job.hang");
  EXPECT_EQ(a.comms[0].verdict.rfind("HANG: rank 2", 0), 0u) << a.comms[0].verdict;
  // Under the hang time: not yet.
  Options o;
  o.hang_after_s = 30;
  EXPECT_FALSE(analyze(snap, o).comms[0].hung);
}

TEST(JobAnalysis, AnIdleJobIsNotAHang) {
  Spec s;
  auto snap = make_job(s);
  for (auto& r : snap.ranks) r.now_unix_ns += 120'000'000'000ull;  // two minutes with nothing in flight
  auto a = analyze(snap);
  EXPECT_FALSE(a.comms[0].hung);
  EXPECT_EQ(find(a, "job.hang"), nullptr);
}

TEST(JobAnalysis, EveryRankInsideTheSameOperationSaysSo) {
  Spec s;
  auto snap = make_job(s);
  for (auto& r : snap.ranks) {
    r.now_unix_ns += 40'000'000'000ull;
    OpRecord o = r.ops.back();
    o.seq++;
    o.cpu_start_unix_ns = r.ops.back().done_unix_ns + 1000;
    o.gpu_start_ns = o.gpu_stop_ns = o.done_unix_ns = 0;
    r.ops.push_back(o);
    r.started++;
  }
  auto a = analyze(snap);
  const auto* f = find(a, "job.hang");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("the operation itself does not complete"), std::string::npos);
}

TEST(JobAnalysis, AnEndedProcessIsNamedAndIsBehind) {
  Spec s;
  auto snap = make_job(s);
  snap.ranks[3].alive = false;
  auto a = analyze(snap);
  const auto* f = find(a, "job.process_ended");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("rank 3 (host node1, GPU 1, pid 1003)"), std::string::npos);
}

// Every rank inside the same operation, one of them stopped: only its state tells it apart.
static Snapshot all_in_one_operation(double waited_s) {
  Spec s;
  auto snap = make_job(s);
  for (auto& r : snap.ranks) {
    r.now_unix_ns += static_cast<std::uint64_t>(waited_s * 1e9);
    OpRecord o = r.ops.back();
    o.seq++;
    o.cpu_start_unix_ns = r.ops.back().done_unix_ns + 1000;
    o.gpu_start_ns = o.gpu_stop_ns = o.done_unix_ns = 0;
    r.ops.push_back(o);
    r.started++;
    r.process_state = "running";
  }
  return snap;
}

TEST(JobAnalysis, AStoppedRankInsideTheSameOperationIsTheOneTheHangWaitsFor) {
  auto snap = all_in_one_operation(40);
  snap.ranks[2].process_state = "stopped";
  auto a = analyze(snap);
  ASSERT_TRUE(a.comms[0].hung);
  EXPECT_EQ(a.comms[0].behind, std::vector<int>{2});
  EXPECT_EQ(a.comms[0].stopped, std::vector<int>{2});
  EXPECT_EQ(a.comms[0].verdict.rfind("HANG: rank 2 (host node1, GPU 0, pid 1002) is stopped", 0), 0u) << a.comms[0].verdict;
  const auto* h = find(a, "job.hang");
  ASSERT_NE(h, nullptr);
  EXPECT_NE(h->message.find("behind: rank 2 (host node1, GPU 0, pid 1002) at 65 started, stopped"), std::string::npos)
      << h->message;
  const auto* f = find(a, "job.process_stopped");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::Fail);
  EXPECT_NE(f->message.find("rank 2 (host node1, GPU 0, pid 1002) is stopped"), std::string::npos) << f->message;
  EXPECT_NE(f->remedy.find("kill -CONT 1002"), std::string::npos);
  EXPECT_NE(f->evidence.find("process state stopped"), std::string::npos);
  auto j = analysis_to_json(a, snap, {});
  EXPECT_EQ(j["comms"][0]["stopped"], json::array({2}));
  EXPECT_EQ(j["comms"][0]["ranks"][2]["process_state"], "stopped");
  EXPECT_TRUE(j["comms"][0]["ranks"][0]["process_state"] == "running");
}

TEST(JobAnalysis, AStoppedRankIsNamedBeforeTheHangTime) {
  auto snap = all_in_one_operation(2);
  snap.ranks[1].process_state = "traced";
  auto a = analyze(snap);
  EXPECT_FALSE(a.comms[0].hung);
  EXPECT_EQ(find(a, "job.hang"), nullptr);
  const auto* f = find(a, "job.process_stopped");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("rank 1 (host node0, GPU 1, pid 1001) is held by a debugger"), std::string::npos) << f->message;
  EXPECT_EQ(a.comms[0].verdict.rfind("STOPPED: rank 1", 0), 0u) << a.comms[0].verdict;
  EXPECT_EQ(a.comms[0].straggler, -1);
}

TEST(JobAnalysis, EveryRankStoppedIsASuspendedJobNotAHang) {
  auto snap = all_in_one_operation(600);
  for (auto& r : snap.ranks) r.process_state = "stopped";
  auto a = analyze(snap);
  EXPECT_FALSE(a.comms[0].hung);
  EXPECT_TRUE(a.comms[0].suspended);
  EXPECT_EQ(find(a, "job.hang"), nullptr);
  EXPECT_EQ(find(a, "job.process_stopped"), nullptr);
  ASSERT_NE(find(a, "job.suspended"), nullptr);
  EXPECT_EQ(find(a, "job.suspended")->severity, Severity::Info);
  EXPECT_EQ(a.comms[0].verdict.rfind("SUSPENDED", 0), 0u);
  // An ended rank with the live ones all stopped: still a suspension of what runs.
  snap.ranks[0].alive = false;
  a = analyze(snap);
  EXPECT_TRUE(a.comms[0].suspended);
  EXPECT_NE(find(a, "job.process_ended"), nullptr);
}

TEST(JobAnalysis, AStateNotKnownChangesNothing) {
  auto snap = all_in_one_operation(40);
  for (auto& r : snap.ranks) r.process_state.clear();
  auto a = analyze(snap);
  ASSERT_NE(find(a, "job.hang"), nullptr);
  EXPECT_NE(find(a, "job.hang")->message.find("the operation itself does not complete"), std::string::npos);
  EXPECT_EQ(find(a, "job.process_stopped"), nullptr);
}

TEST(JobAnalysis, MissingRanksAreSaid) {
  Spec s;
  s.ranks = 6;
  auto snap = make_job(s);
  snap.ranks.erase(snap.ranks.begin() + 4);  // rank 4 not read
  auto a = analyze(snap);
  EXPECT_EQ(a.comms[0].missing, std::vector<int>{4});
  const auto* f = find(a, "job.ranks_missing");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->evidence.find("not read: rank(s) 4"), std::string::npos);
}

TEST(JobAnalysis, SlowConnectionFromNetworkSteps) {
  Spec s;
  auto snap = make_job(s);
  for (auto& r : snap.ranks) {
    int peer = (r.rank + 1) % s.ranks;
    PeerRecord p;
    p.peer = peer;
    p.send = true;
    p.steps = 1000;
    p.wait_ns_sum = 1000 * (r.rank == 1 ? 400'000ull : 50'000ull);
    r.peers.push_back(p);
  }
  auto a = analyze(snap);
  const auto* f = find(a, "job.slow_link");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("rank 1 (host node0, GPU 1, pid 1001) -> rank 2 (host node1"), std::string::npos)
      << f->message;
  EXPECT_NE(f->message.find("8.0x"), std::string::npos);
}

TEST(JobAnalysis, BusyFractionsFromPrometheus) {
  Snapshot snap;
  for (int r = 0; r < 4; r++) {
    RankRecord rec;
    rec.job_id = "j";
    rec.comm = "ab";
    rec.rank = r;
    rec.nranks = 4;
    rec.host = "h" + std::to_string(r);
    rec.busy_fraction = r == 3 ? 0.20 : 0.31 + 0.005 * r;
    snap.ranks.push_back(rec);
  }
  auto a = analyze(snap);
  EXPECT_EQ(a.comms[0].straggler, 3);
  ASSERT_NE(find(a, "job.straggler"), nullptr);
  snap.ranks[3].busy_fraction = 0.305;
  EXPECT_EQ(analyze(snap).comms[0].straggler, -1);
}

TEST(JobAnalysis, BinomialTail) {
  EXPECT_DOUBLE_EQ(binomial_tail(0, 10, 0.3), 1.0);
  EXPECT_NEAR(binomial_tail(10, 10, 0.5), 1.0 / 1024, 1e-12);
  EXPECT_NEAR(binomial_tail(8, 16, 0.25), 0.0271, 1e-3);
  EXPECT_EQ(binomial_tail(11, 10, 0.5), 0.0);
}

TEST(JobAnalysis, EveryIdIsRegisteredOnce) {
  std::set<std::string> ids;
  for (const auto& f : registry()) EXPECT_TRUE(ids.insert(f.id).second) << f.id;
  EXPECT_THROW(registered_finding("job.nope", Severity::Warn, "", "", "", ""), Error);
}

TEST(JobRecords, JsonRoundTripAndRefusals) {
  Spec s;
  s.slow = 1;
  s.delay_ns = 8e6;
  auto snap = make_job(s);
  snap.ranks[0].peers.push_back({2, true, 10, 100, 2000, 1000});
  auto text = dump_json(snapshot_to_json(snap));
  auto back = parse_snapshot(text, "x.json");
  ASSERT_EQ(back.ranks.size(), snap.ranks.size());
  EXPECT_EQ(back.ranks[2].ops.size(), 64u);
  EXPECT_EQ(back.ranks[2].ops[5].gpu_stop_ns, snap.ranks[2].ops[5].gpu_stop_ns);
  EXPECT_EQ(back.ranks[0].peers.at(0).wait_ns_sum, 1000u);
  EXPECT_EQ(analyze(back).comms[0].straggler, 1);
  auto bad = [&](const std::string& from, const std::string& to) {
    auto t = text;
    auto at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    t.replace(at, from.size(), to);
    try {
      parse_snapshot(t, "x.json");
      ADD_FAILURE() << "accepted " << to;
      return std::string();
    } catch (const Error& e) {
      return std::string(e.what());
    }
  };
  EXPECT_NE(bad("\"nranks\": 4", "\"nranks\": 0").find("x.json: ranks[0]: 'rank' 0 of 'nranks' 0"), std::string::npos);
  EXPECT_NE(bad("\"schema_version\": 1", "\"schema_version\": 9").find("'schema_version' 9"), std::string::npos);
  EXPECT_NE(bad("\"pid\": 1000", "\"pid\": -1e400").find("x.json"), std::string::npos);
  EXPECT_NE(bad("\"pid\": 1000", "\"pid\": 1000, \"pid\": 1").find("appears twice"), std::string::npos);
  EXPECT_NE(bad("\"alive\": true", "\"alive\": 1").find("'alive'"), std::string::npos);
  // process_state: optional (records written before it have none), one of five words
  snap.ranks[1].process_state = "stopped";
  auto text2 = dump_json(snapshot_to_json(snap));
  EXPECT_EQ(parse_snapshot(text2, "x.json").ranks[1].process_state, "stopped");
  EXPECT_TRUE(parse_snapshot(text2, "x.json").ranks[1].stopped());
  EXPECT_EQ(back.ranks[1].process_state, "");
  auto at = text2.find("\"stopped\"");
  ASSERT_NE(at, std::string::npos);
  text2.replace(at, 9, "\"paused\"");
  try {
    parse_snapshot(text2, "x.json");
    ADD_FAILURE() << "accepted paused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'process_state'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'paused'"), std::string::npos) << e.what();
  }
}

TEST(JobSources, PrometheusAnswersOfAnotherShapeAreErrors) {
  std::map<std::string, std::string> answers;
  for (const auto& [name, q] : prometheus_queries("1m")) answers[name] = R"({"status":"success","data":{}})";
  answers["now"] = R"({"status":"success","data":{"resultType":"scalar","result":[1,"1800000000"]}})";
  try {
    prometheus_snapshot(answers, "prom");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("prom: query '"), std::string::npos) << e.what();
  }
  answers["info"] = R"({"status":"error","error":"bad_data: parse error"})";
  EXPECT_THROW(prometheus_snapshot(answers, "prom"), Error);
}

TEST(JobSources, PrometheusAnswersBecomeRecords) {
  const char* info = R"({"status":"success","data":{"resultType":"vector","result":[
    {"metric":{"job_id":"7","comm":"aa","rank":"0","host":"n1","gpu":"0000:1b:00.0","comm_name":"w","nranks":"2","pid":"10","cuda_device":"0"},"value":[1,"1"]},
    {"metric":{"job_id":"7","comm":"aa","rank":"1","host":"n2","gpu":"0000:1b:00.0","comm_name":"w","nranks":"2","pid":"11","cuda_device":"3"},"value":[1,"1"]},
    {"metric":{"job_id":"7","comm":"aa","rank":"5","host":"n2","nranks":"2"},"value":[1,"1"]}]}})";
  auto vec = [](const char* rank0, const char* rank1) {
    return std::string(R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"job_id":"7","comm":"aa","rank":"0","host":"n1"},"value":[1,")") +
           rank0 + R"("]},{"metric":{"job_id":"7","comm":"aa","rank":"1","host":"n2"},"value":[1,")" + rank1 + R"("]}]}})";
  };
  std::map<std::string, std::string> answers = {
      {"info", info}, {"busy", vec("0.30", "0.10")}, {"started", vec("100", "99")}, {"completed", vec("99", "99")},
      {"oldest", vec("1799999980", "NaN")}, {"progress", vec("1799999970", "1799999970")},
      {"ended", R"({"status":"success","data":{"resultType":"vector","result":[]}})"},
      {"now", R"({"status":"success","data":{"resultType":"scalar","result":[1,"1800000000"]}})"}};
  auto snap = prometheus_snapshot(answers, "prom");  // without the "stopped" query: an older caller's answers
  EXPECT_EQ(snap.ranks.at(1).process_state, "");
  answers["stopped"] =
      R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"job_id":"7","host":"n2","pid":"11"},"value":[1,"1"]}]}})";
  auto stopped = prometheus_snapshot(answers, "prom");
  EXPECT_EQ(stopped.ranks.at(1).process_state, "stopped");
  EXPECT_EQ(stopped.ranks.at(0).process_state, "");
  EXPECT_EQ(analyze(stopped).comms[0].verdict.rfind("HANG: rank 1 (host n2, GPU 3", 0), 0u) << analyze(stopped).comms[0].verdict;
  ASSERT_EQ(snap.ranks.size(), 2u);  // rank 5 of 2 is dropped
  EXPECT_EQ(snap.ranks[1].gpu, 3);
  EXPECT_DOUBLE_EQ(snap.ranks[0].busy_fraction, 0.30);
  auto a = analyze(snap);
  EXPECT_EQ(a.comms[0].straggler, -1);  // hung: the hang is the verdict
  EXPECT_TRUE(a.comms[0].hung);
  ASSERT_NE(find(a, "job.hang"), nullptr);
  EXPECT_NE(find(a, "job.hang")->message.find("behind: rank 1 (host n2, GPU 3"), std::string::npos);
}

TEST(JobSources, HttpUrls) {
  auto t = parse_http_url("http://prom.example:9091/sub/", 9090);
  EXPECT_EQ(t.host, "prom.example");
  EXPECT_EQ(t.port, 9091);
  EXPECT_EQ(t.path_prefix, "/sub");
  EXPECT_EQ(parse_http_url("[fe80::1]:9417", 1).host, "fe80::1");
  EXPECT_EQ(parse_http_url("node7", 9417).port, 9417);
  EXPECT_THROW(parse_http_url("https://x", 1), UsageError);
  EXPECT_THROW(parse_http_url("x:99999", 1), UsageError);
  EXPECT_THROW(parse_http_url("http://:80", 1), UsageError);
}
