// The mesh section of `fabscope report`: the exposition reader, histogram_quantile's bucket
// interpolation against hand-computed values, one node's snapshot (text and JSON) with every way
// it can be unusable, and the node x node grid and page from SYNTHETIC snapshots of three nodes.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/json.hpp"
#include "report/exposition.hpp"
#include "report/load.hpp"
#include "report/mesh.hpp"
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

bool keep_all(std::string_view) { return true; }

std::size_t count_of(const std::string& html, const std::string& what) {
  std::size_t n = 0;
  for (auto p = html.find(what); p != std::string::npos; p = html.find(what, p + 1)) ++n;
  return n;
}

// The exporter's RTT bucket bounds (docs/metrics.md), as its exposition writes them.
const std::vector<std::string> kBounds = {"1e-06",  "2e-06",  "3e-06",  "4e-06",  "5e-06",  "6e-06", "8e-06",
                                          "1e-05",  "1.2e-05", "1.5e-05", "2e-05", "2.5e-05", "3e-05", "4e-05",
                                          "5e-05",  "6e-05",  "8e-05",  "0.0001", "0.00015", "0.0002", "0.0003",
                                          "0.0005", "0.001",  "0.002",  "0.005",  "0.01",   "0.02",  "0.05",
                                          "0.1",    "0.2",    "0.5",    "1"};

// One (peer, transport) series in the exporter's layout: `answered` probes all in the bucket
// whose upper bound is `le`, `timeouts` and `connects` lost.
struct Series {
  std::string peer, le;
  int answered = 0, timeouts = 0, connects = 0;
  std::string transport = "tcp";
};

std::string node_text(const std::vector<Series>& all) {
  std::string o =
      "# HELP fabscope_mesh_rtt_seconds Round-trip time of answered probes to the peer.\n"
      "# TYPE fabscope_mesh_rtt_seconds histogram\n";
  for (const auto& s : all) {
    const std::string l = "peer=\"" + s.peer + "\",transport=\"" + s.transport + "\"";
    int cum = 0;
    for (const auto& b : kBounds) {
      if (b == s.le) cum = s.answered;
      o += "fabscope_mesh_rtt_seconds_bucket{" + l + ",le=\"" + b + "\"} " + std::to_string(cum) + "\n";
    }
    o += "fabscope_mesh_rtt_seconds_bucket{" + l + ",le=\"+Inf\"} " + std::to_string(s.answered) + "\n";
    o += "fabscope_mesh_rtt_seconds_sum{" + l + "} 0.5\nfabscope_mesh_rtt_seconds_count{" + l + "} " +
         std::to_string(s.answered) + "\n";
  }
  o += "# TYPE fabscope_mesh_probes_sent_total counter\n";
  for (const auto& s : all)
    o += "fabscope_mesh_probes_sent_total{peer=\"" + s.peer + "\",transport=\"" + s.transport + "\"} " +
         std::to_string(s.answered + s.timeouts + s.connects) + "\n";
  o += "# TYPE fabscope_mesh_probes_answered_total counter\n";
  for (const auto& s : all)
    o += "fabscope_mesh_probes_answered_total{peer=\"" + s.peer + "\",transport=\"" + s.transport + "\"} " +
         std::to_string(s.answered) + "\n";
  o += "# TYPE fabscope_mesh_probe_errors_total counter\n";
  for (const auto& s : all)
    for (const char* r : {"timeout", "connect", "refused", "closed", "bad_reply"})
      o += "fabscope_mesh_probe_errors_total{peer=\"" + s.peer + "\",transport=\"" + s.transport + "\",reason=\"" + r +
           "\"} " + std::to_string(std::string(r) == "timeout" ? s.timeouts : std::string(r) == "connect" ? s.connects : 0) +
           "\n";
  o += "# TYPE fabscope_mesh_peer_up gauge\n";
  for (const auto& s : all)
    o += "fabscope_mesh_peer_up{peer=\"" + s.peer + "\",transport=\"" + s.transport + "\"} " +
         (s.answered ? "1" : "0") + "\n";
  o += "# TYPE fabscope_mesh_peers gauge\nfabscope_mesh_peers{state=\"listed\"} " + std::to_string(all.size()) + "\n";
  o += "# TYPE fabscope_build_info gauge\nfabscope_build_info{version=\"0.1.0\"} 1\n";
  return o;
}

