// The job section of `fabscope report`: one node's fabscope_job_* snapshot (text and JSON) with
// every way it can be unusable, the per-communicator view (ranks missing, busbw per rank and size
// against its column's median, p50/p99 from the histogram as histogram_quantile computes them) and
// the page, from the SYNTHETIC snapshots of tests/fixtures/job-synthetic (two nodes of job 4242:
// rank 5 at 60% busbw from 1 MiB, rank 2 of the 12-rank "pp" comm stuck 95 s, ranks 8-11 of it on
// a node not given; and a one-rank job pid-31337).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/json.hpp"
#include "report/job.hpp"
#include "report/load.hpp"
#include "report/render.hpp"
#include "support/fixtures.hpp"

using namespace fabscope::report;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const fabscope::Error& e) {
    return e.what();
  }
  return "";
}

std::size_t count_of(const std::string& html, const std::string& what) {
  std::size_t n = 0;
  for (auto p = html.find(what); p != std::string::npos; p = html.find(what, p + 1)) ++n;
  return n;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Input fixture(const std::string& node) {
  const auto path = fabscope::testing::fixture("job-synthetic") / (node + ".prom");
  return input_from_job_text(node + ".prom", node, slurp(path));
}

std::vector<Input> two_nodes() { return {fixture("gpu-a"), fixture("gpu-b")}; }

std::vector<const Input*> ptrs(const std::vector<Input>& v) {
  std::vector<const Input*> p;
  for (const auto& in : v) p.push_back(&in);
  return p;
}

const JobRank* find_rank(const JobDoc& d, const std::string& comm, int rank) {
  for (const auto& r : d.ranks)
    if (r.comm == comm && r.rank == rank) return &r;
  return nullptr;
}

const JobCommView* find_comm(const JobSection& s, const std::string& comm) {
  for (const auto& j : s.jobs)
    for (const auto& c : j.comms)
      if (c.comm == comm) return &c;
  return nullptr;
}

const JobOpView* find_op(const JobCommView& c, const std::string& op) {
  for (const auto& o : c.ops)
    if (o.op == op) return &o;
  return nullptr;
}

std::size_t col_of(const JobOpView& op, std::uint64_t size) {
  return static_cast<std::size_t>(std::find(op.sizes.begin(), op.sizes.end(), size) - op.sizes.begin());
}

constexpr const char* kWorld = "9c1e5f0a7b3d2468";
constexpr const char* kPp = "3f8a2c4e6b0d1957";
constexpr double kT0 = 1764000000.0;

// The labels of one rank's series, as the exporter writes them.
const std::string kRank = "job_id=\"j1\",host=\"h1\",comm=\"00ff\",rank=\"0\",gpu=\"0000:18:00.0\"";
const std::string kInfo = "fabscope_job_comm_info{" + kRank + ",comm_name=\"\",nranks=\"2\",pid=\"7\",state=\"active\"} 1\n";
const std::string kAgg = kRank + ",op=\"AllReduce\",size=\"1024\"";

std::string text_error(const std::string& text) {
  return error_of([&] { input_from_job_text("n.prom", "n", text); });
}

}  // namespace

// --- one node's snapshot

TEST(JobInput, TextSnapshot_GivesEveryRankWithItsAggregatesHistogramsAndNetwork) {
  Input in = fixture("gpu-b");
  EXPECT_EQ(in.kind, InputKind::Job);
  EXPECT_EQ(in.schema, "prometheus-text");
  EXPECT_EQ(in.label, "gpu-b");
  const JobDoc& d = in.job;
  EXPECT_EQ(d.node, "gpu-b");
  EXPECT_EQ(d.format, "text");
  ASSERT_EQ(d.ranks.size(), 9u);  // 4 of the world comm, 4 of pp, 1 of pid-31337
  const JobRank* r = find_rank(d, kWorld, 5);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->job, "4242");
  EXPECT_EQ(r->host, "gpu-b");
  EXPECT_EQ(r->gpu, "0000:38:00.0");
  EXPECT_TRUE(r->info);
  EXPECT_EQ(r->comm_name, "");
  EXPECT_EQ(r->state, "active");
  EXPECT_EQ(*r->nranks, 8);
  EXPECT_EQ(*r->pid, 21005);
  EXPECT_EQ(*r->completed, 50 + 10 * 1000 + 3 * 200);
  EXPECT_EQ(*r->in_flight, 0);
  EXPECT_DOUBLE_EQ(*r->last_progress_unix_s, kT0 + 0.25 - 0.05);
  EXPECT_FALSE(r->oldest_in_flight_unix_s);
  ASSERT_EQ(r->aggs.size(), 14u);  // AllGather 3 sizes, AllReduce 11 (0 B to 256 MiB), (op, size) order
  EXPECT_EQ(r->aggs[0].op, "AllGather");
  EXPECT_EQ(r->aggs[3].op, "AllReduce");
  EXPECT_EQ(r->aggs[3].size_bytes, 0u);
  const JobAggSeries& a = r->aggs[3 + 6];  // AllReduce 1 MiB
  EXPECT_EQ(a.size_bytes, 1u << 20);
  EXPECT_EQ(*a.operations, 1000);
  EXPECT_EQ(*a.bytes, 1000.0 * (1 << 20));
  EXPECT_EQ(*a.bus_bytes, 1000.0 * (1 << 20) * 1.75);
  ASSERT_EQ(a.buckets.size(), 14u);  // 4^k µs, k = 0..12, and +Inf
  EXPECT_TRUE(std::isinf(a.buckets.back().first));
  EXPECT_DOUBLE_EQ(a.buckets[0].first, 1e-6);
  ASSERT_EQ(r->net.size(), 2u);
  EXPECT_EQ(r->net[0].peer, 4);
  EXPECT_EQ(r->net[0].direction, "recv");
  EXPECT_EQ(r->net[1].peer, 6);
  EXPECT_EQ(*r->net[1].wait_seconds, 2.25);
  const Input gpu_a = fixture("gpu-a");  // kept: stuck points into it
  const JobRank* stuck = find_rank(gpu_a.job, kPp, 2);
  ASSERT_TRUE(stuck);
  EXPECT_EQ(*stuck->in_flight, 1);
  EXPECT_DOUBLE_EQ(*stuck->oldest_in_flight_unix_s, kT0 - 94.5);
}

