// `fabscope report` as a user runs it: what it writes and prints, and every unusable input
// refused with exit 3 and the file's name, writing nothing.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/json.hpp"
#include "support/cli_run.hpp"
#include "support/fixtures.hpp"

using fabscope::json;
using fabscope::testing::quote;
using fabscope::testing::run_fabscope;

namespace {

std::string golden(const std::string& rel) {
  return (std::filesystem::path(FABSCOPE_SOURCE_DIR) / "tests/golden" / rel).string();
}

using fabscope::testing::slurp;

void write(const std::filesystem::path& p, const std::string& text) { std::ofstream(p) << text; }

// Runs report on one bad input; expects exit 3, a message starting with the file, no output file.
void expect_refused(const std::string& file, const std::string& flag, const std::string& message_part) {
  fabscope::testing::TempDir t;
  auto out = t.path() / "r.html";
  auto r = run_fabscope("report " + flag + quote(file) + " -o " + quote(out.string()));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("fabscope report: error: " + file + ": "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(message_part), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(std::filesystem::exists(out.string() + ".tmp"));
}

}  // namespace

TEST(ReportCli, WritesTheFileAndPrintsItsPath) {
  fabscope::testing::TempDir t;
  auto out = t.path() / "report.html";
  auto r = run_fabscope("report " + quote(golden("check/rxe-vm.json")) + " " + quote(golden("bench/h200x2-all_reduce.json")) +
                        " -o " + quote(out.string()), "", false);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, out.string() + "\n");
  std::string html = slurp(out);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<section id=\"findings\""), std::string::npos);
  EXPECT_NE(html.find("<section id=\"bench\""), std::string::npos);
}

TEST(ReportCli, Json_DescribesWhatWasWritten) {
  fabscope::testing::TempDir t;
  auto out = t.path() / "report.html";
  auto nccl = fabscope::testing::fixture("nccl-tests/a3mega-h100x16-all_reduce.txt").string();
  auto r = run_fabscope("report --json " + quote(golden("bench/h200x2-all_reduce.json")) + " --nccl-tests " + quote(nccl) +
                        " --title 'H200 vs H100' -o " + quote(out.string()), "", false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  json j = json::parse(r.out);
  EXPECT_EQ(j["schema"], "fabscope.report");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["output"], out.string());
  EXPECT_EQ(j["bytes"], std::filesystem::file_size(out));
  EXPECT_EQ(j["sections"], json({"summary", "bench"}));
  ASSERT_EQ(j["inputs"].size(), 2u);
  EXPECT_EQ(j["inputs"][0]["schema"], "fabscope.bench");
  EXPECT_EQ(j["inputs"][1]["schema"], "nccl-tests");
  EXPECT_TRUE(j["inputs"][1]["schema_version"].is_null());
  EXPECT_EQ(j["inputs"][1]["label"], "a3mega-h100x16-all_reduce");
  EXPECT_NE(slurp(out).find("<title>H200 vs H100</title>"), std::string::npos);
}

TEST(ReportCli, DoctorOutput_IsAnInput) {
  fabscope::testing::TempDir t;
  auto doctor = t.path() / "node.json";
  auto d = run_fabscope("doctor --json --root " + quote(fabscope::testing::fixture("rxe-vm").string()), "", false);
  write(doctor, d.out);
  auto r = run_fabscope("report " + quote(doctor.string()) + " -o " + quote((t.path() / "r.html").string()), "", false);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  std::string html = slurp(t.path() / "r.html");
  EXPECT_NE(html.find("verdict-degraded"), std::string::npos);
  EXPECT_NE(html.find("Next steps on"), std::string::npos);
}

TEST(ReportCli, JobSnapshots_MakeOneJobSection) {
  fabscope::testing::TempDir t;
  auto out = t.path() / "job.html";
  auto dir = fabscope::testing::fixture("job-synthetic");
  auto r = run_fabscope("report --json --job " + quote((dir / "gpu-a.prom").string()) + " --job gpu-b=" +
                        quote((dir / "gpu-b.prom").string()) + " -o " + quote(out.string()), "", false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  json j = json::parse(r.out);
  EXPECT_EQ(j["sections"], json({"summary", "job"}));
  ASSERT_EQ(j["inputs"].size(), 2u);
  EXPECT_EQ(j["inputs"][0]["label"], "gpu-a");
  EXPECT_EQ(j["inputs"][1]["label"], "gpu-b");
  EXPECT_EQ(j["inputs"][1]["schema"], "prometheus-text");
  const std::string html = slurp(out);
  EXPECT_NE(html.find("<p class=\"job-missing\" data-missing=\"8-11\">"), std::string::npos);
  EXPECT_NE(html.find("<div class=\"job\" id=\"job-2\" data-job=\"pid-31337\">"), std::string::npos);
}

TEST(ReportCli, NoInput_IsAUsageError) {
  auto r = run_fabscope("report -o /dev/null");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("no input"), std::string::npos) << r.out;
}