// SYNTHETIC: node3 answers everyone slowly (1-2 ms, above tcp's 1 ms) and probes everyone slowly;
// node1 -> node2 loses 2 of 102 probes; node1 lists node4, which never answered; node2 sums a
// peer beyond its label limit under _other.
std::vector<Input> three_nodes() {
  std::vector<Input> v;
  v.push_back(input_from_mesh_text("node1.prom", "node1",
                                   node_text({{"node2", "5e-05", 100, 2, 0}, {"node3", "0.002", 100}, {"node4", "", 0, 0, 10}})));
  v.push_back(input_from_mesh_text("node2.prom", "node2",
                                   node_text({{"node1", "2.5e-05", 100}, {"node3", "0.002", 100}, {"_other", "2.5e-05", 50}})));
  v.push_back(input_from_mesh_text("node3.prom", "node3", node_text({{"node1", "0.002", 100}, {"node2", "0.002", 100}})));
  return v;
}

std::vector<const Input*> ptrs(const std::vector<Input>& v) {
  std::vector<const Input*> p;
  for (const auto& in : v) p.push_back(&in);
  return p;
}

const MeshPair* find_pair(const MeshGrid& g, const std::string& from, const std::string& to) {
  for (const auto& p : g.pairs)
    if (g.names[p.prober] == from && p.peer_label == to) return &p;
  return nullptr;
}

}  // namespace

// --- the exposition reader

TEST(Exposition, CommentsHelpTypeAndBlankLines_AreSkippedAndSamplesRead) {
  auto s = parse_exposition("n.prom",
                            "# HELP a_total Things \\\\ counted.\n# TYPE a_total counter\n\n   \n# any comment\n"
                            "a_total{x=\"1\",y=\"2\",} 3 1700000000000\n  b 4.5e-06\r\nc{} -Inf\nd NaN\ne +Inf\n",
                            keep_all);
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[0].name, "a_total");
  ASSERT_EQ(s[0].labels.size(), 2u);
  EXPECT_EQ(*s[0].label("y"), "2");
  EXPECT_EQ(s[0].value, 3);
  EXPECT_EQ(s[0].line, 6u);
  EXPECT_DOUBLE_EQ(s[1].value, 4.5e-06);
  EXPECT_TRUE(std::isinf(s[2].value) && s[2].value < 0);
  EXPECT_TRUE(std::isnan(s[3].value));
  EXPECT_TRUE(std::isinf(s[4].value) && s[4].value > 0);
}

TEST(Exposition, LabelValueEscapes_AreUnescaped) {
  auto s = parse_exposition("n.prom", "m{peer=\"a\\\"b\\\\c\\nd\"} 1\n", keep_all);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(*s[0].label("peer"), "a\"b\\c\nd");
}

TEST(Exposition, OnlyKeptNamesAreReturned_ButEveryLineIsChecked) {
  auto keep = [](std::string_view n) { return n.starts_with("fabscope_mesh_"); };
  auto s = parse_exposition("n.prom", "fabscope_port_state{device=\"mlx5_0\"} 4\nfabscope_mesh_peer_up{peer=\"x\"} 1\n", keep);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].name, "fabscope_mesh_peer_up");
  EXPECT_EQ(error_of([&] { parse_exposition("n.prom", "fabscope_port_state{device=\"mlx5_0} 4\n", keep); }),
            "n.prom:1: label 'device': the value's closing quote is missing");
}

