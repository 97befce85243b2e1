// The fabric collector with its I/O replaced: when it discovers, when it only re-reads
// counters, what a failure leaves served, and how the exporter merges the fabric's checks.
#include "exporter/fabric_collector.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#ifdef FABSCOPE_TEST_ZLIB
#include <zlib.h>
#endif
#include <stdexcept>

#include "exporter/exporter.hpp"
#include "exporter/gzip.hpp"
#include "support/fixtures.hpp"

namespace fabscope::exporter {
namespace {

using fabric::Counter;

fabric::Subnet leaf_spine() {
  return fabric::load_subnet((testing::fixture("fabric-leaf-spine") / "fabric.json").string());
}

struct FakeFabric {
  fabric::Subnet fabric = leaf_spine();
  int sweeps = 0, counter_reads = 0;
  bool fail = false;
  std::uint64_t symbol_errors = 0;  // what the next counters read gives S-leaf1:7

  FabricOptions options(double discovery_interval) {
    FabricOptions o;
    o.discovery_interval_seconds = discovery_interval;
    o.counters_interval_seconds = 30;
    o.sweep_fn = [this](const fabric::SweepOptions&) {
      ++sweeps;
      if (fail) throw fabric::AccessError(fabric::AccessError::Kind::NoDevice, "no InfiniBand port");
      return fabric;
    };
    o.counters_fn = [this](fabric::Subnet& s, const fabric::SweepOptions&) {
      ++counter_reads;
      if (fail) throw Error("umad: send failed");
      const int n = s.find_guid(0x200000);
      (*s.nodes[n].port(7)->counters)[Counter::SymbolErrorCounter] = symbol_errors;
    };
    return o;
  }
};

std::uint64_t symbol_errors_at_leaf1_7(const FabricSnapshot& snap) {
  const int n = snap.view.subnet->find_guid(0x200000);
  return *(*snap.view.subnet->nodes[n].port(7)->counters)[Counter::SymbolErrorCounter];
}

TEST(FabricCollector, NothingServedBeforeTheFirstCollection) {
  FakeFabric f;
  FabricCollector c(f.options(300));
  EXPECT_EQ(c.snapshot()->view.subnet, nullptr);
  EXPECT_EQ(c.snapshot()->view.discovery.interval_seconds, 300);
  EXPECT_EQ(f.sweeps, 0);
}

TEST(FabricCollector, FirstCollectionDiscoversThenOnlyCountersUntilDiscoveryIsDue) {
  FakeFabric f;
  FabricCollector c(f.options(300));
  c.collect();
  EXPECT_EQ(f.sweeps, 1);
  ASSERT_NE(c.snapshot()->view.subnet, nullptr);
  f.symbol_errors = 9;
  c.collect();
  c.collect();
  EXPECT_EQ(f.sweeps, 1);
  EXPECT_EQ(f.counter_reads, 2);
  EXPECT_EQ(symbol_errors_at_leaf1_7(*c.snapshot()), 9u);
  EXPECT_EQ(c.snapshot()->view.counters.runs_total, 2u);
  EXPECT_GT(c.snapshot()->view.counters.last_success_timestamp_seconds, 0);
}

TEST(FabricCollector, DiscoversAgainOnceItsIntervalHasPassed) {
  FakeFabric f;
  FabricCollector c(f.options(0));
  c.collect();
  c.collect();
  EXPECT_EQ(f.sweeps, 2);
  EXPECT_EQ(f.counter_reads, 0);
}

TEST(FabricCollector, ErrorCountersGrowingBetweenCollectionsBecomeAFinding) {
  FakeFabric f;
  FabricCollector c(f.options(300));
  c.collect();
  f.symbol_errors = 40;
  c.collect();
  const auto& findings = c.snapshot()->findings;
  EXPECT_TRUE(std::any_of(findings.begin(), findings.end(),
                          [](const Finding& x) { return x.id == "fabric.errors_growing"; }));
}

TEST(FabricCollector, FailureKeepsTheLastCollectionAndCountsTheError) {
  FakeFabric f;
  FabricCollector c(f.options(300));
  c.collect();
  f.symbol_errors = 5;
  c.collect();
  f.fail = true;
  f.symbol_errors = 6;
  c.collect();
  auto snap = c.snapshot();
  ASSERT_NE(snap->view.subnet, nullptr);
  EXPECT_EQ(symbol_errors_at_leaf1_7(*snap), 5u);
  EXPECT_EQ(snap->view.counters.errors_total, 1u);
  EXPECT_EQ(snap->view.counters.runs_total, 2u);
  EXPECT_EQ(snap->view.discovery.errors_total, 0u);
}

TEST(FabricCollector, FailedFirstDiscoveryIsCountedAndRetried) {
  FakeFabric f;
  f.fail = true;
  FabricCollector c(f.options(300));
  c.collect();
  EXPECT_EQ(c.snapshot()->view.subnet, nullptr);
  EXPECT_EQ(c.snapshot()->view.discovery.errors_total, 1u);
  f.fail = false;
  c.collect();
  EXPECT_EQ(f.sweeps, 2);
  EXPECT_NE(c.snapshot()->view.subnet, nullptr);
}

TEST(FabricCollector, LinkGoneAtTheNextDiscoveryIsKeptAsMissing) {
  FakeFabric f;
  FabricCollector c(f.options(0));
  c.collect();
  EXPECT_TRUE(c.snapshot()->view.missing_links.empty());
  for (auto& n : f.fabric.nodes)
    for (auto& p : n.ports)
      if ((n.guid == 0x100000 && p.number == 1) || (n.guid == 0x200000 && p.number == 1)) p.remote_node = -1;
  f.fabric.rebuild_links();
  c.collect();
  auto missing = c.snapshot()->view.missing_links;
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].a.node_guid, 0x100000u);
  EXPECT_EQ(missing[0].b.node_guid, 0x200000u);
  EXPECT_EQ(missing[0].b.port, 1);
}