TEST(JobInput, JsonDump_ReadsTheSameSeriesAndPositionalFilesPickTheJob) {
  using fabscope::json;
  json l = {{"job_id", "j1"}, {"host", "h1"}, {"comm", "00ff"}, {"rank", "0"}, {"gpu", "g"}};
  json al = l;
  al["op"] = "AllReduce";
  al["size"] = "1048576";
  json info = l;
  info["nranks"] = "2";
  info["comm_name"] = "dp";
  json hist = {{"name", "fabscope_job_operation_seconds"}, {"type", "histogram"}, {"help", "h"}, {"samples", json::array()}};
  for (auto [le, n] : std::vector<std::pair<std::string, int>>{{"1.6e-05", 0}, {"6.4e-05", 100}, {"+Inf", 100}}) {
    json lb = al;
    lb["le"] = le;
    hist["samples"].push_back({{"labels", lb}, {"value", n}, {"suffix", "_bucket"}});
  }
  hist["samples"].push_back({{"labels", al}, {"value", 0.003}, {"suffix", "_sum"}});
  json fams = json::array();
  fams.push_back({{"name", "fabscope_job_comm_info"}, {"type", "gauge"}, {"help", "h"},
                  {"samples", json::array({{{"labels", info}, {"value", 1}}})}});
  fams.push_back(hist);
  fams.push_back({{"name", "fabscope_job_bus_bytes_total"}, {"type", "counter"}, {"help", "h"},
                  {"samples", json::array({{{"labels", al}, {"value", 100.0 * 1048576}}})}});
  fams.push_back({{"name", "fabscope_port_state"}, {"type", "gauge"}, {"help", "h"},
                  {"samples", json::array({{{"labels", {{"device", "mlx5_0"}}}, {"value", 4}}})}});
  json doc = {{"schema", "fabscope.metrics"}, {"schema_version", 1}, {"families", fams}};
  Input in = input_from_job_text("dumps/n1.json", "n1", doc.dump());
  EXPECT_EQ(in.kind, InputKind::Job);
  EXPECT_EQ(in.schema, "fabscope.metrics");
  EXPECT_EQ(in.job.format, "json");
  EXPECT_EQ(in.job.node, "n1");
  ASSERT_EQ(in.job.ranks.size(), 1u);
  const JobAggSeries& a = in.job.ranks[0].aggs.at(0);
  EXPECT_EQ(a.buckets.size(), 3u);
  EXPECT_DOUBLE_EQ(*a.seconds_sum, 0.003);
  // Given among the JSON files, a document with job series and no mesh series is the job's.
  Input pos = input_from_json_text("dumps/n7.json", doc.dump());
  EXPECT_EQ(pos.kind, InputKind::Job);
  EXPECT_EQ(pos.job.node, "n7");
  // Given to --mesh, it has no mesh series.
  EXPECT_EQ(error_of([&] { input_from_mesh_text("d.json", "n", doc.dump()); }).substr(0, 35),
            "d.json: no fabscope_mesh_* series: ");
  // With mesh series too, --job still reads the job; positionally it is the mesh snapshot.
  json both = doc;
  both["families"].push_back({{"name", "fabscope_mesh_probes_sent_total"}, {"type", "counter"}, {"help", "h"},
                              {"samples", json::array({{{"labels", {{"peer", "n2"}, {"transport", "tcp"}}}, {"value", 3}}})}});
  EXPECT_EQ(input_from_job_text("b.json", "n", both.dump()).kind, InputKind::Job);
  EXPECT_EQ(input_from_json_text("b.json", both.dump()).kind, InputKind::Mesh);
  // Neither: named for both.
  json neither = {{"schema", "fabscope.metrics"}, {"schema_version", 1}, {"families", json::array()}};
  EXPECT_EQ(error_of([&] { input_from_json_text("e.json", neither.dump()); }),
            "e.json: no fabscope_mesh_* or fabscope_job_* series: fabscope.metrics is read for the probe mesh "
            "(`exporter --mesh`) or the running jobs (`exporter --jobs`)");
  // A histogram sample without its suffix, a bad value: named by field.
  json cut = doc;
  cut["families"][1]["samples"][0].erase("suffix");
  EXPECT_EQ(error_of([&] { input_from_job_text("d.json", "n", cut.dump()); }),
            "d.json: field 'families[1].samples[0]': fabscope_job_operation_seconds: not a sample of its family (a "
            "histogram's samples have the suffix _bucket, _sum or _count; other families none)");
  cut = doc;
  cut["families"][2]["samples"][0]["value"] = "lots";
  EXPECT_EQ(error_of([&] { input_from_job_text("d.json", "n", cut.dump()); }),
            "d.json: field 'families[2].samples[0].value': expected a number, got string \"lots\"");
  EXPECT_EQ(error_of([] { input_from_job_text("c.json", "n", "{\"schema\": \"fabscope.tune\", \"schema_version\": 1}"); })
                .substr(0, 14),
            "c.json: field ");  // read as that schema first: its own error
}