TEST(Exposition, BadLines_AreRefusedNamingFileLineAndToken) {
  EXPECT_EQ(error_of([] { parse_exposition("n.prom", "ok 1\n<html>\n", keep_all); }),
            "n.prom:2: expected a metric name, a comment or an empty line, got '<html>'");
  EXPECT_EQ(error_of([] { parse_exposition("n.prom", "m{peer=\"a\\tb\"} 1\n", keep_all); }),
            "n.prom:1: label 'peer': escape \\t is not one of \\\\, \\\" and \\n");
  EXPECT_EQ(error_of([] { parse_exposition("n.prom", "m{peer=\"a\"} one\n", keep_all); }),
            "n.prom:1: m: value 'one' is not a number");
  EXPECT_EQ(error_of([] { parse_exposition("n.prom", "m{1x=\"a\"} 1\n", keep_all); }),
            "n.prom:1: m: expected a label name or '}'");
  EXPECT_EQ(error_of([] { parse_exposition("n.prom", "m{a=\"1\",a=\"2\"} 1\n", keep_all); }), "n.prom:1: m: label 'a' twice");
  EXPECT_EQ(error_of([] { parse_exposition("n.prom", "m{a=\"1\" b=\"2\"} 1\n", keep_all); }),
            "n.prom:1: m: expected ',' or '}' after label 'a'");
  EXPECT_EQ(error_of([] { parse_exposition("n.prom", "m\n", keep_all); }), "n.prom:1: m: the value is missing");
  EXPECT_EQ(error_of([] { parse_exposition("n.prom", "m 1 12.5\n", keep_all); }),
            "n.prom:1: m: timestamp '12.5' is not an integer (milliseconds)");
  EXPECT_EQ(error_of([] { parse_exposition("n.prom", "m 1 12 x\n", keep_all); }), "n.prom:1: m: text after the timestamp");
  EXPECT_EQ(error_of([] { parse_exposition("n.prom", "# TYPE m histo\n", keep_all); }),
            "n.prom:1: # TYPE m: 'histo' is not counter, gauge, histogram, summary or untyped");
  EXPECT_EQ(error_of([] { parse_exposition("n.prom", "{\"schema\": 1}\n", keep_all); }),
            "n.prom:1: expected a metric name, a comment or an empty line, got '{\"schema\": 1}'");
}

TEST(Exposition, Bounds_AreErrorsNotMemory) {
  ExpoLimits lim;
  lim.max_kept = 2;
  EXPECT_EQ(error_of([&] { parse_exposition("n.prom", "a 1\nb 2\nc 3\n", keep_all, lim); }),
            "n.prom:3: more than 2 samples of the kind read here");
  lim = {};
  lim.max_line_bytes = 8;
  EXPECT_EQ(error_of([&] { parse_exposition("n.prom", "a 1\nabcdefghij 2\n", keep_all, lim); }),
            "n.prom:2: line longer than 8 bytes");
  lim = {};
  lim.max_labels = 1;
  EXPECT_EQ(error_of([&] { parse_exposition("n.prom", "a{x=\"1\",y=\"2\"} 1\n", keep_all, lim); }),
            "n.prom:1: a: more than 1 labels");
}

TEST(Exposition, Values_AsTheFormatWritesThem) {
  double v = 0;
  EXPECT_TRUE(parse_expo_value("12", v) && v == 12);
  EXPECT_TRUE(parse_expo_value("+1.5e-06", v) && v == 1.5e-06);
  EXPECT_TRUE(parse_expo_value("-3", v) && v == -3);
  EXPECT_TRUE(parse_expo_value("inf", v) && std::isinf(v));
  EXPECT_TRUE(parse_expo_value("1e999", v) && std::isinf(v));
  for (const char* bad : {"", "0x10", "1,5", "++1", "1e", "infinity", "one", "1 "}) EXPECT_FALSE(parse_expo_value(bad, v)) << bad;
}

// --- histogram_quantile

TEST(MeshQuantile, InterpolatesInTheBucketHoldingTheRank_AsPrometheus) {
  // 100 observations: 10 in (1, 5] µs, 80 in (5, 10] µs, 10 in (10, 20] µs.
  std::vector<std::pair<double, double>> b = {{1e-6, 0}, {5e-6, 10}, {10e-6, 90}, {20e-6, 100}, {INFINITY, 100}};
  // p50: rank 50, in (5, 10] holding 11th-90th: 5 + 5 * (50 - 10) / 80 = 7.5 µs.
  EXPECT_NEAR(*histogram_quantile(0.5, b), 7.5e-6, 1e-12);
  // p99: rank 99, in (10, 20] holding 91st-100th: 10 + 10 * (99 - 90) / 10 = 19 µs.
  EXPECT_NEAR(*histogram_quantile(0.99, b), 19e-6, 1e-12);
  // p05: rank 5, in (1, 5]: 1 + 4 * 5 / 10 = 3 µs.
  EXPECT_NEAR(*histogram_quantile(0.05, b), 3e-6, 1e-12);
}