TEST(ReportCli, BadInputs_Exit3NamingTheFile) {
  fabscope::testing::TempDir t;
  auto p = [&](const char* n) { return (t.path() / n).string(); };
  write(p("empty.json"), "");
  expect_refused(p("empty.json"), "", "empty file");
  std::string bench = slurp(golden("bench/h200x2-all_reduce.json"));
  write(p("cut.json"), bench.substr(0, 1000));
  expect_refused(p("cut.json"), "", "not valid JSON (truncated?)");
  write(p("env.json"), slurp(golden("env/rxe-vm.json")));
  expect_refused(p("env.json"), "", "schema 'fabscope.env' is not one report reads");
  json newer = json::parse(bench);
  newer["schema_version"] = 7;
  write(p("newer.json"), newer.dump());
  expect_refused(p("newer.json"), "", "schema_version 7 is newer than this fabscope reads (2)");
  expect_refused(p("missing.json"), "", "cannot open");
  write(p("log.txt"), "NCCL INFO Bootstrap : Using eth0\n");
  expect_refused(p("log.txt"), "--nccl-tests ", "no nccl-tests table");
  expect_refused(p("empty.json"), "--nccl-tests ", "no nccl-tests table");
  expect_refused(fabscope::testing::fixture("mesh-loopback/node1.prom").string(), "--job ",
                 "no fabscope_job_* series: not a snapshot of `fabscope exporter --jobs`");
  write(p("bad.prom"), "fabscope_job_operations_in_flight{job_id=\"j\",comm=\"0a\",rank=\"0\"} -2\n");
  auto r = run_fabscope("report --job " + quote(p("bad.prom")) + " -o " + quote(p("never.html")));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find(p("bad.prom") + ":1: fabscope_job_operations_in_flight: value -2 is not a count"), std::string::npos)
      << r.out;
  EXPECT_FALSE(std::filesystem::exists(p("never.html")));
}

TEST(ReportCli, UnwritableOutput_Exit3NamingIt) {
  auto r = run_fabscope("report " + quote(golden("check/rxe-vm.json")) + " -o /nonexistent-dir/r.html");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("/nonexistent-dir/r.html: cannot write"), std::string::npos) << r.out;
}

// -o names a character device or a FIFO: written in place, never renamed over (as root,
// `-o /dev/null` replaced the machine's /dev/null with the HTML file). A link to /dev/null stands in.
TEST(ReportCli, OutputThatIsACharacterDeviceIsWrittenInPlace) {
  fabscope::testing::TempDir t;
  const auto out = t.path() / "null";
  std::filesystem::create_symlink("/dev/null", out);
  auto r = run_fabscope("report " + quote(golden("check/rxe-vm.json")) + " -o " + quote(out.string()));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(std::filesystem::is_symlink(out));
  EXPECT_TRUE(std::filesystem::is_character_file(out));
  EXPECT_FALSE(std::filesystem::exists(out.string() + ".tmp"));
}

TEST(ReportCli, OutputThatIsAFifoIsWrittenToItsReaderOrRefusedWithoutOne) {
  fabscope::testing::TempDir t;
  const auto fifo = t.path() / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Nobody reads: an error naming it, not a hang (bounded by timeout all the same).
  auto r = run_fabscope("report " + quote(golden("check/rxe-vm.json")) + " -o " + quote(fifo.string()),
                        "timeout -s KILL 60");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find(fifo.string() + ": cannot write: a FIFO that nobody reads"), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
  // With a reader (opened before the run without waiting, drained while it runs), the page goes
  // through the FIFO.
  int rd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(rd, 0);
  std::atomic<bool> done{false};
  std::string page;
  std::thread reader([&] {
    char buf[4096];
    while (true) {
      pollfd p{rd, POLLIN, 0};
      ::poll(&p, 1, 50);
      ssize_t n = ::read(rd, buf, sizeof buf);
      if (n > 0) page.append(buf, static_cast<std::size_t>(n));
      else if (done) break;
    }
  });
  r = run_fabscope("report " + quote(golden("check/rxe-vm.json")) + " -o " + quote(fifo.string()), "timeout -s KILL 60");
  done = true;
  reader.join();
  ::close(rd);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
}