TEST(JobInput, FilesThatAreNotAJobSnapshot_AreRefusedClearly) {
  EXPECT_EQ(text_error("fabscope_build_info{version=\"0.1.0\"} 1\nfabscope_mesh_peer_up{peer=\"a\",transport=\"tcp\"} 1\n"),
            "n.prom: no fabscope_job_* series: not a snapshot of `fabscope exporter --jobs` (was it started with --jobs?)");
  EXPECT_EQ(text_error("fabscope_job_processes{state=\"running\"} 0\nfabscope_job_series_dropped 0\n"),
            "n.prom: no communicator in it: its fabscope_job_* series are the exporter's own (no process with the "
            "profiler plugin ran on the node when it was saved)");
  EXPECT_EQ(text_error(" \n\n"), "n.prom: empty file (no metrics)");
  EXPECT_EQ(text_error("<!DOCTYPE html>\n"),
            "n.prom:1: expected a metric name, a comment or an empty line, got '<!DOCTYPE html>'");
}

TEST(JobInput, BadLines_AreRefusedNamingFileAndLine) {
  EXPECT_EQ(text_error(kInfo + "fabscope_job_operations_total{" + kAgg + "} 3 4 5\n"),
            "n.prom:2: fabscope_job_operations_total: text after the timestamp");
  EXPECT_EQ(text_error(kInfo + "fabscope_job_operations_total{" + kAgg + ",} three\n"),
            "n.prom:2: fabscope_job_operations_total: value 'three' is not a number");
  EXPECT_EQ(text_error("# TYPE fabscope_job_operations_total countr\n" + kInfo),
            "n.prom:1: # TYPE fabscope_job_operations_total: 'countr' is not counter, gauge, histogram, summary or untyped");
  // A line of another family is checked as well, though not read.
  EXPECT_EQ(text_error(kInfo + "fabscope_port_state{device=\"mlx5_0} 4\n"),
            "n.prom:2: label 'device': the value's closing quote is missing");
}