TEST(MeshQuantile, FirstBucketStartsAtZero_InfBucketGivesTheLargestFiniteBound) {
  EXPECT_NEAR(*histogram_quantile(0.5, {{4e-6, 10}, {INFINITY, 10}}), 2e-6, 1e-12);
  EXPECT_DOUBLE_EQ(*histogram_quantile(0.9, {{1, 0}, {2, 5}, {INFINITY, 10}}), 2);
}

TEST(MeshQuantile, UnsortedAndDippingCounts_AreSortedAndRaised) {
  // As read: out of order, and 20 µs below 10 µs (raised to 90).
  std::vector<std::pair<double, double>> b = {{INFINITY, 100}, {10e-6, 90}, {5e-6, 10}, {20e-6, 80}};
  EXPECT_DOUBLE_EQ(*histogram_quantile(0.95, b), 20e-6);  // rank 95 lies in +Inf's own 10
  EXPECT_NEAR(*histogram_quantile(0.5, b), 7.5e-6, 1e-12);
}

TEST(MeshQuantile, NoInfBucketNoObservationOrNaN_IsNoValue) {
  EXPECT_FALSE(histogram_quantile(0.5, {{1e-6, 1}, {2e-6, 2}}));
  EXPECT_FALSE(histogram_quantile(0.5, {{1e-6, 0}, {INFINITY, 0}}));
  EXPECT_FALSE(histogram_quantile(0.5, {{INFINITY, 5}}));
  EXPECT_FALSE(histogram_quantile(NAN, {{1e-6, 1}, {INFINITY, 1}}));
}

// --- one node's snapshot

TEST(MeshInput, TextSnapshot_GivesSeriesBucketsLossAndUp) {
  Input in = input_from_mesh_text("runs/node1.prom", "node1", node_text({{"node2", "5e-05", 100, 2, 0}}));
  EXPECT_EQ(in.kind, InputKind::Mesh);
  EXPECT_EQ(in.schema, "prometheus-text");
  EXPECT_EQ(in.label, "node1");
  const MeshDoc& m = in.mesh;
  EXPECT_EQ(m.node, "node1");
  EXPECT_EQ(m.format, "text");
  ASSERT_EQ(m.series.size(), 1u);
  const MeshSeries& s = m.series[0];
  EXPECT_EQ(s.peer, "node2");
  EXPECT_EQ(s.transport, "tcp");
  ASSERT_EQ(s.buckets.size(), 33u);
  EXPECT_TRUE(std::isinf(s.buckets.back().first));
  EXPECT_EQ(*s.sent, 102);
  EXPECT_EQ(*s.answered, 100);
  EXPECT_EQ(s.errors.at("timeout"), 2);
  EXPECT_EQ(*s.up, 1);
  EXPECT_EQ(*m.peers_listed, 1);
  MeshPair p = judge_mesh_series(s);
  EXPECT_NEAR(*p.p50_s, 45e-6, 1e-12);    // 100 in (40, 50] µs: 40 + 10 * 50 / 100
  EXPECT_NEAR(*p.p99_s, 49.9e-6, 1e-12);  // 40 + 10 * 99 / 100
  EXPECT_NEAR(*p.loss, 2.0 / 102, 1e-12);
  EXPECT_TRUE(p.lossy);
  EXPECT_FALSE(p.slow);
  EXPECT_EQ(*p.bound_s, 1e-3);
}

