// The report's HTML structure against golden outlines (tests/golden/report): which sections,
// tables, rows, plots and how many points each series has. Styles, coordinates and wording
// are left out, so a change of look does not break it, a lost section or point does.
// After an intended change, regenerate and review:
//   FABSCOPE_UPDATE_GOLDEN=1 <build>/tests/fabscope_report_tests --gtest_filter='ReportGolden*'
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "core/error.hpp"
#include "report/load.hpp"
#include "report/render.hpp"
#include "support/fixtures.hpp"
#include "support/golden.hpp"

using namespace fabscope::report;

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::filesystem::path src(const std::string& rel) { return std::filesystem::path(FABSCOPE_SOURCE_DIR) / rel; }

// One line per structural element, with its identifying attributes; runs of identical lines
// are folded into "xN".
std::string outline(const std::string& html) {
  static const std::regex tag(R"(<(section|h1|h2|h3|nav|table|tr|svg|g|figure|details|circle|rect|polygon|polyline|path|li|a)\b([^>]*)>)");
  static const std::regex attr(R"(\b(id|class|data-[a-z-]+|href)="([^"]*)\")");
  std::vector<std::string> lines;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), tag); it != std::sregex_iterator(); ++it) {
    std::string line = (*it)[1];
    std::string attrs = (*it)[2];
    for (auto a = std::sregex_iterator(attrs.begin(), attrs.end(), attr); a != std::sregex_iterator(); ++a)
      line += " " + (*a)[1].str() + "=" + (*a)[2].str();
    lines.push_back(line);
  }
  std::string out;
  for (std::size_t i = 0; i < lines.size();) {
    std::size_t j = i;
    while (j < lines.size() && lines[j] == lines[i]) ++j;
    out += lines[i] + (j - i > 1 ? " x" + std::to_string(j - i) : "") + "\n";
    i = j;
  }
  return out;
}

void compare(const std::string& name, const Report& r) {
  // The docs links' base is the build's (FABSCOPE_DOCS_URL): the outline names it DOCS_URL/.
  std::string html = render(r).html;
  for (auto p = html.find("href=\"" + default_docs_url()); p != std::string::npos;
       p = html.find("href=\"" + default_docs_url(), p + 1))
    html.replace(p + 6, default_docs_url().size(), "DOCS_URL/");
  std::string actual = outline(html);
  fabscope::testing::expect_golden_text("report/" + name + ".outline", actual);
}

Input json_input(const std::string& rel, const std::string& as) {
  return input_from_json_text(as, slurp(src("tests/golden/" + rel)));
}

}  // namespace

TEST(ReportGolden, NodesBenchAndNcclTests) {
  Report r;
  r.inputs.push_back(json_input("check/rxe-vm.json", "rxe-vm.json"));
  r.inputs.push_back(json_input("check/procfs-infiniband.json", "procfs-infiniband.json"));
  r.inputs.push_back(json_input("bench/h200x2-all_reduce.json", "h200x2-all_reduce.json"));
  for (auto& in : inputs_from_nccl_tests_text(
           "a3mega-h100x16-all_reduce.txt", slurp(fabscope::testing::fixture("nccl-tests/a3mega-h100x16-all_reduce.txt"))))
    r.inputs.push_back(std::move(in));
  compare("nodes-bench-nccl-tests", r);
}

TEST(ReportGolden, TuneSimulated) {
  Report r;
  r.inputs.push_back(input_from_json_text(
      "seed1-all_reduce-all_gather.json", slurp(fabscope::testing::fixture("tune-simulated/seed1-all_reduce-all_gather.json"))));
  compare("tune-simulated", r);
}

TEST(ReportRender, Tune_SaysSimulatedAndPlotsEveryVerifiedSize) {
  Report r;
  r.inputs.push_back(input_from_json_text(
      "t.json", slurp(fabscope::testing::fixture("tune-simulated/seed1-all_reduce-all_gather.json"))));
  const fabscope::tune::TuneResult& t = r.inputs[0].tune.run;
  ASSERT_TRUE(t.simulated);
  ASSERT_EQ(t.collectives.size(), 2u);
  std::size_t verified = 0, kept = 0;
  for (const auto& z : t.collectives[0].sizes) verified += z.verdict.pairs > 0, kept += z.verdict.keep_tuned;
  std::string html = render(r).html;
  EXPECT_NE(html.find("<p class=\"simulated\">SIMULATED: no GPU was measured"), std::string::npos);
  EXPECT_NE(html.find("data-series=\"t tuned (written)\" data-points=\"" + std::to_string(kept) + "\""), std::string::npos);
  EXPECT_NE(html.find("data-series=\"t not faster (default kept)\" data-points=\"" + std::to_string(verified - kept) + "\""),
            std::string::npos);
  EXPECT_NE(html.find("NCCL default (1.0)"), std::string::npos);
}

