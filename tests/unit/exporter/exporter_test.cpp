#include "exporter/exporter.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "support/fixtures.hpp"

namespace fabscope::exporter {
namespace {

namespace fs = std::filesystem;
using fabscope::testing::TempDir;

// The real procfs capture: hfi1_0 (1 port), mlx4_0 (2 ports), mlx5_0 (1 port, with hw_counters).
class ExporterOnCapture : public ::testing::Test {
 protected:
  void SetUp() override {
    fabscope::testing::unpack_ttar(fabscope::testing::fixture("procfs-infiniband/sys-class-infiniband-and-net.ttar"),
                                   dir.path());
    // The capture's mlx5_0 port 1 phys_state reads "4: ACTIVE", a port state name the kernel
    // never writes there (code 4 is PortConfigurationTraining): a hand edit upstream. The exporter
    // counts it as a read error (PhysStateNotTheKernelsNameForItsCode_IsAReadError); the other
    // tests start from the value a real mlx5 port in LinkUp shows.
    fabscope::testing::write_file(port_dir("mlx5_0", 1), "phys_state", "5: LinkUp\n");
  }
  Exporter make() {
    ExporterOptions o;
    o.checks_interval_seconds = 0;
    o.version = "test";
    return Exporter(core::Root(dir.path()), o);
  }
  fs::path port_dir(const std::string& dev, int port) {
    return dir.path() / "sys/class/infiniband" / dev / "ports" / std::to_string(port);
  }
  static bool has_line(const std::string& text, const std::string& line) {
    return text.find("\n" + line + "\n") != std::string::npos;
  }
  TempDir dir;
};

TEST_F(ExporterOnCapture, Scrape_ExportsDataWordsAsBytes) {
  auto ex = make();
  auto text = ex.scrape_text({});
  // counters/port_xmit_data of mlx5_0 port 1 is 2880761508848 four-byte words.
  EXPECT_TRUE(has_line(text, "fabscope_port_data_transmitted_bytes_total{device=\"mlx5_0\",port=\"1\"} 11523046035392"))
      << text;
}

TEST_F(ExporterOnCapture, Scrape_ExportsEveryPortOfEveryDevice) {
  auto ex = make();
  auto text = ex.scrape_text({});
  for (const char* p : {"device=\"hfi1_0\",port=\"1\"", "device=\"mlx4_0\",port=\"1\"", "device=\"mlx4_0\",port=\"2\"",
                        "device=\"mlx5_0\",port=\"1\""})
    EXPECT_NE(text.find(std::string("fabscope_port_state{") + p + "} 4"), std::string::npos) << p;
}

TEST_F(ExporterOnCapture, Scrape_ExportsHwCountersWithTheirFileName) {
  auto ex = make();
  EXPECT_TRUE(has_line(ex.scrape_text({}),
                       "fabscope_port_hw_events_total{device=\"mlx5_0\",port=\"1\",counter=\"out_of_sequence\"} 1"));
}

TEST_F(ExporterOnCapture, Scrape_ExportsRateInBytesPerSecond) {
  auto ex = make();
  EXPECT_TRUE(has_line(ex.scrape_text({}), "fabscope_port_rate_bytes_per_second{device=\"mlx4_0\",port=\"2\"} 5000000000"));
}

TEST_F(ExporterOnCapture, CleanCapture_CountsNoErrors) {
  auto ex = make();
  ex.scrape_text({});
  auto text = ex.scrape_text({});
  EXPECT_TRUE(has_line(text, "fabscope_scrape_errors_total{reason=\"read\"} 0")) << text;
  EXPECT_TRUE(has_line(text, "fabscope_scrape_errors_total{reason=\"counter_backwards\"} 0"));
}

TEST_F(ExporterOnCapture, PhysStateNotTheKernelsNameForItsCode_IsAValueUnreadNotAnErrorPerScrape) {
  fabscope::testing::write_file(port_dir("mlx5_0", 1), "phys_state", "4: ACTIVE\n");
  auto ex = make();
  ex.scrape_text({});
  auto text = ex.scrape_text({});  // the second scrape re-reads through the kept layout
  EXPECT_TRUE(has_line(text, "fabscope_values_unread{kind=\"bad_value\"} 1")) << text;
  EXPECT_TRUE(has_line(text, "fabscope_scrape_errors_total{reason=\"read\"} 0")) << text;
  EXPECT_TRUE(has_line(text, "fabscope_scrape_read_problems_total{kind=\"bad_value\"} 0")) << text;
  EXPECT_EQ(text.find("fabscope_port_physical_state{device=\"mlx5_0\""), std::string::npos);
  EXPECT_TRUE(has_line(text, "fabscope_port_physical_state{device=\"mlx4_0\",port=\"1\"} 5"));
}

TEST_F(ExporterOnCapture, GarbageCounterFile_IsAValueUnreadAndTheScrapeStillSucceeds) {
  fabscope::testing::write_file(port_dir("mlx5_0", 1), "counters/symbol_error", "\x01garbage\n");
  auto ex = make();
  auto text = ex.scrape_text({});
  // A control character: "unreadable or not a text value", as the probe notes it.
  EXPECT_TRUE(has_line(text, "fabscope_values_unread{kind=\"unreadable\"} 1")) << text;
  EXPECT_TRUE(has_line(text, "fabscope_scrape_errors_total{reason=\"read\"} 0")) << text;
  EXPECT_EQ(text.find("fabscope_port_symbol_errors_total{device=\"mlx5_0\""), std::string::npos);
  EXPECT_NE(text.find("fabscope_port_data_transmitted_bytes_total{device=\"mlx5_0\""), std::string::npos);
}

TEST_F(ExporterOnCapture, CleanCapture_HasNoValueUnread) {
  auto ex = make();
  ex.scrape_text({});
  auto text = ex.scrape_text({});
  for (const char* k : {"missing", "unreadable", "empty", "not_text", "bad_value"})
    EXPECT_TRUE(has_line(text, std::string("fabscope_values_unread{kind=\"") + k + "\"} 0")) << k << "\n" << text;
  EXPECT_EQ(text.find("fabscope_values_unread{kind=\"removed\""), std::string::npos);  // an event, not a value
}

// A value that could be read and no longer can is news once: counted when it joins, not again
// while it stays; it leaves the gauge when it reads well, and counts again if it breaks again.
TEST_F(ExporterOnCapture, ValueTurningUnreadable_IsCountedOnceAndLeavesWhenReadAgain) {
  auto ex = make();
  ex.scrape_text({});
  fabscope::testing::write_file(port_dir("mlx5_0", 1), "phys_state", "4: ACTIVE\n");
  for (int i = 0; i < 3; ++i) ex.scrape_text({});
  auto text = ex.scrape_text({});
  EXPECT_TRUE(has_line(text, "fabscope_scrape_errors_total{reason=\"read\"} 1")) << text;
  EXPECT_TRUE(has_line(text, "fabscope_scrape_read_problems_total{kind=\"bad_value\"} 1")) << text;
  EXPECT_TRUE(has_line(text, "fabscope_values_unread{kind=\"bad_value\"} 1")) << text;
  fabscope::testing::write_file(port_dir("mlx5_0", 1), "phys_state", "5: LinkUp\n");
  text = ex.scrape_text({});
  EXPECT_TRUE(has_line(text, "fabscope_values_unread{kind=\"bad_value\"} 0")) << text;
  EXPECT_TRUE(has_line(text, "fabscope_port_physical_state{device=\"mlx5_0\",port=\"1\"} 5")) << text;
  fabscope::testing::write_file(port_dir("mlx5_0", 1), "phys_state", "4: ACTIVE\n");
  text = ex.scrape_text({});
  EXPECT_TRUE(has_line(text, "fabscope_scrape_errors_total{reason=\"read\"} 2")) << text;
}

TEST_F(ExporterOnCapture, CounterGoingBackwards_IsCounted) {
  auto ex = make();
  ex.scrape_text({});
  fabscope::testing::write_file(port_dir("mlx5_0", 1), "counters/port_xmit_data", "5\n");
  auto text = ex.scrape_text({});
  EXPECT_TRUE(has_line(text, "fabscope_scrape_errors_total{reason=\"counter_backwards\"} 1")) << text;
  EXPECT_TRUE(has_line(text, "fabscope_port_data_transmitted_bytes_total{device=\"mlx5_0\",port=\"1\"} 20"));
}

TEST_F(ExporterOnCapture, DeviceListedButGone_IsCountedAndOthersAreExported) {
  // What a scrape sees when a device vanishes between listing the class and reading it.
  fs::create_symlink("../../devices/pci0000:00/gone/infiniband/mlx5_9", dir.path() / "sys/class/infiniband/mlx5_9");
  auto ex = make();
  auto text = ex.scrape_text({});
  EXPECT_TRUE(has_line(text, "fabscope_scrape_errors_total{reason=\"read\"} 1")) << text;
  EXPECT_TRUE(has_line(text, "fabscope_scrape_read_problems_total{kind=\"removed\"} 1")) << text;
  EXPECT_TRUE(has_line(text, "fabscope_scrape_read_problems_total{kind=\"bad_value\"} 0")) << text;
  EXPECT_NE(text.find("device=\"mlx5_0\""), std::string::npos);
  EXPECT_EQ(text.find("device=\"mlx5_9\""), std::string::npos);
}

TEST_F(ExporterOnCapture, DeviceRemovedBetweenScrapes_LeavesItsSeriesOut) {
  auto ex = make();
  ex.scrape_text({});
  fs::remove_all(dir.path() / "sys/class/infiniband/mlx4_0");
  auto text = ex.scrape_text({});
  EXPECT_EQ(text.find("device=\"mlx4_0\""), std::string::npos);
  EXPECT_TRUE(has_line(text, "fabscope_scrape_errors_total{reason=\"counter_backwards\"} 0"));
}

TEST_F(ExporterOnCapture, Handle_ServesMetricsWithTheTextFormatContentType) {
  auto ex = make();
  HttpRequest req;
  req.method = "GET";
  req.path = "/metrics";
  auto r = ex.handle(req, 1, {});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, kTextContentType);
  ASSERT_TRUE(r.body);
  EXPECT_NE(r.body->find("# TYPE fabscope_port_state gauge"), std::string::npos);
}

TEST_F(ExporterOnCapture, Handle_RequestsOfOneBatchShareOneScrape) {
  auto ex = make();
  HttpRequest req;
  req.method = "GET";
  req.path = "/metrics";
  auto a = ex.handle(req, 7, {});
  auto b = ex.handle(req, 7, {});
  auto c = ex.handle(req, 8, {});
  EXPECT_EQ(a.body.get(), b.body.get());
  EXPECT_NE(a.body.get(), c.body.get());
}

TEST_F(ExporterOnCapture, Handle_RefusesOtherMethodsWith405AndAllow) {
  auto ex = make();
  HttpRequest req;
  req.method = "POST";
  req.path = "/metrics";
  auto r = ex.handle(req, 1, {});
  EXPECT_EQ(r.status, 405);
  ASSERT_EQ(r.headers.size(), 1u);
  EXPECT_EQ(r.headers[0].second, "GET, HEAD");
}

TEST_F(ExporterOnCapture, Handle_UnknownPathIs404) {
  auto ex = make();
  HttpRequest req;
  req.method = "GET";
  req.path = "/metrics/../etc/passwd";
  EXPECT_EQ(ex.handle(req, 1, {}).status, 404);
}

TEST_F(ExporterOnCapture, Json_HasSchemaAndEveryFamily) {
  auto ex = make();
  auto fams = ex.scrape({});
  auto j = families_to_json(fams);
  EXPECT_EQ(j["schema"], "fabscope.metrics");
  EXPECT_EQ(j["schema_version"], 1);
  bool found = false;
  for (const auto& f : j["families"])
    if (f["name"] == "fabscope_port_data_received_bytes_total") found = true;
  EXPECT_TRUE(found);
}

// The real Soft-RoCE capture (tests/fixtures/rxe-vm): rxe0 and rxe1 have an empty fw_ver ("\n",
// as the kernel writes it for rxe) that every layout walk reads again. It is two values not
// read, not two new errors at every walk: the counter (and the alert on it) stays at 0.
TEST(ExporterOnRxe, StaticEmptyFwVer_IsTwoValuesUnreadAndNoErrorAtAnyWalk) {
  ExporterOptions o;
  o.checks_interval_seconds = 0;
  o.layout_max_age_seconds = 0;  // walk the devices on every scrape, as every 30 s in service
  o.version = "test";
  Exporter ex(core::Root(fabscope::testing::fixture("rxe-vm")), o);
  std::string text;
  for (int i = 0; i < 5; ++i) text = ex.scrape_text({});
  auto has = [&](const std::string& line) { return text.find("\n" + line + "\n") != std::string::npos; };
  EXPECT_TRUE(has("fabscope_values_unread{kind=\"empty\"} 2")) << text;
  EXPECT_TRUE(has("fabscope_scrape_errors_total{reason=\"read\"} 0")) << text;
  EXPECT_TRUE(has("fabscope_scrape_read_problems_total{kind=\"empty\"} 0")) << text;
  EXPECT_TRUE(has("fabscope_port_physical_state{device=\"rxe0\",port=\"1\"} 5")) << text;
}

// A device that appears later with a value not read is news once, then a value unread.
TEST(ExporterOnRxe, DeviceAddedWithAnEmptyValue_IsCountedOnce) {
  TempDir dir;
  fabscope::testing::copy_tree(fabscope::testing::fixture("rxe-vm"), dir.path());
  // rxe1 taken out (its class link and its device directory) and put back, as `rdma link add`
  // would create it.
  const fs::path link = dir.path() / "sys/class/infiniband/rxe1";
  const fs::path rxe1 = dir.path() / "sys/devices/virtual/infiniband/rxe1";
  const fs::path aside = dir.path() / "rxe1-aside";
  const fs::path target = fs::read_symlink(link);
  fs::remove(link);
  fs::rename(rxe1, aside);
  ExporterOptions o;
  o.checks_interval_seconds = 0;
  o.layout_max_age_seconds = 0;
  o.version = "test";
  Exporter ex(core::Root(dir.path()), o);
  auto text = ex.scrape_text({});
  auto has = [&](const std::string& line) { return text.find("\n" + line + "\n") != std::string::npos; };
  EXPECT_TRUE(has("fabscope_values_unread{kind=\"empty\"} 1")) << text;
  fs::rename(aside, rxe1);
  fs::create_symlink(target, link);
  for (int i = 0; i < 3; ++i) text = ex.scrape_text({});
  EXPECT_TRUE(has("fabscope_values_unread{kind=\"empty\"} 2")) << text;
  EXPECT_TRUE(has("fabscope_scrape_errors_total{reason=\"read\"} 1")) << text;
  EXPECT_TRUE(has("fabscope_scrape_read_problems_total{kind=\"empty\"} 1")) << text;
}

}  // namespace
}  // namespace fabscope::exporter