TEST(MeshInput, JsonDump_ReadsHistogramSuffixesAsTheTextDoes) {
  using fabscope::json;
  json fams = json::array();
  json rtt = {{"name", "fabscope_mesh_rtt_seconds"}, {"type", "histogram"}, {"help", "h"}, {"samples", json::array()}};
  json l = {{"peer", "node2"}, {"transport", "rdma_ib"}};
  for (auto [le, n] : std::vector<std::pair<std::string, int>>{{"4e-06", 0}, {"5e-06", 40}, {"6e-06", 100}, {"+Inf", 100}}) {
    json lb = l;
    lb["le"] = le;
    rtt["samples"].push_back({{"labels", lb}, {"value", n}, {"suffix", "_bucket"}});
  }
  rtt["samples"].push_back({{"labels", l}, {"value", 0.00052}, {"suffix", "_sum"}});
  fams.push_back(rtt);
  fams.push_back({{"name", "fabscope_mesh_probes_sent_total"}, {"type", "counter"}, {"help", "h"},
                  {"samples", json::array({{{"labels", l}, {"value", 100}}})}});
  fams.push_back({{"name", "fabscope_port_state"}, {"type", "gauge"}, {"help", "h"},
                  {"samples", json::array({{{"labels", {{"device", "mlx5_0"}}}, {"value", 4}}})}});
  json doc = {{"schema", "fabscope.metrics"}, {"schema_version", 1}, {"families", fams}};
  Input in = input_from_mesh_text("dumps/node1.json", "node1", doc.dump());
  EXPECT_EQ(in.kind, InputKind::Mesh);
  EXPECT_EQ(in.schema, "fabscope.metrics");
  EXPECT_EQ(in.mesh.format, "json");
  ASSERT_EQ(in.mesh.series.size(), 1u);
  MeshPair p = judge_mesh_series(in.mesh.series[0]);
  // p99: rank 99 in (5, 6] µs holding the 41st-100th: 5 + 1 * (99 - 40) / 60.
  EXPECT_NEAR(*p.p99_s, 5e-6 + 1e-6 * 59.0 / 60, 1e-12);
  EXPECT_TRUE(p.slow);  // above rdma_ib's 5 µs
  // Given positionally, the same file is a mesh input named after the file.
  Input pos = input_from_json_text("dumps/node7.json", doc.dump());
  EXPECT_EQ(pos.kind, InputKind::Mesh);
  EXPECT_EQ(pos.mesh.node, "node7");
  // A bad sample names its field.
  doc["families"][0]["samples"][0]["value"] = "many";
  EXPECT_EQ(error_of([&] { input_from_mesh_text("d.json", "n", doc.dump()); }),
            "d.json: field 'families[0].samples[0].value': expected a number, got string \"many\"");
}