TEST(FabricCollector, ASnapshotNeverWaitsForACollectionInProgress) {
  FakeFabric f;
  FabricOptions o = f.options(300);
  std::mutex mu;
  std::condition_variable cv;
  bool entered = false, release = false;
  o.counters_fn = [&](fabric::Subnet&, const fabric::SweepOptions&) {
    std::unique_lock<std::mutex> lock(mu);
    entered = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });  // a fabric that is slow to answer
  };
  FabricCollector c(o);
  c.collect();
  const auto first = c.snapshot();
  std::thread slow([&] { c.collect(); });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return entered; });
  }
  // The counters read is stuck in the fabric: the last complete collection is served at once.
  EXPECT_EQ(c.snapshot(), first);
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  slow.join();
  EXPECT_NE(c.snapshot(), first);
  EXPECT_EQ(c.snapshot()->view.counters.runs_total, 1u);
}

TEST(FabricCollector, BackgroundThreadStopsPromptly) {
  FakeFabric f;
  FabricCollector c(f.options(300));
  c.start();
  c.stop();
  EXPECT_EQ(f.sweeps, 0);  // the first background collection waits one interval
}

TEST(ExporterWithFabric, FabricChecksJoinTheOneCheckStatusFamily) {
  testing::TempDir root;
  FakeFabric f;
  f.fabric.sms[1].state = fabric::SmState::Master;  // two masters
  auto c = std::make_shared<FabricCollector>(f.options(300));
  c->collect();
  ExporterOptions o;
  o.checks_interval_seconds = 0;
  Exporter ex(core::Root(root.path()), o);
  ex.set_fabric(c);
  auto fams = ex.scrape({});
  int status_families = 0;
  double multiple_masters = -1, sm_none = -1;
  bool link_family = false;
  for (const auto& fam : fams) {
    if (fam.name == "fabscope_fabric_link_up") link_family = true;
    if (fam.name != "fabscope_check_status") continue;
    ++status_families;
    for (const auto& s : fam.samples) {
      if (s.labels[0].second == "fabric.sm_multiple_masters") multiple_masters = s.value;
      if (s.labels[0].second == "fabric.sm_none") sm_none = s.value;
    }
  }
  EXPECT_EQ(status_families, 1);
  EXPECT_EQ(multiple_masters, 2);
  EXPECT_EQ(sm_none, 0);
  EXPECT_TRUE(link_family);
  EXPECT_NO_THROW(render_text(fams));
}