TEST(ReportGolden, ClusterAndRdmaFromRealRuns) {
  Report r;
  for (const char* f : {"cluster-runs/vm5-slow-node.json", "cluster-runs/mpirun4-port-down.json",
                        "cluster-runs/mpirun4-mtu.json", "rdma-vm/write-bw-64k.client.json",
                        "rdma-vm/send-bw-64k.client.json", "rdma-vm/read-bw-4k-64k-2qp.client.json",
                        "rdma-vm/write-bw-bidir-2qp.client.json", "rdma-vm/write-lat-8.client.json",
                        "rdma-vm/link-down.client.json"})
    r.inputs.push_back(input_from_json_text(f, slurp(fabscope::testing::fixture(f))));
  compare("cluster-rdma", r);
}

// SYNTHETIC /metrics of two nodes of a running job in the exporter's layout (tests/fixtures/job-synthetic).
TEST(ReportGolden, JobSynthetic) {
  Report r;
  for (const char* node : {"gpu-a", "gpu-b"})
    r.inputs.push_back(input_from_job_text(std::string(node) + ".prom", node,
                                           slurp(fabscope::testing::fixture("job-synthetic") / (std::string(node) + ".prom"))));
  compare("job-synthetic", r);
}

TEST(ReportGolden, BenchOnly) {
  Report r;
  r.inputs.push_back(json_input("bench/h200x2-all_reduce.json", "h200x2-all_reduce.json"));
  compare("bench-only", r);
}

TEST(ReportGolden, CheckWithoutFindings) {
  auto j = fabscope::json::parse(slurp(src("tests/golden/check/h200x2-node.json")));
  j["findings"] = fabscope::json::array();
  j["summary"] = {{"fail", 0}, {"warn", 0}, {"info", 0}, {"worst", "ok"}};
  Report r;
  r.inputs.push_back(input_from_json("clean.json", j));
  compare("check-clean", r);
}

TEST(ReportRender, EveryPointHasATitleAndPointsMatchSizes) {
  Report r;
  r.inputs.push_back(json_input("bench/h200x2-all_reduce.json", "h200x2.json"));
  std::string html = render(r).html;
  // 5 sizes, out-of-place and in-place, on the bandwidth and the time plot.
  std::regex pt(R"(class="pt"[^>]*><title>)");
  auto n = std::distance(std::sregex_iterator(html.begin(), html.end(), pt), std::sregex_iterator());
  EXPECT_EQ(n, 20);
  EXPECT_NE(html.find("data-series=\"h200x2 out-of-place\" data-points=\"5\""), std::string::npos);
  EXPECT_NE(html.find("NVLink limit 450 GB/s"), std::string::npos);
}

TEST(ReportRender, BenchCycles_AreOneCurveEach) {
  auto j = fabscope::json::parse(slurp(src("tests/golden/bench/h200x2-all_reduce.json")));
  auto again = j["results"];
  for (auto& r : again) r["cycle"] = 1;
  for (auto& r : again) j["results"].push_back(r);
  Report r;
  r.inputs.push_back(input_from_json("n2.json", j));
  std::string html = render(r).html;
  EXPECT_NE(html.find("data-series=\"n2 cycle 0 out-of-place\" data-points=\"5\""), std::string::npos);
  EXPECT_NE(html.find("data-series=\"n2 cycle 1 in-place\" data-points=\"5\""), std::string::npos);
}