TEST(MeshInput, UnusableSnapshots_AreRefusedNamingFileAndLine) {
  EXPECT_EQ(error_of([] { input_from_mesh_text("n.prom", "n", "fabscope_build_info{version=\"0.1.0\"} 1\n"); }),
            "n.prom: no fabscope_mesh_* series: not a snapshot of `fabscope exporter --mesh` (was it started with --mesh?)");
  EXPECT_EQ(error_of([] { input_from_mesh_text("n.prom", "n", "  \n"); }), "n.prom: empty file (no metrics)");
  EXPECT_EQ(error_of([] { input_from_mesh_text("n.prom", "n", "<!DOCTYPE html>\n"); }),
            "n.prom:1: expected a metric name, a comment or an empty line, got '<!DOCTYPE html>'");
  EXPECT_EQ(error_of([] { input_from_mesh_text("n.prom", "n", "# x\nfabscope_mesh_probes_sent_total{transport=\"tcp\"} 3\n"); }),
            "n.prom:2: fabscope_mesh_probes_sent_total: label 'peer' is missing");
  EXPECT_EQ(error_of([] {
              input_from_mesh_text("n.prom", "n",
                                   "fabscope_mesh_probes_sent_total{peer=\"a\",transport=\"tcp\"} 3\n"
                                   "fabscope_mesh_probes_sent_total{peer=\"a\",transport=\"tcp\"} 4\n");
            }),
            "n.prom:2: fabscope_mesh_probes_sent_total: the series is there twice (one node's snapshot has each series once)");
  EXPECT_EQ(error_of([] { input_from_mesh_text("n.prom", "n", "fabscope_mesh_probes_sent_total{peer=\"a\",transport=\"tcp\"} -1\n"); }),
            "n.prom:1: fabscope_mesh_probes_sent_total: value -1 is not a count (a finite number >= 0)");
  EXPECT_EQ(error_of([] {
              input_from_mesh_text("n.prom", "n", "fabscope_mesh_rtt_seconds_bucket{peer=\"a\",transport=\"tcp\",le=\"0.001\"} 3\n");
            }),
            "n.prom: fabscope_mesh_rtt_seconds of peer \"a\" transport \"tcp\" has no le=\"+Inf\" bucket");
  EXPECT_EQ(error_of([] {
              input_from_mesh_text("n.prom", "n",
                                   "fabscope_mesh_rtt_seconds_bucket{peer=\"a\",transport=\"tcp\",le=\"0.0001\"} 5\n"
                                   "fabscope_mesh_rtt_seconds_bucket{peer=\"a\",transport=\"tcp\",le=\"0.001\"} 2\n"
                                   "fabscope_mesh_rtt_seconds_bucket{peer=\"a\",transport=\"tcp\",le=\"+Inf\"} 5\n");
            }),
            "n.prom: fabscope_mesh_rtt_seconds of peer \"a\" transport \"tcp\": bucket le=\"0.001\" counts 2, fewer "
            "than le=\"0.0001\" (5); buckets are cumulative");
  EXPECT_EQ(error_of([] {
              input_from_mesh_text("n.prom", "n", "fabscope_mesh_rtt_seconds_bucket{peer=\"a\",transport=\"tcp\",le=\"soon\"} 3\n");
            }),
            "n.prom:1: fabscope_mesh_rtt_seconds_bucket: label 'le' \"soon\" is not a number");
  EXPECT_EQ(error_of([] { input_from_mesh_text("c.json", "n", "{\"schema\": \"fabscope.tune\", \"schema_version\": 1}"); })
                .substr(0, 14),
            "c.json: field ");  // read as that schema first: its own error
}

TEST(MeshInput, NameFromTheArgumentOrTheFile) {
  fabscope::testing::TempDir dir;
  const auto path = (dir.path() / "node9.prom").string();
  std::ofstream(path) << node_text({{"node1", "2e-05", 5}});
  EXPECT_EQ(load_mesh_file(path)[0].mesh.node, "node9");
  EXPECT_EQ(load_mesh_file("10.0.0.9:9418=" + path)[0].mesh.node, "10.0.0.9:9418");
  EXPECT_EQ(load_mesh_file("10.0.0.9:9418=" + path)[0].file, path);
}

// --- the grid and the page

TEST(MeshGrid, ThreeNodes_RowsProbersColumnsPeersWithValuesAndMarks) {
  auto in = three_nodes();
  MeshGrid g = build_mesh_grid(ptrs(in));
  EXPECT_EQ(g.names, (std::vector<std::string>{"node1", "node2", "node3", "node4"}));
  EXPECT_EQ(g.snapshot_of, (std::vector<int>{0, 1, 2, -1}));
  EXPECT_EQ(g.snapshots, 3u);
  EXPECT_TRUE(g.other);
  ASSERT_EQ(g.blocks.size(), 4u);
  EXPECT_FALSE(g.blocks[3].snapshot);
  EXPECT_EQ(g.pairs.size(), 8u);
  EXPECT_EQ(g.cells.size(), 8u);

  const MeshPair* lossy = find_pair(g, "node1", "node2");
  ASSERT_TRUE(lossy);
  EXPECT_TRUE(lossy->lossy);
  EXPECT_FALSE(lossy->slow);
  for (auto [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"node1", "node3"}, {"node2", "node3"}, {"node3", "node1"}, {"node3", "node2"}}) {
    const MeshPair* p = find_pair(g, from, to);
    ASSERT_TRUE(p) << from << " " << to;
    EXPECT_TRUE(p->slow) << from << " -> " << to;
    EXPECT_NEAR(*p->p50_s, 1.5e-3, 1e-12);   // 100 in (1, 2] ms
    EXPECT_NEAR(*p->p99_s, 1.99e-3, 1e-12);
    EXPECT_EQ(*p->loss, 0);
  }
  const MeshPair* fast = find_pair(g, "node2", "node1");
  EXPECT_NEAR(*fast->p50_s, 22.5e-6, 1e-12);  // 100 in (20, 25] µs
  EXPECT_FALSE(fast->slow || fast->lossy || fast->no_answer);
  const MeshPair* silent = find_pair(g, "node1", "node4");
  EXPECT_TRUE(silent->no_answer);
  EXPECT_FALSE(silent->p99_s);
  EXPECT_EQ(*silent->loss, 1);
  const MeshPair* other = find_pair(g, "node2", "_other");
  EXPECT_EQ(other->peer, g.names.size());
  // Cells: row node1 has node2 (lossy), node3 (slow), node4 (no answer); row node4 none.
  std::size_t marked = 0;
  for (const auto& c : g.cells) {
    EXPECT_NE(c.row, 3u);
    marked += c.slow || c.lossy || c.no_answer;
    if (c.col == g.blocks.size()) {
      EXPECT_EQ(c.row, 1u);
    }
  }
  EXPECT_EQ(marked, 6u);
}