TEST(JobInput, MissingOrMalformedLabels_AreRefusedNamingTheLabel) {
  EXPECT_EQ(text_error("fabscope_job_operations_in_flight{host=\"h\",comm=\"00ff\",rank=\"0\"} 0\n"),
            "n.prom:1: fabscope_job_operations_in_flight: label 'job_id' is missing");
  EXPECT_EQ(text_error("fabscope_job_operations_in_flight{job_id=\"j\",host=\"h\",rank=\"0\"} 0\n"),
            "n.prom:1: fabscope_job_operations_in_flight: label 'comm' is missing");
  EXPECT_EQ(text_error("fabscope_job_operations_in_flight{job_id=\"j\",comm=\"00ff\"} 0\n"),
            "n.prom:1: fabscope_job_operations_in_flight: label 'rank' is missing");
  EXPECT_EQ(text_error("fabscope_job_operations_in_flight{job_id=\"\",comm=\"00ff\",rank=\"0\"} 0\n"),
            "n.prom:1: fabscope_job_operations_in_flight: label 'job_id' is empty");
  EXPECT_EQ(text_error("fabscope_job_operations_total{" + kRank + ",size=\"1024\"} 1\n"),
            "n.prom:1: fabscope_job_operations_total: label 'op' is missing");
  EXPECT_EQ(text_error("fabscope_job_operations_total{" + kRank + ",op=\"AllReduce\"} 1\n"),
            "n.prom:1: fabscope_job_operations_total: label 'size' is missing");
  EXPECT_EQ(text_error("fabscope_job_operations_total{" + kRank + ",op=\"AllReduce\",size=\"1000\"} 1\n"),
            "n.prom:1: fabscope_job_operations_total: label 'size' \"1000\" is not a size class's lower bound in bytes "
            "(0 or a power of 2)");
  EXPECT_EQ(text_error("fabscope_job_operations_in_flight{job_id=\"j\",comm=\"00ff\",rank=\"-1\"} 0\n"),
            "n.prom:1: fabscope_job_operations_in_flight: label 'rank' \"-1\" is not an integer from 0 to 2147483647");
  EXPECT_EQ(text_error("fabscope_job_operations_in_flight{job_id=\"j\",comm=\"<b>x\",rank=\"0\"} 0\n"),
            "n.prom:1: fabscope_job_operations_in_flight: label 'comm' \"<b>x\" is not a communicator hash (1 to 16 hex "
            "digits)");
  EXPECT_EQ(text_error("fabscope_job_network_wait_seconds_total{" + kRank + ",direction=\"send\"} 1\n"),
            "n.prom:1: fabscope_job_network_wait_seconds_total: label 'peer' is missing");
  EXPECT_EQ(text_error("fabscope_job_network_wait_seconds_total{" + kRank + ",peer=\"1\",direction=\"both\"} 1\n"),
            "n.prom:1: fabscope_job_network_wait_seconds_total: label 'direction' \"both\" is not send or recv");
  EXPECT_EQ(text_error("fabscope_job_operation_seconds_bucket{" + kAgg + ",le=\"soon\"} 1\n"),
            "n.prom:1: fabscope_job_operation_seconds_bucket: label 'le' \"soon\" is not a number");
}

TEST(JobInput, RankBeyondNranksOrOnTwoGpus_IsRefused) {
  EXPECT_EQ(text_error("fabscope_job_comm_info{job_id=\"j\",comm=\"00ff\",rank=\"4\",nranks=\"4\"} 1\n"),
            "n.prom:1: fabscope_job_comm_info: rank 4 is not below nranks 4");
  EXPECT_EQ(text_error("fabscope_job_comm_info{job_id=\"j\",comm=\"00ff\",rank=\"0\",nranks=\"0\"} 1\n"),
            "n.prom:1: fabscope_job_comm_info: label 'nranks' is 0");
  EXPECT_EQ(text_error(kInfo + "fabscope_job_operations_in_flight{job_id=\"j1\",host=\"h1\",comm=\"00ff\",rank=\"0\","
                               "gpu=\"0000:38:00.0\"} 0\n"),
            "n.prom:2: fabscope_job_operations_in_flight: rank 0 of comm 00ff has gpu \"0000:38:00.0\" here and "
            "\"0000:18:00.0\" at n.prom:1");
}

TEST(JobInput, DuplicateSeries_AreRefused) {
  const std::string twice = "the series is there twice (one node's snapshot has each series once)";
  EXPECT_EQ(text_error(kInfo + kInfo), "n.prom:2: fabscope_job_comm_info: " + twice);
  const std::string ops = "fabscope_job_operations_total{" + kAgg + "} 3\n";
  EXPECT_EQ(text_error(kInfo + ops + ops), "n.prom:3: fabscope_job_operations_total: " + twice);
  const std::string prog = "fabscope_job_last_progress_timestamp_seconds{" + kRank + "} 1764000000.5\n";
  EXPECT_EQ(text_error(prog + prog), "n.prom:2: fabscope_job_last_progress_timestamp_seconds: " + twice);
  const std::string b = "fabscope_job_operation_seconds_bucket{" + kAgg + ",le=\"1e-06\"} 1\n";
  EXPECT_EQ(text_error(b + "fabscope_job_operation_seconds_bucket{" + kAgg + ",le=\"1.0e-6\"} 1\n"),
            "n.prom:2: fabscope_job_operation_seconds_bucket: bucket le=\"1.0e-6\" is there twice");
  const std::string w = "fabscope_job_network_wait_seconds_total{" + kRank + ",peer=\"1\",direction=\"send\"} 1\n";
  EXPECT_EQ(text_error(w + w), "n.prom:2: fabscope_job_network_wait_seconds_total: " + twice);
}

