// The host side of a run, without a GPU: buffer arithmetic, the sweep's order and columns, the
// report's environment and device list, and what `fabscope bench` prints and writes for a
// session (a fake one that runs the real sweep with made-up times).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "bench/buffers.hpp"
#include "bench/environment.hpp"
#include "bench/run.hpp"
#include "bench/sweep.hpp"
#include "core/error.hpp"
#include "core/json.hpp"
#include "support/fixtures.hpp"

using namespace fabscope::bench;

TEST(Buffers, LargestPlanOfTheSweepAtLeast256Bytes) {
  const auto& ag = describe(Collective::AllGather);
  BufferBytes b = buffers_for(ag, {8, 1024, 4096}, 4, 4, 1);
  EXPECT_EQ(b.send, 1024u);  // 4096 B over 4 ranks: 1 KiB blocks in, 4 KiB out
  EXPECT_EQ(b.recv, 4096u);
  BufferBytes tiny = buffers_for(ag, {8}, 4, 4, 1);  // an empty block
  EXPECT_EQ(tiny.send, 256u);
  EXPECT_EQ(tiny.recv, 256u);
  BufferBytes big = buffers_for(ag, {1 << 20}, 4, 4, 3);
  EXPECT_EQ(big.send, (1u << 20) / 4);
  EXPECT_EQ(big.recv, 1u << 20);
}

TEST(Buffers, RotationStepsAreWholeFootprintsThatFitBothBuffers) {
  BufferPlan p = describe(Collective::AllReduce).plan(256, 4, 2, 0);  // 1 KiB footprint
  Rotation r = rotation(p, 4, 8192, 4096);
  EXPECT_EQ(r.unit, 1024u);
  EXPECT_EQ(r.steps, 4u);
  EXPECT_EQ(r.offset(0), 0u);
  EXPECT_EQ(r.offset(5), 1024u);
  EXPECT_EQ(rotation(p, 4, 512, 512).steps, 1u);  // never fewer than one
  EXPECT_EQ(rotation(BufferPlan{}, 4, 512, 512).offset(7), 0u);
}

TEST(CheckJob, RootOutsideTheJobAndHypercubeOnOddRanksAreUsageErrors) {
  Options o = parse_options({"broadcast", "--root", "2"});
  EXPECT_THROW(check_job(o, 2), fabscope::UsageError);
  EXPECT_NO_THROW(check_job(o, 3));
  Options h = parse_options({"hypercube"});
  EXPECT_THROW(check_job(h, 3), fabscope::UsageError);
  EXPECT_NO_THROW(check_job(h, 4));
}

namespace {
// The real sweep with a time per size that grows with it; counts the measure calls.
Report fake_sweep(const Options& o, int nranks, bool prints, std::vector<std::string>* order,
                  const std::function<void(const Report&, const SizeResult&)>& row = {}) {
  const auto& d = describe(o.collective);
  const std::size_t ts = type_size(o.type);
  SweepSteps steps;
  steps.plan = [&](std::uint64_t bytes) { return d.plan(bytes / ts, ts, nranks, 0); };
  steps.measure = [&](const SizeResult& res, bool in_place) {
    if (order) order->push_back(std::to_string(res.cycle) + ":" + std::to_string(res.bytes) + (in_place ? "i" : "o"));
    Timing t = make_timing(d, nranks, res.bytes, 10.0 + res.bytes / 1000.0);
    t.wrong = 0;
    t.iterations = 20;
    return t;
  };
  steps.row = row;
  Report rep;
  rep.options = o;
  rep.env.nranks = nranks;
  return run_sweep(o, sweep_sizes(o.sweep), rep, prints, steps);
}
}  // namespace

TEST(Sweep, EverySizeOutOfPlaceThenInPlacePerCycle) {
  Options o = parse_options({"-b", "1K", "-e", "4K", "-N", "2", "--no-progress"});
  std::vector<std::string> order;
  Report r = fake_sweep(o, 2, true, &order);
  EXPECT_EQ(order, (std::vector<std::string>{"0:1024o", "0:1024i", "0:2048o", "0:2048i", "0:4096o", "0:4096i",
                                             "1:1024o", "1:1024i", "1:2048o", "1:2048i", "1:4096o", "1:4096i"}));
  ASSERT_EQ(r.results.size(), 6u);
  EXPECT_EQ(r.results[1].count, 512u);  // all_reduce float: count = bytes / 4
  EXPECT_GT(r.summary.avg_busbw, 0);
  EXPECT_TRUE(r.summary.checked);
}

TEST(Sweep, CountColumnIsTheCallsCountAndSizeTheLargerBuffer) {
  Options o = parse_options({"all_gather", "--sizes", "1000", "--no-progress"});
  Report r = fake_sweep(o, 4, true, nullptr);
  ASSERT_EQ(r.results.size(), 1u);
  EXPECT_EQ(r.results[0].count, 60u);   // 250 floats / 4 ranks = 62, rounded down to 16 bytes
  EXPECT_EQ(r.results[0].bytes, 960u);  // 4 blocks of 60 floats
}