TEST(ReportRender, NoNetworkReference) {
  Report r;
  r.inputs.push_back(json_input("bench/h200x2-all_reduce.json", "h200x2.json"));
  r.inputs.push_back(json_input("check/rxe-vm.json", "rxe.json"));
  std::string html = render(r).html;
  // Only the SVG namespace URI and the findings' documentation links (followed only when clicked)
  // may look like a URL; nothing is loaded from anywhere.
  std::string stripped = std::regex_replace(html, std::regex(R"(xmlns="http://www\.w3\.org/2000/svg")"), "");
  for (auto p = stripped.find("href=\"" + default_docs_url()); p != std::string::npos;
       p = stripped.find("href=\"" + default_docs_url()))
    stripped.erase(p + 6, default_docs_url().size());
  EXPECT_EQ(stripped.find("http"), std::string::npos);
  EXPECT_EQ(stripped.find("<script"), std::string::npos);
  EXPECT_EQ(stripped.find("<link"), std::string::npos);
  EXPECT_EQ(stripped.find("@import"), std::string::npos);
  EXPECT_EQ(stripped.find("url("), std::string::npos);
}

TEST(ReportRender, TextFromInputsIsEscaped) {
  auto j = fabscope::json::parse(slurp(src("tests/golden/check/rxe-vm.json")));
  j["hostname"] = "<script>alert(1)</script>";
  j["findings"][0]["evidence"] = "a=\"<b>\" & c";
  Report r;
  r.inputs.push_back(input_from_json("x.json", j));
  std::string html = render(r).html;
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("a=&quot;&lt;b&gt;&quot; &amp; c"), std::string::npos);
}

TEST(ReportRender, DocsUrl_PrefixesFindingLinks) {
  Report r;
  r.docs_url = "https://example.org/fabscope/";
  r.inputs.push_back(json_input("check/rxe-vm.json", "rxe.json"));
  std::string html = render(r).html;
  EXPECT_NE(html.find("href=\"https://example.org/fabscope/docs/checks.md#os-memlock_limited\""), std::string::npos);
}

namespace {

// Every href="..." in the page.
std::vector<std::string> hrefs(const std::string& html) {
  static const std::regex href(R"(href\s*=\s*"([^"]*)\")", std::regex::icase);
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), href); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

}  // namespace

// A finding's docs string comes from the input file: only a relative path into the docs (with the
// --docs-url prefix) becomes a link; a script, data or external URL is shown as text.
TEST(ReportRender, DocsThatAreNotADocsPathAreNeverLinks) {
  auto j = fabscope::json::parse(slurp(src("tests/golden/check/rxe-vm.json")));
  ASSERT_GE(j["findings"].size(), 1u);
  const std::vector<std::string> hostile = {
      "javascript:alert(document.domain)", " JavaScript:alert(1)", "data:text/html;base64,PHNjcmlwdD4=",
      "vbscript:msgbox(1)", "https://evil.example/x", "//evil.example/x", "docs/../../etc/passwd",
      "docs/checks.md#x\" onclick=\"alert(1)", "/docs/checks.md#a", "docs/checks.md#a#b", "docs/x.html"};
  auto base = j["findings"][0];
  j["findings"] = fabscope::json::array();
  for (const auto& d : hostile) {
    auto f = base;
    f["docs"] = d;
    j["findings"].push_back(f);
  }
  for (const std::string url : {"", "https://example.org/fabscope/"}) {
    Report r;
    r.docs_url = url;
    r.inputs.push_back(input_from_json("x.json", j));
    const std::string html = render(r).html;
    const std::string base = url.empty() ? default_docs_url() : url;
    for (const auto& h : hrefs(html)) {
      const bool internal = h.starts_with("#");
      const bool docs = h.starts_with(base + "docs/") && docs_path_is_linkable(h.substr(base.size()));
      EXPECT_TRUE(internal || docs) << "link to " << h;
    }
    EXPECT_EQ(html.find("href=\"javascript"), std::string::npos);
    // Shown as text instead, escaped.
    EXPECT_NE(html.find("docs: javascript:alert(document.domain)"), std::string::npos);
    EXPECT_NE(html.find("docs: docs/checks.md#x&quot; onclick=&quot;alert(1)"), std::string::npos);
  }
}

TEST(ReportRender, DocsPathsThatAreLinks) {
  EXPECT_TRUE(docs_path_is_linkable("docs/checks.md#link-port_down"));
  EXPECT_TRUE(docs_path_is_linkable("docs/ncclenv.md#env-syntax"));
  EXPECT_TRUE(docs_path_is_linkable("docs/rdma.md"));
  EXPECT_FALSE(docs_path_is_linkable(""));
  EXPECT_FALSE(docs_path_is_linkable("docs/.md"));
  EXPECT_FALSE(docs_path_is_linkable("docs//evil.example/x.md"));
  EXPECT_FALSE(docs_path_is_linkable("docs/checks.md#a:b"));
}

TEST(ReportRender, DocsUrlIsChecked) {
  for (const std::string ok : {"", "https://example.org/fabscope/", "http://x/", "file:///usr/share/doc/fabscope/",
                               "../", "/srv/fabscope/"})
    EXPECT_NO_THROW(check_docs_url(ok)) << ok;
  for (const std::string bad : {"javascript:alert(1)//", "data:text/html,x/", "https://example.org/fabscope",
                                "https://example.org/\"onmouseover=x/", "https://e.org/a b/", "https:evil/",
                                "https://e.org/?q=/"})
    EXPECT_THROW(check_docs_url(bad), fabscope::UsageError) << bad;
}