TEST(JobInput, CountsThatAreNegativeOrNotFinite_AreRefused) {
  EXPECT_EQ(text_error(kInfo + "fabscope_job_operations_total{" + kAgg + "} -1\n"),
            "n.prom:2: fabscope_job_operations_total: value -1 is not a count (a finite number >= 0)");
  const std::string nan = text_error(kInfo + "fabscope_job_operation_seconds_sum{" + kAgg + "} NaN\n");
  EXPECT_TRUE(nan.starts_with("n.prom:2: fabscope_job_operation_seconds_sum: value ") &&
              nan.ends_with("nan is not a count (a finite number >= 0)"))
      << nan;  // printf's "nan" or "-nan"
  EXPECT_EQ(text_error(kInfo + "fabscope_job_bus_bytes_total{" + kAgg + "} +Inf\n"),
            "n.prom:2: fabscope_job_bus_bytes_total: value inf is not a count (a finite number >= 0)");
  EXPECT_EQ(text_error("fabscope_job_last_progress_timestamp_seconds{" + kRank + "} -5\n"),
            "n.prom:1: fabscope_job_last_progress_timestamp_seconds: value -5 is not a count (a finite number >= 0)");
}

TEST(JobInput, HistogramWithoutInfBucket_IsRefused) {
  EXPECT_EQ(text_error(kInfo + "fabscope_job_operation_seconds_bucket{" + kAgg + ",le=\"1e-06\"} 1\n" +
                       "fabscope_job_operation_seconds_bucket{" + kAgg + ",le=\"4e-06\"} 2\n"),
            "n.prom: fabscope_job_operation_seconds of job_id \"j1\" comm 00ff rank 0 op AllReduce size 1024 has no "
            "le=\"+Inf\" bucket");
}

TEST(JobInput, Bounds_AreErrorsNotMemory) {
  std::string text;
  for (int r = 0; r <= 4096; ++r)
    text += "fabscope_job_operations_in_flight{job_id=\"j\",comm=\"00ff\",rank=\"" + std::to_string(r) + "\"} 0\n";
  EXPECT_EQ(text_error(text),
            "n.prom:4097: fabscope_job_operations_in_flight: more than 4096 (job_id, comm, rank) series in one snapshot");
  text.clear();
  for (int b = 0; b <= 256; ++b)
    text += "fabscope_job_operation_seconds_bucket{" + kAgg + ",le=\"" + std::to_string(b) + "\"} 0\n";
  EXPECT_EQ(text_error(text), "n.prom:257: fabscope_job_operation_seconds_bucket: more than 256 buckets in one histogram");
}

TEST(JobInput, NameFromTheArgumentOrTheFile) {
  fabscope::testing::TempDir dir;
  const auto path = (dir.path() / "node9.prom").string();
  std::ofstream(path) << kInfo;
  EXPECT_EQ(load_job_file(path)[0].job.node, "node9");
  EXPECT_EQ(load_job_file("gpu-z=" + path)[0].job.node, "gpu-z");
  EXPECT_EQ(load_job_file("gpu-z=" + path)[0].file, path);
  EXPECT_THROW(load_job_file("gpu-z="), fabscope::UsageError);
}

// --- the view

TEST(JobView, TwoNodes_OneSubsectionPerJobWithItsCommunicators) {
  auto in = two_nodes();
  JobSection s = build_job_section(ptrs(in));
  EXPECT_EQ(s.files, 2u);
  EXPECT_EQ(s.ranks, 17u);
  EXPECT_TRUE(s.notes.empty());
  ASSERT_EQ(s.jobs.size(), 2u);
  EXPECT_EQ(s.jobs[0].job, "4242");
  EXPECT_EQ(s.jobs[1].job, "pid-31337");
  ASSERT_EQ(s.jobs[0].comms.size(), 2u);
  EXPECT_DOUBLE_EQ(*s.newest_progress_unix_s, kT0 + 0.25);

  const JobCommView* w = find_comm(s, kWorld);
  ASSERT_TRUE(w);
  EXPECT_EQ(*w->nranks, 8);
  EXPECT_EQ(w->ranks.size(), 8u);
  EXPECT_TRUE(w->missing.empty());
  EXPECT_EQ(w->hosts, (std::vector<std::string>{"gpu-a", "gpu-b"}));
  EXPECT_EQ(w->completed_min, 10650);
  EXPECT_EQ(w->completed_max, 10650);
  EXPECT_EQ(w->in_flight, 0);
  EXPECT_EQ(w->laggard, 7);  // progress 0.01 s per rank apart
  EXPECT_TRUE(w->network);

  const JobCommView* pp = find_comm(s, kPp);
  ASSERT_TRUE(pp);
  EXPECT_EQ(pp->comm_name, "pp");
  EXPECT_EQ(*pp->nranks, 12);
  EXPECT_EQ(pp->missing, (std::vector<int>{8, 9, 10, 11}));
  EXPECT_EQ(rank_ranges(pp->missing), "8-11");
  EXPECT_EQ(pp->in_flight, 1);
  EXPECT_EQ(pp->laggard, 2);
  EXPECT_DOUBLE_EQ(*pp->progress_oldest_unix_s, kT0 - 95);
  EXPECT_FALSE(pp->network);
}

