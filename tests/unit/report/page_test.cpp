// The page as a whole, from the repository's fixtures: element ids are unique, the findings' docs
// links are absolute, sizes in tables have one form, and a run's hardware limit is drawn for that
// run only.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "report/html.hpp"
#include "report/load.hpp"
#include "report/render.hpp"
#include "support/fixtures.hpp"

using namespace fabscope::report;

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::filesystem::path src(const std::string& rel) { return std::filesystem::path(FABSCOPE_SOURCE_DIR) / rel; }

Input golden(const std::string& rel, const std::string& as) { return input_from_json_text(as, slurp(src("tests/golden/" + rel))); }

Input fixture(const std::string& rel) { return input_from_json_text(rel, slurp(fabscope::testing::fixture(rel))); }

// The report of the browser test (report_chromium.py): two nodes, a 2x H200 bench run, a simulated
// tune run and a 16-rank H100 nccl-tests run; then the real cluster and rdma runs.
Report every_section() {
  Report r;
  r.inputs.push_back(golden("check/rxe-vm.json", "rxe-vm.json"));
  r.inputs.push_back(golden("check/procfs-infiniband.json", "procfs-infiniband.json"));
  r.inputs.push_back(golden("bench/h200x2-all_reduce.json", "h200x2-all_reduce.json"));
  r.inputs.push_back(fixture("tune-simulated/seed1-all_reduce-all_gather.json"));
  for (auto& in : inputs_from_nccl_tests_text("a3mega-h100x16-all_reduce.txt",
                                              slurp(fabscope::testing::fixture("nccl-tests/a3mega-h100x16-all_reduce.txt"))))
    r.inputs.push_back(std::move(in));
  for (const char* f : {"cluster-runs/vm5-slow-node.json", "cluster-runs/mpirun4-port-down.json",
                        "cluster-runs/mpirun4-mtu.json", "rdma-vm/write-bw-64k.client.json",
                        "rdma-vm/read-bw-4k-64k-2qp.client.json", "rdma-vm/write-lat-8.client.json"})
    r.inputs.push_back(fixture(f));
  return r;
}

}  // namespace

// A check id repeats (three ports with link.rate_degraded are three rows); it was once written as
// data-id, which an id checker reads as the same id three times.
TEST(ReportPage, NoIdRepeats) {
  const std::string html = render(every_section()).html;
  static const std::regex attr(R"re(\s([a-z-]*id)="([^"]*)")re");
  std::map<std::string, int> seen;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), attr); it != std::sregex_iterator(); ++it)
    ++seen[(*it)[2]];
  ASSERT_GT(seen.size(), 10u);
  for (const auto& [id, n] : seen) EXPECT_EQ(n, 1) << "id \"" << id << "\" appears " << n << " times";
  EXPECT_NE(html.find("<tr class=\"finding\" id=\"finding-1\" data-check=\""), std::string::npos);
  std::size_t rows = 0;
  for (auto p = html.find("data-check=\"link.rate_degraded\""); p != std::string::npos;
       p = html.find("data-check=\"link.rate_degraded\"", p + 1))
    ++rows;
  EXPECT_EQ(rows, 3u);  // the three ports' rows are still there, told apart by their ids
}

// Opened from a mail attachment, a relative "docs/checks.md#..." points at nothing.
TEST(ReportPage, DocsLinksAreAbsoluteByDefault) {
  Report r;
  r.inputs.push_back(golden("check/rxe-vm.json", "rxe.json"));
  const std::string base = default_docs_url();
  EXPECT_TRUE(base.starts_with("file:///") || base.starts_with("https://") || base.starts_with("http://")) << base;
  EXPECT_TRUE(base.ends_with("/"));
  const std::string html = render(r).html;
  static const std::regex href(R"re(href="([^"#][^"]*)\")re");
  std::size_t n = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), href); it != std::sregex_iterator(); ++it, ++n)
    EXPECT_TRUE((*it)[1].str().starts_with(base + "docs/")) << (*it)[1];
  EXPECT_GT(n, 0u);
  EXPECT_NE(html.find("href=\"" + base + "docs/checks.md#os-memlock_limited\""), std::string::npos);
  // --docs-url ./ keeps them relative, for a report written beside the docs.
  r.docs_url = "./";
  EXPECT_NE(render(r).html.find("href=\"./docs/checks.md#os-memlock_limited\""), std::string::npos);
}

// The tuner table once read "1 KiB", "8.00 KiB", "512.0 KiB" in one column.
TEST(ReportPage, SizesInTablesHaveOneExactForm) {
  const std::string html = render(every_section()).html;
  static const std::regex cell(R"re(<td class="num" title="(\d+) B">([^<]*)</td>)re");
  static const std::regex form(R"re(\d{1,4} (B|KiB|MiB|GiB|TiB)( \+ \d{1,4} B)?|[\d,]+ B)re");
  std::size_t n = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), cell); it != std::sregex_iterator(); ++it, ++n) {
    EXPECT_TRUE(std::regex_match((*it)[2].str(), form)) << "size cell '" << (*it)[2] << "'";
    EXPECT_EQ((*it)[2].str(), format_size(std::stoull((*it)[1])));
  }
  EXPECT_GT(n, 50u);
  EXPECT_NE(html.find(">8 KiB + 1 B</td>"), std::string::npos);
  EXPECT_EQ(html.find(".00 KiB"), std::string::npos);
}

// The 2x H200 run knows its NVLink limit, the 16-rank H100 nccl-tests run on other machines knows
// none: the line is the H200 run's, named after it, in its colour.
TEST(ReportPage, ARunsLimitLineIsNamedAfterItsRun) {
  const std::string html = render(every_section()).html;
  const auto plot = html.find("<svg class=\"plot\" id=\"plot-busbw-all_reduce\"");
  ASSERT_NE(plot, std::string::npos);
  const std::string svg = html.substr(plot, html.find("</svg>", plot) - plot);
  static const std::regex ref(R"re(<g class="ref" data-ref="([^"]*)"( data-runs="([^"]*)")?><line[^>]*stroke="([^"]*)")re");
  std::vector<std::smatch> lines;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), ref); it != std::sregex_iterator(); ++it) lines.push_back(*it);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(lines[0][1].str().starts_with("h200x2-all_reduce: NVLink limit 450 GB/s")) << lines[0][1];
  EXPECT_EQ(lines[0][3].str(), "h200x2-all_reduce");
  EXPECT_EQ(lines[0][4].str(), palette(0));  // the H200 run is the plot's first run
  // Drawn over the sizes the H200 run measured (to 1 GiB), not on to the H100 run's 8 GiB.
  static const std::regex x2(R"re(<g class="ref"[^>]*><line class="limit" x1="([^"]*)" x2="([^"]*)")re");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m, x2));
  EXPECT_LT(std::stod(m[2]), 760 - 36 - 50) << "the line runs to x " << m[2];
}

TEST(ReportPage, ALimitEveryRunSharesIsOneLineForAll) {
  Report r;
  r.inputs.push_back(golden("bench/h200x2-all_reduce.json", "default.json"));
  r.inputs.push_back(golden("bench/h200x2-all_reduce.json", "tuned.json"));
  const std::string html = render(r).html;
  EXPECT_NE(html.find("data-ref=\"NVLink limit 450 GB/s (18 links x 25 GB/s), every run\" data-runs=\"default, tuned\""),
            std::string::npos);
  EXPECT_EQ(html.find("data-ref=\"default: "), std::string::npos);
}