// The text of a scrape carries the fabric's families as its snapshot rendered them: the same
// exposition as rendering every family of scrape(), but for the scrape's own duration.
TEST(ExporterWithFabric, ScrapeTextAppendsTheSnapshotsRenderedFamilies) {
  testing::TempDir root;
  FakeFabric f;
  auto c = std::make_shared<FabricCollector>(f.options(300));
  c->collect();
  ExporterOptions o;
  o.checks_interval_seconds = 0;
  Exporter ex(core::Root(root.path()), o);
  ex.set_fabric(c);
  auto without_duration = [](const std::string& text) {
    std::istringstream in(text);
    std::multiset<std::string> lines;
    for (std::string l; std::getline(in, l);)
      if (l.rfind("fabscope_scrape_duration_seconds ", 0) != 0) lines.insert(l);
    return lines;
  };
  const auto snap = c->snapshot();
  ASSERT_TRUE(snap->text);
  EXPECT_EQ(*snap->text, render_text(fabric_families(snap->view)));
  const std::string text = ex.scrape_text({});
  EXPECT_NE(text.find(*snap->text), std::string::npos);
  EXPECT_EQ(without_duration(text), without_duration(render_text(ex.scrape({}))));
  // /metrics sends the node's part as the body and the snapshot's own text, not a copy, after it.
  HttpRequest req;
  req.method = "GET";
  req.path = "/metrics";
  const HttpResponse r = ex.handle(req, 1, {});
  ASSERT_TRUE(r.body);
  EXPECT_EQ(r.tail, snap->text);
  EXPECT_EQ(without_duration(*r.body + *r.tail), without_duration(text));
  // A failed collection renders the snapshot again with the collector's new numbers.
  f.fail = true;
  c->collect();
  ASSERT_NE(c->snapshot(), snap);
  EXPECT_EQ(*c->snapshot()->text, render_text(fabric_families(c->snapshot()->view)));
  EXPECT_NE(*c->snapshot()->text, *snap->text);
}

#ifdef FABSCOPE_TEST_ZLIB
// Every member of a gzip stream, decompressed and joined, as a reader such as Prometheus does.
std::string gunzip_all(const std::string& in) {
  std::string out;
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) throw std::runtime_error("inflateInit2");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  char buf[65536];
  while (true) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    const int rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0) break;
      inflateReset(&z);  // the next member
    } else if (rc != Z_OK) {
      inflateEnd(&z);
      throw std::runtime_error("not gzip");
    }
  }
  inflateEnd(&z);
  return out;
}

// Prometheus asks for gzip: the fabric's text goes out as the snapshot's gzip member after the
// node part's own member, and the two decompress to the plain exposition. Node mode (no fabric)
// never compresses.
TEST(ExporterWithFabric, GzipIsTheNodeMemberThenTheSnapshotsMember) {
  if (!gzip_available()) GTEST_SKIP() << "libz.so.1 not loadable";
  testing::TempDir root;
  FakeFabric f;
  auto c = std::make_shared<FabricCollector>(f.options(300));
  c->collect();
  ExporterOptions o;
  o.checks_interval_seconds = 0;
  Exporter ex(core::Root(root.path()), o);
  ex.set_fabric(c);
  HttpRequest req;
  req.method = "GET";
  req.path = req.target = "/metrics";
  const HttpResponse plain = ex.handle(req, 1, {});
  req.accepts_gzip = true;
  const HttpResponse gz = ex.handle(req, 1, {});  // the same batch: the same scrape, compressed
  ASSERT_TRUE(gz.body && gz.tail);
  EXPECT_EQ(gz.tail, c->snapshot()->text_gzip);   // shared, not compressed again
  auto header = [](const HttpResponse& r, const std::string& name) {
    for (const auto& [k, v] : r.headers)
      if (k == name) return v;
    return std::string();
  };
  EXPECT_EQ(header(gz, "Content-Encoding"), "gzip");
  EXPECT_EQ(header(plain, "Content-Encoding"), "");
  EXPECT_EQ(header(gz, "Vary"), "Accept-Encoding");
  EXPECT_EQ(gunzip_all(*gz.body + *gz.tail), *plain.body + *plain.tail);
  EXPECT_LT(gz.tail->size(), plain.tail->size() / 4);

  Exporter node_only(core::Root(root.path()), o);
  const HttpResponse n = node_only.handle(req, 2, {});
  EXPECT_EQ(header(n, "Content-Encoding"), "");
  EXPECT_FALSE(n.tail);
}
#endif

}  // namespace
}  // namespace fabscope::exporter