TEST(JobView, SlowRank_IsMarkedBelowItsColumnsMedian) {
  auto in = two_nodes();
  JobSection s = build_job_section(ptrs(in));
  const JobCommView* w = find_comm(s, kWorld);
  ASSERT_TRUE(w);
  const JobOpView* ar = find_op(*w, "AllReduce");
  ASSERT_TRUE(ar);
  ASSERT_EQ(ar->sizes.size(), 11u);
  EXPECT_EQ(ar->sizes.front(), 0u);
  EXPECT_TRUE(ar->busbw);
  EXPECT_EQ(ar->below, 5u);  // rank 5 at 1, 4, 16, 64 and 256 MiB
  EXPECT_EQ(ar->below_rows, (std::vector<std::size_t>{5}));
  const std::size_t mib = col_of(*ar, 1 << 20);
  // busbw = bus bytes / seconds: 180 GB/s x 1 MiB / (1 MiB + 2 MiB) = 60 GB/s; rank 5 at 60% of it.
  EXPECT_NEAR(*ar->cells[0][mib].busbw_gbps, 60, 1e-9);
  EXPECT_NEAR(*ar->cells[5][mib].busbw_gbps, 36, 1e-9);
  EXPECT_NEAR(*ar->median_gbps[mib], 60, 1e-9);
  EXPECT_NEAR(*ar->cells[5][mib].ratio, 0.6, 1e-12);
  EXPECT_TRUE(ar->cells[5][mib].below);
  EXPECT_FALSE(ar->cells[4][mib].below);
  const std::size_t k256 = col_of(*ar, 256 << 10);
  EXPECT_FALSE(ar->cells[5][k256].below);  // below 1 MiB rank 5 runs as the others
  // Zero bytes: no busbw, a time.
  EXPECT_FALSE(ar->cells[0][0].busbw_gbps);
  EXPECT_TRUE(ar->cells[0][0].p50_s);
  // p50/p99 as histogram_quantile: 1000 operations of 1 MiB x 1.75 / 60 GB/s = 30.6 µs, all in the
  // bucket (16, 64] µs: 16 + 48 x 0.5 = 40 µs and 16 + 48 x 0.99 = 63.52 µs.
  EXPECT_NEAR(*ar->cells[0][mib].p50_s, 40e-6, 1e-12);
  EXPECT_NEAR(*ar->cells[0][mib].p99_s, 63.52e-6, 1e-12);
  const JobOpView* ag = find_op(*w, "AllGather");
  ASSERT_TRUE(ag);
  EXPECT_EQ(ag->below, 3u);
  EXPECT_EQ(ag->below_rows, (std::vector<std::size_t>{5}));
}

TEST(JobView, UntimedOperations_CountNoBytesInTheBusbw) {
  // 100 operations of 1 MiB counted, 50 of them timed (10 ms in all): the exporter's bus bytes are
  // the timed ones' (50 MiB), over their time.
  const std::string al = "job_id=\"j\",comm=\"0a\",rank=\"0\",op=\"Broadcast\",size=\"1048576\"";
  Report r;
  r.inputs.push_back(input_from_job_text("u.prom", "u",
                                         "fabscope_job_operations_total{" + al + "} 100\n"
                                         "fabscope_job_bus_bytes_total{" + al + "} 52428800\n"
                                         "fabscope_job_operation_seconds_bucket{" + al + ",le=\"0.001024\"} 50\n"
                                         "fabscope_job_operation_seconds_bucket{" + al + ",le=\"+Inf\"} 50\n"
                                         "fabscope_job_operation_seconds_sum{" + al + "} 0.01\n"
                                         "fabscope_job_operation_seconds_count{" + al + "} 50\n"));
  JobSection s = build_job_section({&r.inputs[0]});
  const JobOpView& op = s.jobs.at(0).comms.at(0).ops.at(0);
  EXPECT_NEAR(*op.cells[0][0].busbw_gbps, 50 * 1048576 / 0.01 / 1e9, 1e-9);
  EXPECT_EQ(*op.cells[0][0].timed, 50);
  EXPECT_NE(render(r).html.find("100 operations (50 of them timed)"), std::string::npos);
}

TEST(JobView, ARankInTwoFiles_IsKeptOnceWithANote) {
  std::vector<Input> in = {fixture("gpu-a"), fixture("gpu-a")};
  in[1].file = "again.prom";
  JobSection s = build_job_section(ptrs(in));
  EXPECT_EQ(s.ranks, 8u);
  ASSERT_EQ(s.notes.size(), 8u);
  EXPECT_EQ(s.notes[0], "again.prom: rank 0 of comm 3f8a2c4e6b0d1957 (job 4242) is in gpu-a.prom too; that one is kept");
}