// Real snapshots of three exporters probing each other on loopback (tests/fixtures/mesh-loopback).
TEST(MeshGrid, RealLoopbackSnapshots_EveryPairAnsweredOverTcp) {
  std::vector<Input> in;
  for (int n = 1; n <= 3; ++n) {
    const auto file = fabscope::testing::fixture("mesh-loopback") / ("node" + std::to_string(n) + ".prom");
    auto got = load_mesh_file("127.0.0.1:3941" + std::to_string(n) + "=" + file.string());
    ASSERT_EQ(got.size(), 1u);
    in.push_back(std::move(got[0]));
  }
  MeshGrid g = build_mesh_grid(ptrs(in));
  EXPECT_EQ(g.snapshots, 3u);
  EXPECT_EQ(g.pairs.size(), 6u);
  for (const auto& p : g.pairs) {
    ASSERT_TRUE(p.p50_s && p.p99_s);
    EXPECT_GT(*p.p50_s, 1e-6);
    EXPECT_LT(*p.p99_s, 1.0);
    EXPECT_LE(*p.p50_s, *p.p99_s);
    EXPECT_EQ(*p.loss, 0);
    EXPECT_FALSE(p.no_answer);
  }
}

TEST(MeshGrid, PeersMatchNodesByHostWithoutPortAndByShortName) {
  std::vector<Input> in;
  in.push_back(input_from_mesh_text("a.prom", "node1",
                                    node_text({{"node2.cluster.local:9418", "2e-05", 5}, {"10.0.0.3", "2e-05", 5}})));
  in.push_back(input_from_mesh_text("b.prom", "node2", node_text({{"node1:9418", "2e-05", 5}})));
  MeshGrid g = build_mesh_grid(ptrs(in));
  EXPECT_EQ(g.names, (std::vector<std::string>{"10.0.0.3", "node1", "node2"}));
  EXPECT_EQ(g.names[find_pair(g, "node1", "node2.cluster.local:9418")->peer], "node2");
  EXPECT_EQ(g.names[find_pair(g, "node2", "node1:9418")->peer], "node1");
}

TEST(MeshGrid, ASecondSnapshotOfANode_IsLeftOutWithANote) {
  std::vector<Input> in;
  in.push_back(input_from_mesh_text("a.prom", "node1", node_text({{"node2", "2e-05", 5}})));
  in.push_back(input_from_mesh_text("b.prom", "node1", node_text({{"node2", "2e-05", 5}})));
  MeshGrid g = build_mesh_grid(ptrs(in));
  EXPECT_EQ(g.snapshots, 1u);
  ASSERT_EQ(g.notes.size(), 1u);
  EXPECT_EQ(g.notes[0], "b.prom: a second snapshot of node node1 (the first: a.prom), left out");
}