TEST(Sweep, OutOfPlaceOnlyWhenAsked) {
  Options o = parse_options({"--sizes", "8", "--no-progress"});
  o.in_place = false;
  std::vector<std::string> order;
  Report r = fake_sweep(o, 2, true, &order);
  EXPECT_EQ(order, std::vector<std::string>{"0:8o"});
  EXPECT_FALSE(r.results[0].in_place.has_value());
}

TEST(Sweep, RowsOnlyOnThePrintingRank) {
  Options o = parse_options({"--sizes", "8,16", "--no-progress"});
  int rows = 0;
  auto row = [&](const Report& r, const SizeResult& s) {
    ++rows;
    EXPECT_EQ(r.results.back().bytes, s.bytes);
  };
  fake_sweep(o, 2, true, nullptr, row);
  EXPECT_EQ(rows, 2);
  fake_sweep(o, 2, false, nullptr, row);
  EXPECT_EQ(rows, 2);
}

TEST(Sweep, FinishRunsOnceAfterTheLastSizeBeforeTheSummary) {
  Options o = parse_options({"--sizes", "8,16", "-N", "2", "--no-progress"});
  const auto& d = describe(o.collective);
  std::vector<std::string> events;
  SweepSteps steps;
  steps.plan = [&](std::uint64_t bytes) { return d.plan(bytes / 4, 4, 2, 0); };
  steps.measure = [&](const SizeResult& res, bool) {
    events.push_back("measure");
    return make_timing(d, 2, res.bytes, 5.0);
  };
  steps.finish = [&](Report& r) {
    events.push_back("finish after " + std::to_string(r.results.size()));
    r.compute_load_busy_share = 0.5;
  };
  Report r = run_sweep(o, {8, 16}, Report{}, true, steps);
  ASSERT_EQ(events.size(), 9u);
  EXPECT_EQ(events.back(), "finish after 4");
  EXPECT_EQ(r.compute_load_busy_share, 0.5);
}

TEST(Environment, LauncherProcessesVersionsAndNcclVariables) {
  RunFacts f;
  f.hostname = "node1";
  f.launcher = Launcher::Mpi;
  f.launch_evidence = "OMPI_COMM_WORLD_SIZE=4";
  f.nranks = 4;
  f.nccl_version_code = 22803;
  f.cuda_driver_code = 13000;
  f.environ = {"PATH=/usr/bin", "NCCL_DEBUG=INFO", "NCCL_IB_HCA==mlx5_0", "NCCL_BROKEN", "MY_NCCL_X=1"};
  f.date_utc = "2026-11-23T18:00:00Z";
  Environment e = make_environment(f);
  EXPECT_EQ(e.launcher, "mpi");
  EXPECT_EQ(e.processes, 4);
  EXPECT_EQ(e.nccl_version, "2.28.3");
  EXPECT_EQ(e.cuda_driver, "13.0");
  EXPECT_EQ(e.cuda_runtime, "");  // unknown stays empty
  EXPECT_EQ(e.nccl_env, (std::map<std::string, std::string>{{"NCCL_DEBUG", "INFO"}, {"NCCL_IB_HCA", "=mlx5_0"}}));
  EXPECT_EQ(e.fabscope_version, FABSCOPE_VERSION);
  f.launcher = Launcher::Local;
  EXPECT_EQ(make_environment(f).processes, 1);  // one process drives every GPU
}