TEST(JobView, RanksDisagreeingOnNranks_AreNoted) {
  std::vector<Input> in;
  in.push_back(input_from_job_text("a.prom", "a", "fabscope_job_comm_info{job_id=\"j\",comm=\"01\",rank=\"0\",nranks=\"2\"} 1\n"));
  in.push_back(input_from_job_text("b.prom", "b", "fabscope_job_comm_info{job_id=\"j\",comm=\"01\",rank=\"1\",nranks=\"4\"} 1\n"));
  JobSection s = build_job_section(ptrs(in));
  const JobCommView* c = find_comm(s, "01");
  ASSERT_TRUE(c);
  EXPECT_EQ(*c->nranks, 4);
  EXPECT_EQ(c->missing, (std::vector<int>{2, 3}));
  ASSERT_EQ(c->notes.size(), 1u);
  EXPECT_EQ(c->notes[0], "its ranks give different nranks (2, 4); the largest is used");
}

TEST(JobView, Helpers) {
  EXPECT_FALSE(job_median({}));
  EXPECT_EQ(*job_median({3, 1, 2}), 2);
  EXPECT_EQ(*job_median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(rank_ranges({0, 3, 4, 5, 9}), "0, 3-5, 9");
  EXPECT_EQ(rank_ranges({}), "");
}

TEST(JobView, PastMaxRows_ConsecutiveRanksMakeBlocksKeepingTheWorst) {
  JobOpView op;
  op.sizes = {1024};
  op.cells.assign(10, std::vector<JobCell>(1));
  for (std::size_t i = 0; i < 10; ++i) {
    op.cells[i][0].present = true;
    op.cells[i][0].busbw_gbps = 10.0 + static_cast<double>(i);
    op.cells[i][0].p50_s = 1e-5 * static_cast<double>(i + 1);
    op.cells[i][0].p99_s = 2e-5 * static_cast<double>(i + 1);
  }
  op.cells[7][0].busbw_gbps = 1;
  op.cells[7][0].below = true;
  auto blocks = job_blocks(op, 4);
  ASSERT_EQ(blocks.size(), 4u);  // 0-2, 3-5, 6-8, 9
  EXPECT_EQ(blocks[2].first, 6u);
  EXPECT_EQ(blocks[2].last, 8u);
  EXPECT_EQ(*blocks[2].cells[0].busbw_gbps, 1);
  EXPECT_EQ(blocks[2].cells[0].below, 1u);
  EXPECT_EQ(blocks[2].cells[0].present, 3u);
  EXPECT_NEAR(*blocks[2].cells[0].p99_s, 18e-5, 1e-15);
  EXPECT_EQ(blocks[3].first, 9u);
  EXPECT_EQ(job_blocks(op, 64).size(), 10u);
}

// --- the page

TEST(JobRender, Section_HasPlotsMarkedCellsMissingRanksAndNetworkWait) {
  Report r;
  r.inputs = two_nodes();
  Rendered page = render(r);
  const std::string& html = page.html;
  EXPECT_NE(std::find(page.sections.begin(), page.sections.end(), "job"), page.sections.end());
  EXPECT_EQ(count_of(html, "<div class=\"job\" id=\"job-"), 2u);
  EXPECT_EQ(count_of(html, "<tr class=\"job-comm-row\""), 3u);
  // A plot per (comm, op) with a bus bandwidth: world AllReduce, AllGather; pp AllReduce; Broadcast.
  EXPECT_EQ(count_of(html, "<svg class=\"plot\" id=\"plot-job-"), 4u);
  EXPECT_NE(html.find("id=\"plot-job-1-2-AllReduce\""), std::string::npos);
  // One line per rank, zero bytes left out of the log axis.
  EXPECT_NE(html.find("data-series=\"rank 5 (gpu-b)\" data-points=\"10\""), std::string::npos);
  EXPECT_EQ(count_of(html, "<td class=\"num below\""), 8u);
  EXPECT_NE(html.find("<tr class=\"job-rank has-below\" data-rank=\"5\" data-below=\"5\">"), std::string::npos);
  EXPECT_NE(html.find("60% of the median 60.00 GB/s, more than 10% below it"), std::string::npos);
  EXPECT_NE(html.find("<p class=\"job-missing\" data-missing=\"8-11\">"), std::string::npos);
  EXPECT_NE(html.find("95.2 s (rank 2)"), std::string::npos);  // pp: newest progress T0+0.25, rank 2's T0-95
  EXPECT_NE(html.find("40 \xC2\xB5s / 63.5 \xC2\xB5s"), std::string::npos);
  // Network wait, most first: rank 6 receiving from 5, then rank 4 sending to 5.
  auto net = html.find("<table class=\"job-network\"");
  ASSERT_NE(net, std::string::npos);
  EXPECT_EQ(html.find("<tr class=\"job-net\"", net),
            html.find("<tr class=\"job-net\" data-rank=\"6\" data-peer=\"5\" data-direction=\"recv\">", net));
  // The summary names each file's ranks.
  EXPECT_NE(html.find("9 ranks of 3 communicators"), std::string::npos);
}

TEST(JobRender, ManyRanks_DrawTheMedianTheLowestAndTheMarkedRanks) {
  std::string text;
  for (int r = 0; r < 40; ++r) {
    const std::string l = "job_id=\"big\",host=\"n" + std::to_string(r / 8) + "\",comm=\"0a\",rank=\"" + std::to_string(r) + "\"";
    text += "fabscope_job_comm_info{" + l + ",nranks=\"40\"} 1\n";
    for (int s : {1 << 20, 1 << 24}) {
      const std::string al = l + ",op=\"AllReduce\",size=\"" + std::to_string(s) + "\"";
      text += "fabscope_job_bus_bytes_total{" + al + "} 1e12\n";
      text += "fabscope_job_operation_seconds_sum{" + al + "} " + (r == 33 ? "20" : "10") + "\n";
    }
  }
  Report rep;
  rep.inputs.push_back(input_from_job_text("big.prom", "big", text));
  const std::string html = render(rep).html;
  EXPECT_NE(html.find("data-series=\"median of 40 ranks\" data-points=\"2\""), std::string::npos);
  EXPECT_NE(html.find("data-series=\"lowest rank of each size\" data-points=\"2\""), std::string::npos);
  EXPECT_NE(html.find("data-series=\"rank 33 (n4)\" data-points=\"2\""), std::string::npos);
  EXPECT_EQ(count_of(html, "<g class=\"series\""), 3u);
  EXPECT_EQ(count_of(html, "<td class=\"num below\""), 2u);
}

TEST(JobRender, HostileLabels_AreEscaped) {
  const std::string l = "job_id=\"<script>x</script>\",host=\"<b>h</b>\",comm=\"0a\",rank=\"0\",gpu=\"<i>\"";
  Report r;
  r.inputs.push_back(input_from_job_text("x.prom", "<b>n</b>",
                                         "fabscope_job_comm_info{" + l + ",nranks=\"2\",comm_name=\"<script>\"} 1\n"
                                         "fabscope_job_bus_bytes_total{" + l + ",op=\"<svg onload=x>\",size=\"8\"} 8\n"
                                         "fabscope_job_operation_seconds_sum{" + l + ",op=\"<svg onload=x>\",size=\"8\"} 1\n"));
  const std::string html = render(r).html;
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_EQ(html.find("<b>h</b>"), std::string::npos);
  EXPECT_EQ(html.find("<svg onload"), std::string::npos);
  EXPECT_EQ(html.find("<i>"), std::string::npos);
}

// The real captures of tests/fixtures/job-h200x4: what the programs issued is what the report reads.
Input real(const std::string& name) {
  const auto path = fabscope::testing::fixture("job-h200x4") / (name + ".prom");
  return input_from_job_text(name + ".prom", name, slurp(path));
}

TEST(JobInput, RealPyTorchCapture_EveryRankHasWhatItIssued) {
  Input in = real("torch-nvlink");
  ASSERT_EQ(in.job.ranks.size(), 4u);
  for (const auto& r : in.job.ranks) {
    EXPECT_EQ(r.job, "torchrun-127.0.0.1:29500");
    EXPECT_EQ(*r.nranks, 4);
    EXPECT_FALSE(r.gpu.empty());
    int checked = 0;
    for (const auto& a : r.aggs) {
      if (a.op != "AllReduce" && a.op != "AllGather" && a.op != "ReduceScatter") continue;
      if (a.size_bytes < 1024 || a.size_bytes > (256u << 20)) continue;
      bool power_of_4 = false;
      for (std::uint64_t s = 1024; s <= (256u << 20); s *= 4) power_of_4 |= a.size_bytes == s;
      if (!power_of_4) continue;
      EXPECT_EQ(*a.operations, 30) << a.op << " " << a.size_bytes << " rank " << r.rank;
      checked++;
    }
    EXPECT_EQ(checked, 30) << "rank " << r.rank;  // 3 ops x 10 sizes
  }
}

TEST(JobInput, RealNcclTestsSocketCapture_CountsAndNetworkPeers) {
  Input in = real("nccl-tests-socket");
  ASSERT_EQ(in.job.ranks.size(), 4u);
  for (const auto& r : in.job.ranks) {
    EXPECT_EQ(r.state, "finalized");
    for (const auto& a : r.aggs) {
      if (a.op != "AllReduce") continue;
      const bool swept = a.size_bytes == (1u << 20) || a.size_bytes == (4u << 20) || a.size_bytes == (16u << 20) ||
                         a.size_bytes == (64u << 20) || a.size_bytes == (256u << 20);
      EXPECT_EQ(*a.operations, swept ? 27 : 5) << a.size_bytes;
    }
    ASSERT_EQ(r.net.size(), 2u);  // a ring: one peer it sends to, one it receives from
    EXPECT_GT(*r.net[0].wait_seconds, 0);
  }
}