TEST(MeshGrid, PastMaxBlocks_NamesAreGroupedAndTheWorstKept) {
  std::vector<Input> in;
  for (int i = 0; i < 10; ++i) {
    std::vector<Series> s;
    for (int k = 0; k < 10; ++k)
      if (k != i) s.push_back({"n" + std::to_string(k), i == 7 && k == 2 ? "0.005" : "2e-05", 10});
    in.push_back(input_from_mesh_text("n" + std::to_string(i) + ".prom", "n" + std::to_string(i), node_text(s)));
  }
  MeshGrid g = build_mesh_grid(ptrs(in), 4);
  EXPECT_EQ(g.block, 3u);
  ASSERT_EQ(g.blocks.size(), 4u);  // n0-n2, n3-n5, n6-n8, n9
  EXPECT_LE(g.cells.size(), 16u);
  std::size_t slow = 0;
  for (const auto& c : g.cells)
    if (c.slow) {
      ++slow;
      EXPECT_EQ(c.row, 2u);  // n7 in n6-n8
      EXPECT_EQ(c.col, 0u);  // n2 in n0-n2
      EXPECT_NEAR(*c.p99_s, 2e-3 + 3e-3 * 0.99, 1e-12);
    }
  EXPECT_EQ(slow, 1u);
}

TEST(MeshRender, Section_HasBothMapsEveryCellTitledMarksAndTheWorstPairs) {
  Report r;
  r.inputs = three_nodes();
  Rendered page = render(r);
  const std::string& html = page.html;
  EXPECT_NE(std::find(page.sections.begin(), page.sections.end(), "mesh"), page.sections.end());
  EXPECT_EQ(count_of(html, "<svg class=\"heatmap mesh-map\""), 2u);
  EXPECT_EQ(count_of(html, "<rect class=\"cell"), 16u);           // 8 cells in each map
  EXPECT_EQ(count_of(html, "><title>node1 \xE2\x86\x92 node2 (tcp): p50 45 \xC2\xB5s, p99 49.9 \xC2\xB5s over 100 answered probes; within the tcp bound 1 ms; loss 1.96% (2 lost of 102 finished, 102 sent), above 0.01%; up</title>"), 2u);
  EXPECT_EQ(count_of(html, "data-mark=\"slow\""), 8u);           // 4 slow pairs, two maps
  EXPECT_EQ(count_of(html, "data-mark=\"lossy\""), 4u);          // node1 -> node2 and -> node4
  EXPECT_EQ(count_of(html, "class=\"mark-slow\""), 8u);
  EXPECT_EQ(count_of(html, "class=\"mark-loss\""), 4u);
  EXPECT_EQ(count_of(html, "class=\"cell no-answer\""), 2u);
  EXPECT_EQ(count_of(html, "class=\"row-no-snapshot\" data-node=\"node4\""), 2u);
  EXPECT_NE(html.find("data-to=\"_other\""), std::string::npos);
  EXPECT_NE(html.find("data-p99-us=\"1990\""), std::string::npos);
  // The slowest pairs: no answer first, then p99 over the bound.
  auto slowest = html.find("<table class=\"mesh-pairs slowest\"");
  ASSERT_NE(slowest, std::string::npos);
  auto first = html.find("<tr class=\"mesh-pair\"", slowest);
  EXPECT_EQ(html.find("<tr class=\"mesh-pair\" data-from=\"node1\" data-to=\"node4\"", slowest), first);
  auto lossiest = html.find("<table class=\"mesh-pairs lossiest\"");
  ASSERT_NE(lossiest, std::string::npos);
  EXPECT_EQ(count_of(html.substr(lossiest), "<tr class=\"mesh-pair\""), 2u);
  // The summary names each node and its counts.
  EXPECT_NE(html.find("3 peer series: 1 with p99 above the bound, 2 with loss above 0.01%, 1 without an answer"),
            std::string::npos);
}

TEST(MeshRender, HostileLabels_AreEscaped) {
  Report r;
  r.inputs.push_back(input_from_mesh_text("x.prom", "<b>n</b>", node_text({{"<script>x</script>", "2e-05", 5}})));
  std::string html = render(r).html;
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_EQ(html.find("<b>n</b>"), std::string::npos);
}