TEST(Environment, TimeStampsInTheirFormats) {
  EXPECT_TRUE(std::regex_match(utc_now(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"))) << utc_now();
  EXPECT_TRUE(std::regex_match(local_time_now(), std::regex(R"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")));
}

TEST(DeviceRecords, RoundTripWithLowerCasePciAndBoundedTexts) {
  DeviceRecord rec = make_device_record("node-a", "0000:1B:00.0", "NVIDIA H100 80GB HBM3", 4242, 1, 3);
  DeviceInfo d = device_info(rec);
  EXPECT_EQ(d.host, "node-a");
  EXPECT_EQ(d.pci_bus_id, "0000:1b:00.0");
  EXPECT_EQ(d.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d.pid, 4242);
  EXPECT_EQ(d.cuda_device, 1);
  EXPECT_EQ(d.rank, 3);
  DeviceInfo full = device_info(make_device_record(std::string(300, 'h'), "", "", 0, 0, 0));
  EXPECT_EQ(full.host, std::string(sizeof(rec.host), 'h'));  // cut to the field, never past it
}

TEST(DeviceRecords, NodesAndThisHostsPciAddresses) {
  std::vector<DeviceInfo> devs(3);
  devs[0].host = "a", devs[0].pci_bus_id = "0000:01:00.0";
  devs[1].host = "b", devs[1].pci_bus_id = "0000:02:00.0";
  devs[2].host = "a", devs[2].pci_bus_id = "0000:03:00.0";
  EXPECT_EQ(count_nodes(devs), 2);
  EXPECT_EQ(count_nodes({}), 1);
  EXPECT_EQ(pci_on_host(devs, "a"), (std::vector<std::string>{"0000:01:00.0", "0000:03:00.0"}));
}

namespace {
class FakeSession final : public Session {
 public:
  FakeSession(int nranks, bool prints, std::int64_t wrong) : nranks_(nranks), prints_(prints), wrong_(wrong) {}
  Report run(const Options& o, const std::function<void(const Report&, const SizeResult&)>& row) override {
    Report r = fake_sweep(o, nranks_, prints_, nullptr, row);
    if (wrong_) {
      r.results.front().out_of_place.wrong = wrong_;
      summarise(r);
    }
    return r;
  }
  int rank() const override { return 0; }
  int nranks() const override { return nranks_; }
  bool prints() const override { return prints_; }
  int nccl_version_code() const override { return 22803; }

 private:
  int nranks_;
  bool prints_;
  std::int64_t wrong_;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
}  // namespace

TEST(RunAndPrint, TextStreamsHeaderRowsThenSummary) {
  FakeSession s(2, true, 0);
  std::ostringstream out, err;
  int rc = run_and_print(s, parse_options({"--sizes", "8,1M", "--no-progress"}), "2026-11-23 18:00:00", out, err);
  EXPECT_EQ(rc, 0);
  std::string text = out.str();
  auto header = text.find("#       size");
  auto row8 = text.find("\n           8 ");
  auto row1m = text.find("\n     1048576 ");
  auto avg = text.find("# Avg bus bandwidth");
  ASSERT_NE(header, std::string::npos) << text;
  ASSERT_NE(row8, std::string::npos) << text;
  ASSERT_NE(row1m, std::string::npos) << text;
  ASSERT_NE(avg, std::string::npos) << text;
  EXPECT_LT(header, row8);
  EXPECT_LT(row8, row1m);
  EXPECT_LT(row1m, avg);
  EXPECT_EQ(err.str(), "");
}

TEST(RunAndPrint, JsonAndFilesOnThePrintingRankWrongValuesExitTwo) {
  FakeSession s(2, true, 3);
  std::string dir = ::testing::TempDir();
  Options o = parse_options({"--sizes", "8", "--json", "--no-progress", "--csv-file", dir + "bench-host.csv",
                             "-J", dir + "bench-host-nt.json"});
  std::ostringstream out, err;
  EXPECT_EQ(run_and_print(s, o, "2026-11-23 18:00:00", out, err), 2);
  auto j = fabscope::json::parse(out.str());
  EXPECT_EQ(j["summary"]["wrong_total"], 3);
  EXPECT_NE(slurp(dir + "bench-host.csv").find("8,"), std::string::npos);
  std::string nt = slurp(dir + "bench-host-nt.json");
  EXPECT_NE(nt.find("\"start_time\":\"2026-11-23 18:00:00\""), std::string::npos) << nt.substr(0, 300);
  EXPECT_NE(nt.find("22803"), std::string::npos);
  std::remove((dir + "bench-host.csv").c_str());
  std::remove((dir + "bench-host-nt.json").c_str());
}

TEST(RunAndPrint, OtherRanksPrintNothing) {
  FakeSession s(2, false, 0);
  std::ostringstream out, err;
  EXPECT_EQ(run_and_print(s, parse_options({"--sizes", "8", "--no-progress"}), "", out, err), 0);
  EXPECT_EQ(out.str(), "");
}

// --csv-file /dev/stdout or /dev/null: written in place, never renamed over (a link to /dev/null
// stands in for the device).
TEST(RunAndPrint, FileThatIsACharacterDeviceIsWrittenInPlace) {
  fabscope::testing::TempDir t;
  const auto link = t.path() / "null";
  std::filesystem::create_symlink("/dev/null", link);
  FakeSession s(2, true, 0);
  std::ostringstream out, err;
  Options o = parse_options({"--sizes", "8", "--no-progress", "--csv-file", link.string()});
  EXPECT_EQ(run_and_print(s, o, "", out, err), 0);
  EXPECT_EQ(err.str(), "");
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_TRUE(std::filesystem::is_character_file(link));
}

TEST(RunAndPrint, UnwritableFileIsReportedNotFatal) {
  FakeSession s(2, true, 0);
  std::ostringstream out, err;
  Options o = parse_options({"--sizes", "8", "--no-progress", "--csv-file", "/nonexistent-dir/x.csv"});
  EXPECT_EQ(run_and_print(s, o, "", out, err), 0);
  EXPECT_EQ(err.str(), "fabscope bench: /nonexistent-dir/x.csv: cannot write: No such file or directory\n");
}
